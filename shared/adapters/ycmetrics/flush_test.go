package ycmetrics

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/metrics"
)

func TestFlushSendsTheDocumentedRequest(t *testing.T) {
	f := newFake(t, nil)
	r, _ := newRecorder(t, f, func(c *Config) { c.Labels = map[string]string{"env": "prod"} })

	r.Add(metrics.SagaSteps, 1, "step", "reserve_stock", "direction", "forward", "status", "succeeded")
	r.Add(metrics.SagaSteps, 2, "status", "succeeded", "step", "reserve_stock", "direction", "forward")
	r.Set(metrics.OutboxLag, 10)
	r.Set(metrics.OutboxLag, 42.5) // last value wins
	r.Set(metrics.DLQSize, 0, "queue", "saga-commands-dlq")
	r.Add(metrics.Reconciled, 0) // a zero increment is not pushed
	r.Add(metrics.QueueSends, 1, "queue", "order-events", "result", "")
	r.Observe(metrics.SagaDuration, 12, "saga_type", "order", "outcome", "completed")
	r.Observe(metrics.SagaDuration, 400, "saga_type", "order", "outcome", "completed")
	r.Observe(metrics.SagaDuration, 7, "saga_type", "order", "outcome", "completed")
	r.Add("not_in_catalog_total", 1)
	r.Add(metrics.Retries, 1, "operation")

	if err := r.Flush(context.Background()); err != nil {
		t.Fatalf("Flush: %v", err)
	}
	reqs := f.requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests, want exactly 1", len(reqs))
	}
	got := reqs[0]
	if got.Method != http.MethodPost || got.Path != "/monitoring/v2/data/write" {
		t.Errorf("request = %s %s", got.Method, got.Path)
	}
	if want := map[string][]string{"folderId": {"b1gfolder"}, "service": {"custom"}}; !reflect.DeepEqual(got.Query, want) {
		t.Errorf("query = %v, want %v", got.Query, want)
	}
	if a := got.Header.Get("Authorization"); a != "Bearer t0k3n" {
		t.Errorf("Authorization = %q", a)
	}
	if ct := got.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type = %q", ct)
	}
	const ts = "2025-01-02T03:04:05.123Z"
	pt := func(name string, labels map[string]any, v float64) map[string]any {
		p := map[string]any{"name": name, "type": "DGAUGE", "ts": ts, "value": v}
		if labels != nil {
			p["labels"] = labels
		}
		return p
	}
	saga := map[string]any{"saga_type": "order", "outcome": "completed"}
	bin := func(b string) map[string]any {
		return map[string]any{"saga_type": "order", "outcome": "completed", "bin": b}
	}
	want := map[string]any{
		"ts":     ts,
		"labels": map[string]any{"function": "saga-advancer", "env": "prod"},
		"metrics": []any{
			pt("dlq_size", map[string]any{"queue": "saga-commands-dlq"}, 0),
			pt("outbox_lag_seconds", nil, 42.5),
			pt("queue_sends_total", map[string]any{"queue": "order-events"}, 1), // empty value omitted
			pt("saga_duration_seconds_count", saga, 3),
			pt("saga_duration_seconds_sum", saga, 419),
			pt("saga_duration_seconds_max", saga, 400),
			pt("saga_duration_seconds_bucket", bin("10"), 1),
			pt("saga_duration_seconds_bucket", bin("30"), 1),
			pt("saga_duration_seconds_bucket", bin("600"), 1),
			pt("saga_steps_total", map[string]any{"step": "reserve_stock", "direction": "forward", "status": "succeeded"}, 3),
			pt("ordersaga_metrics_unknown_total", nil, 1),
			pt("ordersaga_metrics_dropped_total", map[string]any{"reason": "odd_labels"}, 1),
		},
	}
	if !reflect.DeepEqual(got.Body, want) {
		g, _ := json.MarshalIndent(got.Body, "", " ")
		w, _ := json.MarshalIndent(want, "", " ")
		t.Errorf("body mismatch\n got: %s\nwant: %s", g, w)
	}

	// The buffer was cleared: an idle Flush sends nothing.
	if err := r.Flush(context.Background()); err != nil {
		t.Fatalf("second Flush: %v", err)
	}
	if n := len(f.requests()); n != 1 {
		t.Errorf("idle Flush sent a request (%d requests)", n)
	}
}

func TestFlushFailuresAreReportedNotPanicking(t *testing.T) {
	reply := func(code int, body string) func(http.ResponseWriter, *http.Request) {
		return func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(code)
			_, _ = io.WriteString(w, body)
		}
	}
	release := make(chan struct{})
	tests := []struct {
		name    string
		respond func(http.ResponseWriter, *http.Request)
		tokens  TokenSource
		closed  bool // the server is gone
		kind    apperr.Kind
		status  int
	}{
		{name: "500", respond: reply(500, `{"message":"boom"}`), kind: apperr.Transient, status: 500},
		{name: "503", respond: reply(503, ""), kind: apperr.Transient, status: 503},
		{name: "429", respond: reply(429, "slow down"), kind: apperr.Transient, status: 429},
		{name: "401", respond: reply(401, "bad token"), kind: apperr.Unauthenticated, status: 401},
		{name: "403", respond: reply(403, "no role"), kind: apperr.Forbidden, status: 403},
		{name: "400", respond: reply(400, `{"message":"bad label"}`), kind: apperr.Invalid, status: 400},
		{name: "200 with errorMessage", respond: reply(200, `{"writtenMetricsCount":"0","errorMessage":"too many labels"}`),
			kind: apperr.Invalid, status: 200},
		{name: "timeout", respond: func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-r.Context().Done():
			case <-release:
			}
		}, kind: apperr.Transient},
		{name: "token error", tokens: TokenFunc(func(context.Context) (string, error) {
			return "", errors.New("metadata service unreachable")
		}), kind: apperr.Unauthenticated},
		{name: "connection refused", closed: true, kind: apperr.Transient},
	}
	t.Cleanup(func() { close(release) })
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(t, tt.respond)
			r, logs := newRecorder(t, f, func(c *Config) {
				c.Timeout = 100 * time.Millisecond
				if tt.tokens != nil {
					c.Tokens = tt.tokens
				}
			})
			if tt.closed {
				f.srv.Close()
			}
			r.Add(metrics.Reconciled, 2)
			r.Observe(metrics.HTTPRequestDuration, 0.02, "route", "POST /orders")

			err := r.Flush(context.Background())
			if err == nil {
				t.Fatalf("Flush succeeded, want a %v error", tt.kind)
			}
			if k := apperr.KindOf(err); k != tt.kind {
				t.Errorf("kind = %v, want %v (err %v)", k, tt.kind, err)
			}
			if tt.status != 0 && !strings.Contains(err.Error(), "HTTP") && tt.status != 200 {
				t.Errorf("error %q does not name the HTTP status", err)
			}
			var line map[string]any
			if e := json.Unmarshal(logs.Bytes(), &line); e != nil {
				t.Fatalf("want exactly one JSON log line, got %q", logs.String())
			}
			if line["level"] != "WARN" || line["msg"] != "metrics flush failed" || line["points"] != 5.0 {
				t.Errorf("log line = %v", line)
			}
			if strings.Contains(logs.String(), "t0k3n") {
				t.Errorf("the token leaked into the log")
			}

			// The lost points are reported with the next successful flush.
			ok := newFake(t, nil)
			r.endpoint = ok.endpoint() + "?folderId=b1gfolder&service=custom"
			r.cfg.Tokens = staticToken("t0k3n")
			if err := r.Flush(context.Background()); err != nil {
				t.Fatalf("recovery Flush: %v", err)
			}
			reqs := ok.requests()
			if len(reqs) != 1 {
				t.Fatalf("%d recovery requests", len(reqs))
			}
			ps := points(t, reqs[0].Body)
			if len(ps) != 1 || ps[0]["name"] != metrics.MetricsDropped || ps[0]["value"] != 5.0 ||
				!reflect.DeepEqual(ps[0]["labels"], map[string]any{"reason": "flush_failed"}) {
				t.Errorf("recovery points = %v", ps)
			}
		})
	}
}

func TestOverflowDropsAndCounts(t *testing.T) {
	f := newFake(t, nil)
	r, _ := newRecorder(t, f, func(c *Config) { c.MaxPoints = 5 })
	r.Add(metrics.QueueReceives, 1, "queue", "a")                   // 1 point
	r.Observe(metrics.HTTPRequestDuration, 0.001, "route", "GET /") // 4 points: count, sum, max, bucket
	r.Observe(metrics.HTTPRequestDuration, 0.002, "route", "GET /") // same bucket: free
	r.Add(metrics.QueueReceives, 1, "queue", "a")                   // existing series: free
	r.Add(metrics.QueueReceives, 1, "queue", "b")                   // new series: over the cap
	r.Observe(metrics.HTTPRequestDuration, 9, "route", "GET /")     // new bucket: over the cap
	if err := r.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	ps := points(t, f.requests()[0].Body)
	if len(ps) != 6 {
		t.Fatalf("%d points, want 5 + the dropped counter: %v", len(ps), ps)
	}
	last := ps[len(ps)-1]
	if last["name"] != metrics.MetricsDropped || last["value"] != 2.0 ||
		!reflect.DeepEqual(last["labels"], map[string]any{"reason": "overflow"}) {
		t.Errorf("last point = %v", last)
	}
	for _, p := range ps {
		if p["name"] == "http_request_duration_seconds_count" && p["value"] != 2.0 {
			t.Errorf("count = %v, want 2 (the overflowing observation is dropped whole)", p["value"])
		}
	}
}

func TestInvalidCallsAreCounted(t *testing.T) {
	f := newFake(t, nil)
	r, _ := newRecorder(t, f, nil)
	r.Set(metrics.Reconciled, 1)                            // kind
	r.Observe(metrics.OutboxLag, 1)                         // kind
	r.Add(metrics.SagaDuration, 1)                          // kind
	r.Add(metrics.Reconciled, -1)                           // invalid value
	r.Set(metrics.OutboxLag, nan())                         // invalid value
	r.Add(metrics.QueueReceives, 1, "colour", "red")        // unknown label
	r.Add(metrics.QueueReceives, 1, "queue", "a", "result") // odd
	if err := r.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, p := range points(t, f.requests()[0].Body) {
		if p["name"] != metrics.MetricsDropped {
			t.Errorf("unexpected point %v", p)
			continue
		}
		got[p["labels"].(map[string]any)["reason"].(string)] = p["value"].(float64)
	}
	want := map[string]float64{metrics.DropKind: 3, metrics.DropInvalidValue: 2, metrics.DropUnknownLabel: 1, metrics.DropOddLabels: 1}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("dropped = %v, want %v", got, want)
	}
}

func nan() float64 {
	zero := 0.0
	return zero / zero
}
