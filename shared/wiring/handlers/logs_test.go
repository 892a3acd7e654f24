package handlers

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"sync"
	"testing"

	"ordersaga/shared/kit/config"
	"ordersaga/shared/wiring/app"
	"ordersaga/shared/wiring/localwiring"
	"ordersaga/shared/wiring/triggers"
)

// syncBuffer is a goroutine-safe log sink.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) lines(t *testing.T) []map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(s.b.Bytes()))
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("log line is not JSON: %s", sc.Text())
		}
		out = append(out, m)
	}
	return out
}

func TestLogsCarryTheCorrelationChainAtEveryStage(t *testing.T) {
	sink := &syncBuffer{}
	cfg := config.Default()
	cfg.SQLitePath = filepath.Join(t.TempDir(), "logs.db")
	cfg.QueueSQLite = cfg.SQLitePath
	log := app.NewLogger(sink, "info") // the production logger

	var ports app.Ports
	open := func(ctx context.Context, cfg config.Config, env app.Env) (app.Ports, error) {
		var err error
		ports, err = localwiring.Open(ctx, cfg, env)
		return ports, err
	}
	a, err := app.New(context.Background(), cfg, open, app.Options{Log: log})
	if err != nil {
		t.Fatal(err)
	}
	tf, _ := triggers.Load("../../../triggers/triggers.yaml")
	if err := a.EnsureQueues(context.Background(), tf.Queues); err != nil {
		t.Fatal(err)
	}
	_ = a.Commands.Stock.Seed(context.Background(), map[string]int64{"sku-1": 10})
	s := &suite{t: t, app: a, ports: ports}
	s.srv = newServer(a, ports)
	t.Cleanup(func() { s.srv.Close(); _ = a.Close() })

	const body = `{"customer_id":"c-1","currency":"RUB","items":[{"sku":"sku-1","quantity":1,"unit_price_minor":100}]}`
	o := s.post("chain-key", body)
	s.pump()
	orderID := o["id"].(string)
	all := sink.lines(t)
	// A replay knows no saga id and, locally, no request id: its line
	// leaves them out rather than logging them empty.
	s.post("chain-key", body)
	replay := sink.lines(t)[len(all):]
	replayed := 0
	for _, l := range replay {
		if l["msg"] == "order accepted" && l["replayed"] == true {
			replayed++
			if l["order_id"] != orderID || l["idempotency_key"] != "chain-key" {
				t.Errorf("replay line lacks its correlation: %v", l)
			}
		}
	}
	if replayed != 1 {
		t.Errorf("replay lines = %d, want 1: %v", replayed, replay)
	}
	for _, l := range append(all, replay...) {
		for k, v := range l {
			if v == "" {
				t.Errorf("%q logs an empty %s: %v", l["msg"], k, l)
			}
		}
	}
	var sagaID string
	stages := map[string]int{}
	for _, l := range all {
		if l["order_id"] != orderID {
			continue
		}
		msg, _ := l["msg"].(string)
		stages[msg]++
		if l["level"] == nil || msg == "" {
			t.Errorf("line without level or message: %v", l)
		}
		if l["idempotency_key"] != "chain-key" {
			t.Errorf("%q lacks the idempotency key: %v", msg, l)
		}
		sid, _ := l["saga_id"].(string)
		if sid == "" || (sagaID != "" && sid != sagaID) {
			t.Errorf("%q has saga_id %q (want %q): %v", msg, sid, sagaID, l)
		}
		sagaID = sid
		if msg != "order accepted" && l["outbox_event_id"] == nil {
			t.Errorf("%q lacks outbox_event_id: %v", msg, l)
		}
	}
	for _, stage := range []string{"order accepted", "outbox event published", "saga step"} {
		if stages[stage] == 0 {
			t.Errorf("no %q line for the order (saw %v)", stage, stages)
		}
	}
	if stages["saga step"] != 4 {
		t.Errorf("saga step lines = %d, want 4", stages["saga step"])
	}
}
