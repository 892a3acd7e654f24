package mqtrigger_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"ordersaga/shared/adapters/sqlitequeue"
	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/queue"
	"ordersaga/shared/kit/fakeclock"
	"ordersaga/shared/transport/mqtrigger"
	"ordersaga/shared/transport/yc"
)

// newQueue opens an embedded queue on a SQLite file with a fake clock and
// one queue "q" (visibility 30 s) and sends n messages to it.
func newQueue(t *testing.T, n int) (*sqlitequeue.Queue, string, *fakeclock.Clock) {
	t.Helper()
	clock := fakeclock.New(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	q, err := sqlitequeue.Open(filepath.Join(t.TempDir(), "q.db"), sqlitequeue.Config{Now: clock.Now, PollInterval: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { q.Close() })
	ctx := context.Background()
	url, err := q.Ensure(ctx, queue.QueueSpec{Name: "q", VisibilityTimeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		if _, err := q.SendBatch(ctx, url, []queue.OutMessage{{ID: "m", Body: fmt.Sprintf("body-%d", i)}}); err != nil {
			t.Fatal(err)
		}
	}
	return q, url, clock
}

// bodies decodes an invocation's envelope into its message bodies.
func bodies(t *testing.T, raw []byte) []yc.QueueMessage {
	t.Helper()
	ev, err := yc.DecodeQueue(raw)
	if err != nil {
		t.Errorf("envelope does not decode: %v", err)
		return nil
	}
	return ev.Messages
}

// remaining receives everything visible now (without deleting it).
func remaining(t *testing.T, q queue.Queue, url string) []queue.Message {
	t.Helper()
	var all []queue.Message
	for {
		msgs, err := q.Receive(context.Background(), url, queue.ReceiveOptions{Max: 10})
		if err != nil {
			t.Fatal(err)
		}
		if len(msgs) == 0 {
			return all
		}
		all = append(all, msgs...)
	}
}

func TestInvocationsRunConcurrentlyUpToTheBound(t *testing.T) {
	const limit, n = 3, 12
	q, url, _ := newQueue(t, n)
	var inFlight, peak, seen atomic.Int64
	entered := make(chan struct{}, n)
	release := make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	tr := mustTrigger(t, mqtrigger.Config{Queue: q, URL: url, QueueID: "yrn:yc:ymq:ru-central1:local:q", BatchSize: 1,
		VisibilityTimeout: 30 * time.Second, Concurrency: limit, Wait: 10 * time.Millisecond,
		Invoke: func(ctx context.Context, raw []byte) error {
			now := inFlight.Add(1)
			for p := peak.Load(); now > p && !peak.CompareAndSwap(p, now); p = peak.Load() {
			}
			seen.Add(int64(len(bodies(t, raw))))
			entered <- struct{}{}
			<-release
			inFlight.Add(-1)
			return nil
		}})
	done := make(chan struct{})
	go func() { tr.Run(ctx); close(done) }()
	// The bound is reached: limit invocations are in flight at once.
	for i := 0; i < limit; i++ {
		<-entered
	}
	close(release) // let every invocation finish
	for i := limit; i < n; i++ {
		<-entered
	}
	cancel()
	<-done
	if got := peak.Load(); got != limit {
		t.Errorf("peak invocations in flight = %d, want %d", got, limit)
	}
	if got := seen.Load(); got != n {
		t.Errorf("messages delivered = %d, want %d", got, n)
	}
	if left := remaining(t, q, url); len(left) != 0 {
		t.Errorf("%d messages left after successful invocations, want 0 (deleted)", len(left))
	}
}

func TestFailedInvocationReturnsTheWholeBatchAfterTheVisibilityTimeout(t *testing.T) {
	q, url, clock := newQueue(t, 3)
	ctx, cancel := context.WithCancel(context.Background())
	var once sync.Once
	failed := make(chan []yc.QueueMessage, 1)
	tr := mustTrigger(t, mqtrigger.Config{Queue: q, URL: url, QueueID: "yrn:yc:ymq:ru-central1:local:q", BatchSize: 10,
		VisibilityTimeout: 30 * time.Second, Wait: 10 * time.Millisecond,
		Invoke: func(ctx context.Context, raw []byte) error {
			once.Do(func() { failed <- bodies(t, raw) })
			return errors.New("boom")
		}})
	done := make(chan struct{})
	go func() { tr.Run(ctx); close(done) }()
	batch := <-failed
	cancel()
	<-done
	if len(batch) != 3 {
		t.Fatalf("batch of %d messages, want all 3", len(batch))
	}
	for _, m := range batch {
		if m.Attributes["ApproximateReceiveCount"] != "1" || m.Attributes["SentTimestamp"] != fmt.Sprint(clock.Now().UnixMilli()) {
			t.Errorf("system attributes %v, want receive count 1 and the send time in ms", m.Attributes)
		}
	}
	if left := remaining(t, q, url); len(left) != 0 {
		t.Fatalf("%d messages visible inside the visibility timeout, want 0", len(left))
	}
	clock.Advance(31 * time.Second)
	left := remaining(t, q, url)
	if len(left) != 3 {
		t.Fatalf("%d messages back after the visibility timeout, want 3 (the failed batch is not deleted)", len(left))
	}
	for _, m := range left {
		if m.ReceiveCount != 2 {
			t.Errorf("message %s receive count %d, want 2", m.MessageID, m.ReceiveCount)
		}
	}
}

func TestSerialWithConcurrencyOne(t *testing.T) {
	q, url, _ := newQueue(t, 5)
	var inFlight, peak, seen atomic.Int64
	ctx, cancel := context.WithCancel(context.Background())
	all := make(chan struct{})
	tr := mustTrigger(t, mqtrigger.Config{Queue: q, URL: url, QueueID: "yrn:yc:ymq:ru-central1:local:q", BatchSize: 2,
		VisibilityTimeout: 30 * time.Second, Concurrency: 1, Wait: 10 * time.Millisecond,
		Invoke: func(ctx context.Context, raw []byte) error {
			now := inFlight.Add(1)
			if now > peak.Load() {
				peak.Store(now)
			}
			if seen.Add(int64(len(bodies(t, raw)))) == 5 {
				close(all)
			}
			inFlight.Add(-1)
			return nil
		}})
	done := make(chan struct{})
	go func() { tr.Run(ctx); close(done) }()
	<-all
	cancel()
	<-done
	if peak.Load() != 1 {
		t.Errorf("peak in flight %d with Concurrency 1, want 1", peak.Load())
	}
}

// mustTrigger returns mqtrigger.New(cfg) or fails t.
func mustTrigger(t *testing.T, cfg mqtrigger.Config) *mqtrigger.Trigger {
	t.Helper()
	tr, err := mqtrigger.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// A Config with only its required fields is accepted (Concurrency and Wait
// take their defaults); a missing required field or a negative setting is
// refused with an error naming the field.
func TestNewDefaultsAndRefusals(t *testing.T) {
	q, url, _ := newQueue(t, 0)
	ok := mqtrigger.Config{Queue: q, URL: url, QueueID: "yrn:q", BatchSize: 1, VisibilityTimeout: time.Second,
		Invoke: func(context.Context, []byte) error { return nil }}
	if _, err := mqtrigger.New(ok); err != nil {
		t.Fatalf("New(required fields only) = %v", err)
	}
	cases := []struct {
		name   string
		change func(*mqtrigger.Config)
		want   string
	}{
		{"no queue", func(c *mqtrigger.Config) { c.Queue = nil }, "Queue is required"},
		{"no URL", func(c *mqtrigger.Config) { c.URL = "" }, "URL is required"},
		{"no queue id", func(c *mqtrigger.Config) { c.QueueID = "" }, "QueueID is required"},
		{"no invoke", func(c *mqtrigger.Config) { c.Invoke = nil }, "Invoke is required"},
		{"no batch size", func(c *mqtrigger.Config) { c.BatchSize = 0 }, "BatchSize is required"},
		{"no visibility timeout", func(c *mqtrigger.Config) { c.VisibilityTimeout = 0 }, "VisibilityTimeout is required"},
		{"negative batch size", func(c *mqtrigger.Config) { c.BatchSize = -1 }, "BatchSize must not be negative (got -1)"},
		{"negative concurrency", func(c *mqtrigger.Config) { c.Concurrency = -1 }, "Concurrency must not be negative (got -1)"},
		{"negative wait", func(c *mqtrigger.Config) { c.Wait = -time.Second }, "Wait must not be negative (got -1s)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := ok
			tc.change(&cfg)
			tr, err := mqtrigger.New(cfg)
			if tr != nil || !apperr.Is(err, apperr.Invalid) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("New = %v, %v; want Invalid containing %q", tr, err, tc.want)
			}
		})
	}
}
