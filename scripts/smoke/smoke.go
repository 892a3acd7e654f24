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
	// Invoke calls a function (by its folder name under functions/) with a
	// raw JSON event and returns its JSON result: the self-checks and
	// dlqredrive's commands go through it.
	Invoke func(ctx context.Context, function string, event []byte) ([]byte, error)
	// SendDLQ puts one message on saga-commands-dlq, as the queue does
	// with a message that failed its receives, and returns its message id.
	// Nil fails the dead-letter step unless SkipDLQ is set.
	SendDLQ func(ctx context.Context, body string, attrs map[string]string) (string, error)
	// SkipDLQ skips the dead-letter step, saying so in the log.
	SkipDLQ bool
	Log     io.Writer
	HTTP    *http.Client
}

// Functions are the five functions whose self-checks the smoke runs.
var Functions = []string{"orderapi", "outboxrelay", "sagaadvancer", "sagarecovery", "dlqredrive"}

// Run is the whole smoke test: every step must pass, the first failure ends
// it. It changes the stand only by setting the stock of c.SKU, creating one
// order (confirmed and paid through the configured payment provider) and
// driving one dead letter (a saga command for a saga that does not exist,
// which the advancer acknowledges when it is redriven) through the
// dead-letter path, where it stays as a redriven entry.
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

	// 0. Every function's self-check, with its own service account.
	for _, fn := range Functions {
		detail, err := c.selfCheck(ctx, fn)
		if err != nil {
			return err
		}
		step("self-check %s: %s", fn, detail)
	}

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

	// 5. The dead-letter path: a message on saga-commands-dlq is ingested
	// into the dead-letter store and redriven to saga-commands.
	if c.SkipDLQ {
		step("DEAD-LETTER PATH SKIPPED (-skip-dlq): nothing has proven that dead letters reach an operator")
	} else if err := c.deadLetterPath(ctx, step); err != nil {
		return err
	}

	// 6. dlqredrive stats through the console path; the dead-letter
	// queue's depth must be readable (not_ingested).
	res, err := c.Invoke(ctx, "dlqredrive", []byte(`{"action":"stats"}`))
	if err != nil {
		return fmt.Errorf("dlqredrive stats: %w", err)
	}
	var stats struct {
		Total       *int           `json:"total"`
		ByStatus    map[string]int `json:"by_status"`
		NotIngested map[string]int `json:"not_ingested"`
	}
	if err := json.Unmarshal(res, &stats); err != nil || stats.Total == nil {
		return fmt.Errorf("dlqredrive stats: not a stats report: %s", res)
	}
	n, ok := stats.NotIngested[dlqName]
	if !ok {
		return fmt.Errorf("dlqredrive stats: no not_ingested count for %s: dlqredrive cannot read the dead-letter queue's depth "+
			"(its log says why: \"dead-letter queue depth unavailable\"); check SAGA_COMMANDS_DLQ_URL and the function's key (ymq.reader): %s", dlqName, res)
	}
	step("dlqredrive stats: %d dead letters (%v), %d not yet ingested from %s", *stats.Total, stats.ByStatus, n, dlqName)
	step("PASS")
	return nil
}

// dlqName is the dead-letter queue of saga-commands (triggers.yaml).
const dlqName = "saga-commands-dlq"

// selfCheck invokes fn with the self-check event and returns a summary, or
// an error naming the failed lines and the first fix.
func (c Config) selfCheck(ctx context.Context, fn string) (string, error) {
	raw, err := c.Invoke(ctx, fn, []byte(`{"action":"selfcheck"}`))
	if err != nil {
		return "", fmt.Errorf("self-check %s: %w", fn, err)
	}
	var rep struct {
		Action  string `json:"action"`
		Verdict string `json:"verdict"`
		Checks  []struct {
			Check, Verdict, Detail, Fix string
		} `json:"checks"`
	}
	if err := json.Unmarshal(raw, &rep); err != nil || rep.Action != "selfcheck" {
		return "", fmt.Errorf("self-check %s: not a self-check report (is the deployed code older than the self-check?): %.300s", fn, raw)
	}
	var failed, warned []string
	fix := ""
	for _, l := range rep.Checks {
		switch l.Verdict {
		case "FAIL":
			failed = append(failed, l.Check+": "+l.Detail)
			if fix == "" {
				fix = l.Fix
			}
		case "WARN":
			warned = append(warned, l.Check+": "+l.Detail)
		}
	}
	if rep.Verdict != "PASS" && rep.Verdict != "WARN" || len(failed) > 0 {
		return "", fmt.Errorf("self-check %s: %s FAIL; fix: %s", fn, strings.Join(failed, "; "), fix)
	}
	summary := fmt.Sprintf("%s (%d checks)", rep.Verdict, len(rep.Checks))
	if len(warned) > 0 {
		summary += " — " + strings.Join(warned, "; ")
	}
	return summary, nil
}

// deadLetterPath sends a saga command for a saga that does not exist to
// saga-commands-dlq, has dlqredrive ingest it, finds its entry, redrives
// it, and checks the entry says so. Every failure is the smoke's failure.
func (c Config) deadLetterPath(ctx context.Context, step func(string, ...any)) error {
	if c.SendDLQ == nil {
		return errors.New("dead-letter path: no way to send to " + dlqName + " (give -dlq-url and the operator's static key, or -skip-dlq)")
	}
	id := "smoke-dlq-" + randomHex(6)
	body := fmt.Sprintf(`{"saga_id":%q,"reason":"smoke"}`, id)
	msgID, err := c.SendDLQ(ctx, body, map[string]string{"event_id": id, "event_type": "saga.advance", "correlation_id": id})
	if err != nil {
		return fmt.Errorf("dead-letter path: send to %s: %w", dlqName, err)
	}
	step("dead letter: message %s on %s", msgID, dlqName)
	var entryID string
	deadline := time.Now().Add(c.Deadline)
	for entryID == "" {
		res, err := c.Invoke(ctx, "dlqredrive", []byte(`{"action":"ingest","actor":"smoke"}`))
		if err != nil {
			return fmt.Errorf("dead-letter path: dlqredrive ingest: %w", err)
		}
		var ing struct {
			Action string          `json:"action"`
			Error  json.RawMessage `json:"error"`
		}
		if err := json.Unmarshal(res, &ing); err != nil || ing.Error != nil || ing.Action != "ingest" {
			return fmt.Errorf("dead-letter path: dlqredrive ingest failed (ingestion failures are failures here): %s", res)
		}
		res, err = c.Invoke(ctx, "dlqredrive", []byte(`{"action":"list","source":"queue","limit":100}`))
		if err != nil {
			return fmt.Errorf("dead-letter path: dlqredrive list: %w", err)
		}
		var list struct {
			Entries []struct {
				ID        string `json:"id"`
				SourceRef string `json:"source_ref"`
				Status    string `json:"status"`
			} `json:"entries"`
		}
		if err := json.Unmarshal(res, &list); err != nil {
			return fmt.Errorf("dead-letter path: dlqredrive list: not a list: %s", res)
		}
		for _, e := range list.Entries {
			if e.SourceRef == msgID {
				entryID = e.ID
			}
		}
		if entryID != "" {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("dead-letter path: message %s was not ingested within %s: the ingestion (sagarecovery's timer, dlqredrive's ingest) cannot read %s; check its log and SAGA_COMMANDS_DLQ_URL", msgID, c.Deadline, dlqName)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
	step("dead letter: ingested as entry %s", entryID)
	res, err := c.Invoke(ctx, "dlqredrive", []byte(fmt.Sprintf(`{"action":"redrive","ids":[%q],"actor":"smoke","reason":"smoke test of the dead-letter path"}`, entryID)))
	if err != nil {
		return fmt.Errorf("dead-letter path: dlqredrive redrive: %w", err)
	}
	var rd struct {
		Redriven int `json:"redriven"`
	}
	if err := json.Unmarshal(res, &rd); err != nil || rd.Redriven != 1 {
		return fmt.Errorf("dead-letter path: redrive of %s did not redrive it: %s", entryID, res)
	}
	res, err = c.Invoke(ctx, "dlqredrive", []byte(fmt.Sprintf(`{"action":"show","ids":[%q]}`, entryID)))
	if err != nil {
		return fmt.Errorf("dead-letter path: dlqredrive show: %w", err)
	}
	var shown struct {
		Status       string `json:"status"`
		RedriveCount int    `json:"redrive_count"`
	}
	if err := json.Unmarshal(res, &shown); err != nil || shown.Status != "redriven" || shown.RedriveCount != 1 {
		return fmt.Errorf("dead-letter path: entry %s after its redrive: %s", entryID, res)
	}
	step("dead letter: redriven to saga-commands (entry %s: %s)", entryID, shown.Status)
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
// raw event to <base>/<function> (base http://127.0.0.1:8080/_invoke).
func HTTPInvoker(client *http.Client, base string) func(context.Context, string, []byte) ([]byte, error) {
	return func(ctx context.Context, function string, event []byte) ([]byte, error) {
		url := strings.TrimRight(base, "/") + "/" + function
		req, err := http.NewRequestWithContext(ctx, "POST", url, bytes.NewReader(event))
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

// HTTPSender sends to a queue the way the local runner exposes it: POST
// {"body", "attributes"} to url (http://127.0.0.1:8080/_queues/saga-commands-dlq).
func HTTPSender(client *http.Client, url string) func(context.Context, string, map[string]string) (string, error) {
	return func(ctx context.Context, body string, attrs map[string]string) (string, error) {
		in, _ := json.Marshal(map[string]any{"body": body, "attributes": attrs})
		req, err := http.NewRequestWithContext(ctx, "POST", url, bytes.NewReader(in))
		if err != nil {
			return "", err
		}
		resp, err := client.Do(req)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		var out struct {
			MessageID string `json:"message_id"`
		}
		if resp.StatusCode != http.StatusOK || json.Unmarshal(b, &out) != nil || out.MessageID == "" {
			return "", fmt.Errorf("POST %s = %d: %s", url, resp.StatusCode, b)
		}
		return out.MessageID, nil
	}
}

// YCInvoker calls a cloud function with `yc serverless function invoke <id>
// -d <event>` (platform-notes §1.9: a POST with ?integration=raw, tag
// $latest); ids maps function names to ids (terraform output -json
// function_ids). yc prints the function's result on stdout; a function
// error is {"errorMessage": ..., "errorType": ...}.
func YCInvoker(yc string, ids map[string]string) func(context.Context, string, []byte) ([]byte, error) {
	return func(ctx context.Context, function string, event []byte) ([]byte, error) {
		functionID := ids[function]
		if functionID == "" {
			return nil, fmt.Errorf("no function id for %s (terraform output -json function_ids)", function)
		}
		cmd := exec.CommandContext(ctx, yc, "serverless", "function", "invoke", functionID, "-d", string(event))
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
			return nil, fmt.Errorf("%s failed: %s: %s", function, fe.ErrorType, fe.ErrorMessage)
		}
		return out, nil
	}
}
