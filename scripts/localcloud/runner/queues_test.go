package runner

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"ordersaga/shared/domain/queue"
	"ordersaga/shared/kit/config"
	"ordersaga/shared/wiring/app"
	"ordersaga/shared/wiring/handlers"
	"ordersaga/shared/wiring/localwiring"
	"ordersaga/shared/wiring/triggers"
)

// POST /_queues/{queue} sends one message to a queue of triggers.yaml, as
// the console's "send message" does; an unknown queue or a body without
// "body" changes nothing. A self-check event to /_invoke/{function} gets
// the report, not the body's answer.
func TestSendToQueueAndSelfCheck(t *testing.T) {
	cfg := config.Default()
	cfg.SQLitePath = filepath.Join(t.TempDir(), "q.db")
	cfg.QueueSQLite = cfg.SQLitePath
	var ports app.Ports
	open := func(ctx context.Context, cfg config.Config, env app.Env) (app.Ports, error) {
		p, err := localwiring.Open(ctx, cfg, env)
		ports = p
		return p, err
	}
	a, err := app.New(context.Background(), cfg, open, app.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close() })
	tf, err := triggers.Load("../../../triggers/triggers.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := a.EnsureQueues(context.Background(), tf.Queues); err != nil {
		t.Fatal(err)
	}
	rt := &runner{app: a, queue: ports.Queue, file: tf, log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		functions: maps.Clone(handlers.Registry)}
	srv := httptest.NewServer(rt.routes())
	defer srv.Close()
	post := func(path, body string) (int, string) {
		resp, err := http.Post(srv.URL+path, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	depth := func() int {
		v, f, err := ports.Queue.Depth(context.Background(), cfg.QueueURLs.SagaCommandsDLQ)
		if err != nil {
			t.Fatal(err)
		}
		return v + f
	}
	if st, _ := post("/_queues/no-such-queue", `{"body":"x"}`); st != http.StatusNotFound {
		t.Errorf("unknown queue: %d", st)
	}
	if st, _ := post("/_queues/saga-commands-dlq", `{"attributes":{"a":"b"}}`); st != http.StatusBadRequest {
		t.Errorf("no body: %d", st)
	}
	if n := depth(); n != 0 {
		t.Fatalf("refused sends left %d messages", n)
	}
	st, body := post("/_queues/saga-commands-dlq", `{"body":"{\"saga_id\":\"s\"}","attributes":{"event_id":"e"}}`)
	var out struct {
		MessageID string `json:"message_id"`
	}
	if st != http.StatusOK || json.Unmarshal([]byte(body), &out) != nil || out.MessageID == "" {
		t.Fatalf("send: %d %s", st, body)
	}
	if n := depth(); n != 1 {
		t.Errorf("depth after one send: %d", n)
	}
	ms, err := ports.Queue.Receive(context.Background(), cfg.QueueURLs.SagaCommandsDLQ, queue.ReceiveOptions{Max: 1})
	if err != nil || len(ms) != 1 || ms[0].MessageID != out.MessageID || ms[0].Attributes["event_id"] != "e" {
		t.Errorf("received %+v, %v", ms, err)
	}
	st, body = post("/_invoke/dlqredrive", `{"action":"selfcheck"}`)
	if st != http.StatusOK || !strings.Contains(body, `"action":"selfcheck"`) || !strings.Contains(body, `"function":"dlqredrive"`) || !strings.Contains(body, `"verdict":"PASS"`) {
		t.Errorf("self-check: %d %s", st, body)
	}
}
