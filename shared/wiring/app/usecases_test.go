package app_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"ordersaga/shared/kit/config"
	"ordersaga/shared/kit/fakeclock"
	"ordersaga/shared/wiring/app"
)

// logSink is a goroutine-safe buffer of JSON log lines.
type logSink struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *logSink) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *logSink) lines(t *testing.T) []map[string]any {
	t.Helper()
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

func (s *logSink) reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.b.Reset()
}

func withMsg(lines []map[string]any, msg string) []map[string]any {
	var out []map[string]any
	for _, l := range lines {
		if l["msg"] == msg {
			out = append(out, l)
		}
	}
	return out
}

func TestLoggerLeavesOutEmptyFields(t *testing.T) {
	sink := &logSink{}
	log := app.NewLogger(sink, "info")
	log.With("request_id", "").Info("order accepted", "saga_id", "", "order_id", "o-1", "replayed", false, "n", 0)
	log.Info("")
	lines := sink.lines(t)
	if len(lines) != 2 {
		t.Fatalf("lines = %v", lines)
	}
	l := lines[0]
	for _, k := range []string{"saga_id", "request_id"} {
		if _, ok := l[k]; ok {
			t.Errorf("empty %s was logged: %v", k, l)
		}
	}
	if l["order_id"] != "o-1" || l["replayed"] != false || l["n"] != float64(0) || l["level"] != "INFO" || l["msg"] != "order accepted" {
		t.Errorf("non-empty fields lost: %v", l)
	}
	if _, ok := lines[1]["msg"]; !ok {
		t.Errorf("an empty message must still have its msg key: %v", lines[1])
	}
}

// The recovery timer fires every few seconds locally: a run that finds
// nothing to do logs its one summary at debug; a run that does something
// logs it at info.
func TestRecoverySummaryIsDebugWhenIdle(t *testing.T) {
	sink := &logSink{}
	clock := fakeclock.New(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	env := newTestEnv(t, func(c *config.Config, o *app.Options) {
		o.Log = app.NewLogger(sink, "debug")
		o.Now = clock.Now
		// A queue in a file of its own: the order's rows are written and
		// published after commit, so there are published rows to purge (sent
		// in the transaction, they would not be written at all).
		c.QueueSQLite = filepath.Join(filepath.Dir(c.SQLitePath), "queue.db")
	})
	ctx := context.Background()
	summaries := func() []map[string]any {
		t.Helper()
		s := withMsg(sink.lines(t), "saga recovery")
		if len(s) != 1 {
			t.Fatalf("want exactly one recovery summary per run, got %v", s)
		}
		return s
	}

	if _, err := env.app.Commands.Recover.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if s := summaries(); s[0]["level"] != "DEBUG" {
		t.Errorf("idle run logged %v, want DEBUG", s[0])
	}

	// Something to do: a published outbox row past retention.
	if r := env.do("POST", "/orders", "dev-user", "rec-1", []byte(orderBody)); r.status != 201 {
		t.Fatalf("POST = %d %s", r.status, r.body)
	}
	if _, err := env.app.Commands.RelayOutbox.Run(ctx, time.Second); err != nil {
		t.Fatal(err)
	}
	clock.Advance(env.app.Config.Relay.Retention + time.Hour)
	sink.reset()
	rep, err := env.app.Commands.Recover.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if rep.OutboxPurged == 0 {
		t.Fatalf("nothing purged: %+v", rep)
	}
	if s := summaries(); s[0]["level"] != "INFO" || s[0]["outbox_purged"] != float64(rep.OutboxPurged) {
		t.Errorf("busy run logged %v, want INFO with outbox_purged %d", s[0], rep.OutboxPurged)
	}
}

func TestNewRefusesMissingAdapters(t *testing.T) {
	cfg := config.Default()
	if _, err := app.New(context.Background(), cfg, nil, app.Options{}); err == nil || !strings.Contains(err.Error(), "Opener") {
		t.Errorf("no opener: err = %v", err)
	}
	closed := false
	_, err := app.New(context.Background(), cfg, app.Use(app.Ports{Close: func() error { closed = true; return nil }}), app.Options{})
	if err == nil || !strings.Contains(err.Error(), "no store") {
		t.Errorf("empty ports: err = %v", err)
	}
	if !closed {
		t.Error("ports handed over were not closed when New failed")
	}
	boom := errors.New("cannot open")
	_, err = app.New(context.Background(), cfg, func(context.Context, config.Config, app.Env) (app.Ports, error) {
		return app.Ports{}, boom
	}, app.Options{Log: slog.New(slog.NewJSONHandler(io.Discard, nil))})
	if !errors.Is(err, boom) {
		t.Errorf("opener error lost: %v", err)
	}
}
