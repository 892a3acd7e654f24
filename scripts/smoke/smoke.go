package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"reflect"
	"strings"
	"time"
)

// Config is what one smoke run needs.
type Config struct {
	BaseURL    string        // API root: the gateway's https://<domain>, or the local runner's http://127.0.0.1:8080
	UserToken  string        // bearer token of a caller with role user (a JWT from the configured issuer)
	AdminToken string        // bearer token of a caller with role admin (a JWT whose role claim is admin)
	Deadline   time.Duration // how long the order may take to reach CONFIRMED
	SKU        string        // SKU the smoke order buys; its stock is set first through the admin route
	// Invoke calls dlqredrive with a raw JSON command and returns its JSON result.
	Invoke func(ctx context.Context, command []byte) ([]byte, error)
	Log    io.Writer
	HTTP   *http.Client
}

// Run is the whole smoke test: every step must pass, the first failure ends
// it. It changes the stand only by setting the stock of c.SKU and creating
// one order (confirmed and paid through the configured payment provider).
func Run(ctx context.Context, c Config) error {
	if c.BaseURL == "" || c.UserToken == "" || c.AdminToken == "" || c.Invoke == nil {
		return errors.New("smoke: base URL, user token, admin token and a dlqredrive invoker are all required")
	}
	if c.HTTP == nil {
		c.HTTP = &http.Client{Timeout: 30 * time.Second}
	}
	if c.Log == nil {
		c.Log = io.Discard
	}
	if c.Deadline <= 0 {
		c.Deadline = 2 * time.Minute
	}
	if c.SKU == "" {
		c.SKU = "smoke-sku"
	}
	base := strings.TrimRight(c.BaseURL, "/")
	step := func(format string, args ...any) { fmt.Fprintf(c.Log, "smoke: "+format+"\n", args...) }

	// 1. The admin stock route: give the smoke SKU stock, then read it back.
	st, body, _, err := c.do(ctx, "PUT", base+"/admin/stock/"+c.SKU, c.AdminToken, "", `{"available":1000}`)
	if err != nil {
		return err
	}
	if st != http.StatusOK {
		return fmt.Errorf("PUT /admin/stock/%s = %d, want 200: %s", c.SKU, st, body)
	}
	st, body, _, err = c.do(ctx, "GET", base+"/admin/stock", c.AdminToken, "", "")
	if err != nil {
		return err
	}
	if st != http.StatusOK || !bytes.Contains(body, []byte(`"sku":"`+c.SKU+`"`)) {
		return fmt.Errorf("GET /admin/stock = %d, want 200 listing %s: %s", st, c.SKU, body)
	}
	step("admin stock route: %s has stock", c.SKU)

	// 2. POST /orders with a fresh Idempotency-Key.
	key := "smoke-" + randomHex(8)
	order := fmt.Sprintf(`{"customer_id":"smoke","currency":"RUB","items":[{"sku":%q,"quantity":1,"unit_price_minor":100}]}`, c.SKU)
	st, first, hdr, err := c.do(ctx, "POST", base+"/orders", c.UserToken, key, order)
	if err != nil {
		return err
	}
	if st != http.StatusCreated {
		return fmt.Errorf("POST /orders = %d, want 201: %s", st, first)
	}
	if hdr.Get("Idempotent-Replayed") != "" {
		return fmt.Errorf("POST /orders with a new key answered Idempotent-Replayed: %s", hdr.Get("Idempotent-Replayed"))
	}
	var created struct {
		ID     string `json:"id"`
		Status string `json:"status"`
	}
	if err := json.Unmarshal(first, &created); err != nil || created.ID == "" {
		return fmt.Errorf("POST /orders: no order id in %s", first)
	}
	step("POST /orders: order %s (%s), key %s", created.ID, created.Status, key)

	// 3. The replay: same key, same body → the stored response.
	st, replay, hdr, err := c.do(ctx, "POST", base+"/orders", c.UserToken, key, order)
	if err != nil {
		return err
	}
	if st != http.StatusCreated || hdr.Get("Idempotent-Replayed") != "true" {
		return fmt.Errorf("replay of POST /orders = %d with Idempotent-Replayed %q, want 201 and true: %s", st, hdr.Get("Idempotent-Replayed"), replay)
	}
	if !sameJSON(first, replay) {
		return fmt.Errorf("replay body differs from the first response:\n first: %s\nreplay: %s", first, replay)
	}
	step("replay: 201, Idempotent-Replayed: true, same body")

	// 4. The saga carries the order to CONFIRMED.
	deadline := time.Now().Add(c.Deadline)
	last := ""
	for {
		st, body, _, err := c.do(ctx, "GET", base+"/orders/"+created.ID, c.UserToken, "", "")
		if err != nil {
			return err
		}
		if st != http.StatusOK {
			return fmt.Errorf("GET /orders/%s = %d, want 200: %s", created.ID, st, body)
		}
		var o struct {
			Status string `json:"status"`
		}
		_ = json.Unmarshal(body, &o)
		if o.Status != last {
			step("order %s: %s", created.ID, o.Status)
			last = o.Status
		}
		if o.Status == "CONFIRMED" {
			break
		}
		if o.Status == "CANCELLED" || o.Status == "FAILED" {
			return fmt.Errorf("order %s ended %s, want CONFIRMED: %s", created.ID, o.Status, body)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("order %s is still %s after %s, want CONFIRMED (are the triggers firing? see docs/deploy.md, runbook)", created.ID, o.Status, c.Deadline)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}

	// 5. dlqredrive stats through the console path.
	res, err := c.Invoke(ctx, []byte(`{"action":"stats"}`))
	if err != nil {
		return fmt.Errorf("dlqredrive stats: %w", err)
	}
	var stats struct {
		Total    *int           `json:"total"`
		ByStatus map[string]int `json:"by_status"`
	}
	if err := json.Unmarshal(res, &stats); err != nil || stats.Total == nil {
		return fmt.Errorf("dlqredrive stats: not a stats report: %s", res)
	}
	step("dlqredrive stats: %d dead letters (%v)", *stats.Total, stats.ByStatus)
	step("PASS")
	return nil
}

// do sends one request and returns status, body and headers.
func (c Config) do(ctx context.Context, method, url, token, key, body string) (int, []byte, http.Header, error) {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return 0, nil, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return 0, nil, nil, fmt.Errorf("%s %s: %w", method, url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, b, resp.Header, err
}

// sameJSON reports whether a and b are the same JSON value.
func sameJSON(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return bytes.Equal(a, b)
	}
	return reflect.DeepEqual(x, y)
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// HTTPInvoker calls a function the way the local runner exposes it: POST the
// raw event to url (http://127.0.0.1:8080/_invoke/dlqredrive).
func HTTPInvoker(client *http.Client, url string) func(context.Context, []byte) ([]byte, error) {
	return func(ctx context.Context, command []byte) ([]byte, error) {
		req, err := http.NewRequestWithContext(ctx, "POST", url, bytes.NewReader(command))
		if err != nil {
			return nil, err
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
		if err != nil {
			return nil, err
		}
		if resp.StatusCode != http.StatusOK {
			return nil, fmt.Errorf("POST %s = %d: %s", url, resp.StatusCode, b)
		}
		return b, nil
	}
}

// YCInvoker calls a cloud function with `yc serverless function invoke <id>
// -d <command>` (platform-notes §1.9: a POST with ?integration=raw, tag
// $latest). yc prints the function's result on stdout; a function error is
// {"errorMessage": ..., "errorType": ...}.
func YCInvoker(yc, functionID string) func(context.Context, []byte) ([]byte, error) {
	return func(ctx context.Context, command []byte) ([]byte, error) {
		cmd := exec.CommandContext(ctx, yc, "serverless", "function", "invoke", functionID, "-d", string(command))
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			return nil, fmt.Errorf("%s serverless function invoke %s: %v\n%s", yc, functionID, err, strings.TrimSpace(stderr.String()))
		}
		out := bytes.TrimSpace(stdout.Bytes())
		var fe struct {
			ErrorMessage string `json:"errorMessage"`
			ErrorType    string `json:"errorType"`
		}
		if json.Unmarshal(out, &fe) == nil && fe.ErrorType != "" {
			return nil, fmt.Errorf("dlqredrive failed: %s: %s", fe.ErrorType, fe.ErrorMessage)
		}
		return out, nil
	}
}
