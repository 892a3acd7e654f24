// Command smoke proves a deployed ordersaga stand works end to end:
//
//	go run ./scripts/smoke -base-url https://<gateway domain> -jwt "$USER_JWT" -admin-token "$ADMIN_JWT" \
//	    -dlqredrive-id <function id>                       # the cloud (yc serverless function invoke)
//	go run ./scripts/smoke -base-url http://127.0.0.1:8080 -jwt dev-user -admin-token dev-admin \
//	    -invoke-url http://127.0.0.1:8080/_invoke/dlqredrive  # the local runner
//
// Steps, each of which must pass: PUT and GET /admin/stock (the smoke SKU
// gets stock), POST /orders with a fresh Idempotency-Key (201), its replay
// (201, Idempotent-Replayed: true, the same body), the order reaching
// CONFIRMED before -timeout, and dlqredrive's stats through `yc serverless
// function invoke` (locally: the runner's POST /_invoke/dlqredrive).
//
// Every flag has an environment variable: SMOKE_BASE_URL, SMOKE_JWT,
// SMOKE_ADMIN_TOKEN, SMOKE_DLQREDRIVE_ID, SMOKE_INVOKE_URL, SMOKE_YC,
// SMOKE_TIMEOUT, SMOKE_SKU. scripts/deploy.sh runs it after every apply;
// docs/deploy.md says how to get the JWTs from the configured issuer.
package main

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"time"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "smoke: FAIL:", err)
		os.Exit(1)
	}
}

func env(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func run(args []string) error {
	fs := flag.NewFlagSet("smoke", flag.ContinueOnError)
	base := fs.String("base-url", env("SMOKE_BASE_URL", ""), "API root URL (terraform output -raw api_url)")
	jwt := fs.String("jwt", env("SMOKE_JWT", ""), "bearer token of a caller with role user (a JWT from the configured issuer; locally dev-user)")
	admin := fs.String("admin-token", env("SMOKE_ADMIN_TOKEN", ""), "bearer token of a caller with role admin (locally dev-admin)")
	fnID := fs.String("dlqredrive-id", env("SMOKE_DLQREDRIVE_ID", ""), "dlqredrive's function ID, invoked with yc (terraform output -json function_ids)")
	invokeURL := fs.String("invoke-url", env("SMOKE_INVOKE_URL", ""), "instead of yc: POST dlqredrive commands to this URL (the local runner's /_invoke/dlqredrive)")
	yc := fs.String("yc", env("SMOKE_YC", "yc"), "yc CLI to invoke dlqredrive with")
	timeout := fs.Duration("timeout", envDuration("SMOKE_TIMEOUT", 2*time.Minute), "how long the order may take to reach CONFIRMED")
	sku := fs.String("sku", env("SMOKE_SKU", "smoke-sku"), "SKU of the smoke order (its stock is set to 1000)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	client := &http.Client{Timeout: 30 * time.Second}
	c := Config{BaseURL: *base, UserToken: *jwt, AdminToken: *admin, Deadline: *timeout, SKU: *sku, Log: os.Stdout, HTTP: client}
	switch {
	case *invokeURL != "":
		c.Invoke = HTTPInvoker(client, *invokeURL)
	case *fnID != "":
		c.Invoke = YCInvoker(*yc, *fnID)
	default:
		return fmt.Errorf("give -dlqredrive-id (cloud) or -invoke-url (local runner)")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	return Run(ctx, c)
}

func envDuration(name string, def time.Duration) time.Duration {
	if d, err := time.ParseDuration(os.Getenv(name)); err == nil {
		return d
	}
	return def
}
