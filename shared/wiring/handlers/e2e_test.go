package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"ordersaga/shared/app/orchestrator"
	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/queue"
	"ordersaga/shared/domain/saga"
	"ordersaga/shared/kit/config"
	"ordersaga/shared/transport/yc"
	"ordersaga/shared/wiring/app"
	"ordersaga/shared/wiring/localwiring"
	"ordersaga/shared/wiring/triggers"
)

// suite is the whole product in one process, as the local runner wires it:
// the API behind a real HTTP server, the embedded queue, and the function
// bodies invoked with the exact envelopes the triggers send.
type suite struct {
	t     *testing.T
	app   *app.App
	ports app.Ports // the local adapters: the trigger emulation uses the queue
	srv   *httptest.Server
	// faults are what the advancer's step table injects (injectFaults).
	faults atomic.Pointer[orchestrator.Faults]
}

func newSuite(t *testing.T, mutate func(*config.Config)) *suite {
	t.Helper()
	return newSuiteWith(t, mutate, nil)
}

// newSuiteWith is newSuite whose ports pass through decorate first.
func newSuiteWith(t *testing.T, mutate func(*config.Config), decorate func(*app.Ports), advancer ...func(*orchestrator.AdvancerConfig)) *suite {
	t.Helper()
	cfg := config.Default()
	cfg.SQLitePath = filepath.Join(t.TempDir(), "e2e.db")
	cfg.QueueSQLite = cfg.SQLitePath
	cfg.LogLevel = "error"
	cfg.Metrics = "prometheus"
	if mutate != nil {
		mutate(&cfg)
	}
	s := &suite{t: t}
	open := func(ctx context.Context, cfg config.Config, env app.Env) (app.Ports, error) {
		p, err := localwiring.Open(ctx, cfg, env)
		if err == nil && decorate != nil {
			decorate(&p)
		}
		s.ports = p
		return p, err
	}
	// The advancer's step table asks the suite's faults (injectFaults),
	// none until a test sets them.
	opt := app.Options{Advancer: func(c *orchestrator.AdvancerConfig) {
		c.Steps = orchestrator.InjectFaults(c.Steps, orchestrator.Faults{
			Fail: func(ctx context.Context, at orchestrator.FaultPoint) error {
				if f := s.faults.Load(); f != nil && f.Fail != nil {
					return f.Fail(ctx, at)
				}
				return nil
			},
			CrashAfter: func(ctx context.Context, at orchestrator.FaultPoint) error {
				if f := s.faults.Load(); f != nil && f.CrashAfter != nil {
					return f.CrashAfter(ctx, at)
				}
				return nil
			},
		})
		for _, change := range advancer {
			change(c)
		}
	}}
	a, err := app.New(context.Background(), cfg, open, opt)
	if err != nil {
		t.Fatal(err)
	}
	s.app = a
	tf, err := triggers.Load("../../../triggers/triggers.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := a.EnsureQueues(context.Background(), tf.Queues); err != nil {
		t.Fatal(err)
	}
	if err := a.Commands.Stock.Seed(context.Background(), map[string]int64{"sku-1": 100, "sku-out": 0}); err != nil {
		t.Fatal(err)
	}
	s.srv = newServer(a, s.ports)
	t.Cleanup(func() { s.srv.Close(); _ = a.Close() })
	return s
}

func (s *suite) post(key, body string) map[string]any {
	s.t.Helper()
	req, _ := http.NewRequest("POST", s.srv.URL+"/orders", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer dev-user")
	req.Header.Set("Idempotency-Key", key)
	req.Header.Set("Content-Type", "application/json")
	return s.send(req, 201)
}

func (s *suite) get(path string) map[string]any {
	s.t.Helper()
	req, _ := http.NewRequest("GET", s.srv.URL+path, nil)
	req.Header.Set("Authorization", "Bearer dev-user")
	return s.send(req, 200)
}

func (s *suite) send(req *http.Request, want int) map[string]any {
	s.t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		s.t.Fatalf("%s %s = %d: %s", req.Method, req.URL.Path, resp.StatusCode, b)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		s.t.Fatal(err)
	}
	return m
}

// pump behaves like the Message Queue trigger until the command queue is
// empty: receive a batch, invoke sagaadvancer with the trigger envelope,
// delete on success.
func (s *suite) pump() {
	s.t.Helper()
	ctx := context.Background()
	url := s.app.Config.QueueURLs.SagaCommands
	for i := 0; i < 1000; i++ {
		msgs, err := s.ports.Queue.Receive(ctx, url, queue.ReceiveOptions{Max: 10, VisibilityTimeout: time.Minute})
		if err != nil {
			s.t.Fatal(err)
		}
		if len(msgs) == 0 {
			return
		}
		env := make([]yc.QueueMessage, len(msgs))
		for j, m := range msgs {
			env[j] = yc.QueueMessage{MessageID: m.MessageID, Body: m.Body, MessageAttributes: m.Attributes, CreatedAt: m.SentAt}
		}
		raw, err := yc.EncodeQueue("yrn:yc:ymq:ru-central1:test:saga-commands", env)
		if err != nil {
			s.t.Fatal(err)
		}
		if _, err := Registry["sagaadvancer"](ctx, s.app, raw); err != nil {
			s.t.Fatalf("sagaadvancer: %v", err)
		}
		for _, m := range msgs {
			if err := s.ports.Queue.Delete(ctx, url, m.ReceiptHandle); err != nil {
				s.t.Fatal(err)
			}
		}
	}
	s.t.Fatal("the saga never went quiet")
}

// pumpUntil pumps the saga commands until done holds, waiting in real time
// for commands the advancer sent with a delay: a queue never delivers a
// message before its delay, which it counts in whole seconds.
func (s *suite) pumpUntil(within time.Duration, done func() bool) {
	s.t.Helper()
	deadline := time.Now().Add(within)
	for {
		s.pump()
		if done() {
			return
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("not done within %s", within)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func history(order map[string]any) []string {
	var out []string
	for _, h := range order["saga"].(map[string]any)["history"].([]any) {
		e := h.(map[string]any)
		out = append(out, e["step"].(string)+"/"+e["direction"].(string)+"/"+e["outcome"].(string))
	}
	return out
}

func TestOrderForStockedSKUIsConfirmed(t *testing.T) {
	s := newSuite(t, nil)
	o := s.post("e2e-1", `{"customer_id":"c-1","currency":"RUB","items":[{"sku":"sku-1","quantity":2,"unit_price_minor":1500}]}`)
	s.pump()
	got := s.get("/orders/" + o["id"].(string))
	if got["status"] != "CONFIRMED" || got["saga"].(map[string]any)["state"] != "completed" {
		t.Fatalf("order %v", got)
	}
	want := "create_order/forward/succeeded reserve_inventory/forward/succeeded process_payment/forward/succeeded confirm_order/forward/succeeded"
	if h := strings.Join(history(got), " "); h != want {
		t.Errorf("history %s", h)
	}
	corr := got["correlation"].(map[string]any)
	if corr["idempotency_key"] != "e2e-1" || corr["order_id"] != o["id"] || corr["saga_id"] == "" {
		t.Errorf("correlation %v", corr)
	}
	st, err := s.app.Commands.Stock.Get(context.Background(), "sku-1")
	if err != nil || st.Available != 98 {
		t.Errorf("stock %+v %v", st, err)
	}
}

func TestOrderForMissingStockIsCancelledWithCompensations(t *testing.T) {
	s := newSuite(t, nil)
	o := s.post("e2e-2", `{"customer_id":"c-1","currency":"RUB","items":[{"sku":"sku-out","quantity":1,"unit_price_minor":100}]}`)
	s.pump()
	got := s.get("/orders/" + o["id"].(string))
	if got["status"] != "CANCELLED" || got["saga"].(map[string]any)["state"] != "compensated" {
		t.Fatalf("order %v", got)
	}
	want := "create_order/forward/succeeded reserve_inventory/forward/failed cancel_order/compensate/succeeded"
	if h := strings.Join(history(got), " "); h != want {
		t.Errorf("history %s", h)
	}
}

func TestDeclinedPaymentReleasesStock(t *testing.T) {
	s := newSuite(t, nil)
	o := s.post("e2e-3", `{"customer_id":"c-1","currency":"RUB","items":[{"sku":"sku-1","quantity":1,"unit_price_minor":2000000}]}`)
	s.pump()
	got := s.get("/orders/" + o["id"].(string))
	if got["status"] != "CANCELLED" {
		t.Fatalf("order %v", got)
	}
	if st, _ := s.app.Commands.Stock.Get(context.Background(), "sku-1"); st.Available != 100 || st.Reserved != 0 {
		t.Errorf("stock not released: %+v", st)
	}
}

func TestMetricsAfterAnOrderCompletes(t *testing.T) {
	s := newSuite(t, nil)
	s.post("m-1", `{"customer_id":"c-1","currency":"RUB","items":[{"sku":"sku-1","quantity":1,"unit_price_minor":100}]}`)
	s.post("m-1", `{"customer_id":"c-1","currency":"RUB","items":[{"sku":"sku-1","quantity":1,"unit_price_minor":100}]}`)
	s.post("m-2", `{"customer_id":"c-1","currency":"RUB","items":[{"sku":"sku-out","quantity":1,"unit_price_minor":100}]}`)
	s.pump()
	if _, err := Registry["outboxrelay"](context.Background(), s.app, yc.EncodeTimer("t", "p", time.Now())); err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get(s.srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{
		`idempotency_requests_total{outcome="new"} 2`,
		`idempotency_requests_total{outcome="replayed"} 1`,
		`http_requests_total{route="POST /orders",status="201"} 3`,
		`saga_steps_total{direction="forward",status="succeeded",step="confirm_order"} 1`,
		`saga_steps_total{direction="forward",status="failed",step="reserve_inventory"} 1`,
		`compensations_total{status="succeeded",step="cancel_order"} 1`,
		`saga_duration_seconds_count{outcome="completed",saga_type="create_order"} 1`,
		`saga_duration_seconds_count{outcome="compensated",saga_type="create_order"} 1`,
		`outbox_pending 0`,
		`outbox_lag_seconds 0`,
		`queue_receives_total{queue="saga-commands"}`,
		`saga_messages_total{result="processed"}`,
		`retries_total{operation="payment.charge",result="success"} 1`,
	} {
		if !bytes.Contains(b, []byte(want)) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	if t.Failed() {
		t.Logf("metrics:\n%s", grep(b, "ordersaga|saga_|outbox|idempotency|http_requests_total|retries|compens"))
	}
}

func grep(b []byte, words string) string {
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		for _, w := range strings.Split(words, "|") {
			if strings.Contains(l, w) && !strings.HasPrefix(l, "#") {
				out = append(out, l)
				break
			}
		}
	}
	return strings.Join(out, "\n")
}

func newServer(a *app.App, p app.Ports) *httptest.Server {
	mux := http.NewServeMux()
	if p.MetricsHandler != nil {
		mux.Handle("/metrics", p.MetricsHandler)
	}
	mux.Handle("/", a.HTTP)
	return httptest.NewServer(mux)
}

// injectFaults makes the suite's advancer fail and crash as f says from
// now on (its step table asks the suite's faults).
func injectFaults(s *suite, f orchestrator.Faults) { s.faults.Store(&f) }

func TestFailedSagaShowsItsDeadLetterInTheChain(t *testing.T) {
	// The release's held last attempt waits out a short outage bound (one
	// hold of a second), then gives up.
	s := newSuite(t, func(c *config.Config) {
		c.Saga.BackoffBase, c.Saga.BackoffCap, c.Saga.OutageBound = time.Millisecond, time.Millisecond, time.Millisecond
	})
	injectFaults(s, orchestrator.Faults{Fail: func(_ context.Context, at orchestrator.FaultPoint) error {
		step := at.Step
		if step == saga.StepReleaseInventory {
			return apperr.New(apperr.Transient, "stock service down (injected)")
		}
		return nil
	}})
	o := s.post("fail-1", `{"customer_id":"c-1","currency":"RUB","items":[{"sku":"sku-1","quantity":1,"unit_price_minor":2000000}]}`)
	// release_inventory's retries come back through the queue, each at
	// least a second later.
	s.pumpUntil(time.Minute, func() bool { return s.get("/orders/" + o["id"].(string))["status"] != "PENDING" })
	got := s.get("/orders/" + o["id"].(string))
	if got["status"] != "FAILED" || got["saga"].(map[string]any)["state"] != "failed" {
		t.Fatalf("order %v", got)
	}
	dl, _ := got["correlation"].(map[string]any)["dead_letter_id"].(string)
	if dl == "" {
		t.Fatalf("correlation lacks the dead letter: %v", got["correlation"])
	}
	show := s.invoke("dlqredrive", `{"action":"show","ids":["`+dl+`"]}`)
	if js := mustJSON(show); !strings.Contains(js, o["id"].(string)) || !strings.Contains(js, "fail-1") {
		t.Errorf("show lacks the chain: %s", js)
	}
	// The release gave up: the unit is still reserved, and show says so.
	if js := mustJSON(show); !strings.Contains(js, `"held":{"units":[{"quantity":1,"sku":"sku-1"}]}`) {
		t.Errorf("show lacks the held unit: %s", js)
	}
	// The recovery timer refreshes the dead-letter gauges.
	if _, err := Registry["sagarecovery"](context.Background(), s.app, yc.EncodeTimer("t", "", time.Now())); err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get(s.srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{`dlq_size{queue="saga"} 1`, `dlq_size{queue="queue"} 0`, `dlq_size{queue="saga-commands-dlq"} 0`,
		`dlq_additions_total{error_type="transient",queue="saga"} 1`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
}

func TestAdminSetsStockForTheCloud(t *testing.T) {
	s := newSuite(t, nil)
	put := func(token, sku, body string) *http.Response {
		req, _ := http.NewRequest("PUT", s.srv.URL+"/admin/stock/"+sku, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	if r := put("dev-user", "sku-9", `{"available":5}`); r.StatusCode != 403 {
		t.Errorf("a user set stock: %d", r.StatusCode)
	}
	for _, bad := range []string{`{"available":-1}`, `{"available":"5"}`, `{}`, `{"available":5,"x":1}`} {
		if r := put("dev-admin", "sku-9", bad); r.StatusCode != 400 {
			t.Errorf("%s: status %d, want 400", bad, r.StatusCode)
		}
	}
	if r := put("dev-admin", "sku-9", `{"available":5}`); r.StatusCode != 200 {
		t.Fatalf("set stock: %d", r.StatusCode)
	}
	o := s.post("stock-1", `{"customer_id":"c-1","currency":"RUB","items":[{"sku":"sku-9","quantity":5,"unit_price_minor":100}]}`)
	s.pump()
	if got := s.get("/orders/" + o["id"].(string)); got["status"] != "CONFIRMED" {
		t.Fatalf("order on newly stocked SKU: %v", got["status"])
	}
}
