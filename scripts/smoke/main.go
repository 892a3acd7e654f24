// Command smoke proves a deployed ordersaga stand works end to end:
//
//	go run ./scripts/smoke -base-url https://<gateway domain> -jwt "$USER_JWT" -admin-token "$ADMIN_JWT" \
//	    -function-ids "$(terraform -chdir=terraform output -json function_ids)" \
//	    -dlq-url <saga-commands-dlq URL>                   # the cloud (yc serverless function invoke)
//	go run ./scripts/smoke -base-url http://127.0.0.1:8080 -jwt dev-user -admin-token dev-admin \
//	    -invoke-url http://127.0.0.1:8080/_invoke -dlq-url http://127.0.0.1:8080/_queues/saga-commands-dlq  # the local runner
//
// Steps, each of which must pass: every function's self-check ({"action":
// "selfcheck"}), PUT and GET /admin/stock (the smoke SKU gets stock), POST
// /orders with a fresh Idempotency-Key (201), its replay (201,
// Idempotent-Replayed: true, the same body), the order reaching CONFIRMED
// before -timeout, one dead letter driven through the dead-letter path
// (sent to saga-commands-dlq, ingested by dlqredrive, found in its list,
// redriven, shown as redriven), and dlqredrive's stats, whose not_ingested
// must count saga-commands-dlq (a depth dlqredrive cannot read is a
// failure, not a warning). Functions are invoked through `yc serverless
// function invoke` (locally: the runner's POST /_invoke/<function>). In the
// cloud the dead letter is sent with the ymq adapter and the operator's
// static key (YMQ_ACCESS_KEY_ID, YMQ_SECRET_ACCESS_KEY, as for
// scripts/preflight); locally through the runner's POST /_queues/<queue>.
//
// Every flag has an environment variable: SMOKE_BASE_URL, SMOKE_JWT,
// SMOKE_ADMIN_TOKEN, SMOKE_FUNCTION_IDS, SMOKE_INVOKE_URL, SMOKE_DLQ_URL,
// SMOKE_YC, SMOKE_TIMEOUT, SMOKE_SKU. scripts/deploy.sh runs it after every
// apply; docs/deploy.md says how to get the JWTs from the configured issuer.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"strings"
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
	fnIDs := fs.String("function-ids", env("SMOKE_FUNCTION_IDS", ""), "JSON {name: id} of the functions, invoked with yc (terraform output -json function_ids)")
	invokeURL := fs.String("invoke-url", env("SMOKE_INVOKE_URL", ""), "instead of yc: POST events to <url>/<function> (the local runner's http://127.0.0.1:8080/_invoke)")
	dlqURL := fs.String("dlq-url", env("SMOKE_DLQ_URL", ""), "saga-commands-dlq: its Message Queue URL (terraform output -json queue_urls), or the local runner's http://127.0.0.1:8080/_queues/saga-commands-dlq")
	skipDLQ := fs.Bool("skip-dlq", false, "skip the dead-letter path (says so loudly)")
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
	c := Config{BaseURL: *base, UserToken: *jwt, AdminToken: *admin, Deadline: *timeout, SKU: *sku, Log: os.Stdout, HTTP: client, SkipDLQ: *skipDLQ}
	switch {
	case *invokeURL != "":
		c.Invoke = HTTPInvoker(client, *invokeURL)
	case *fnIDs != "":
		var ids map[string]string
		if err := json.Unmarshal([]byte(*fnIDs), &ids); err != nil {
			return fmt.Errorf("-function-ids is not a JSON object of names to ids: %v", err)
		}
		c.Invoke = YCInvoker(*yc, ids)
	default:
		return fmt.Errorf("give -function-ids (cloud) or -invoke-url (local runner)")
	}
	switch {
	case *dlqURL == "":
	case strings.Contains(*dlqURL, "/_queues/"):
		c.SendDLQ = HTTPSender(client, *dlqURL)
	default:
		send, err := YMQSender(*dlqURL)
		if err != nil {
			return err
		}
		c.SendDLQ = send
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
