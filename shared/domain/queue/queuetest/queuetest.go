// Package queuetest is the conformance suite of the queue port: every
// adapter of queue.Queue runs Run from its own tests, so the embedded queue
// and the SQS adapter are held to the same semantics.
//
// The suite is real-time (queues are remote services): its timing steps are
// multiples of Features.TimeUnit, and every timing assertion is one-sided
// and measured, so a slow machine can make a check inconclusive (logged),
// never falsely failing. Each subtest uses its own uniquely named queues, so
// a shared SQS emulator is fine, and subtests run in parallel.
package queuetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"maps"
	"strings"
	"testing"
	"time"

	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/queue"
)

// Features declares the real differences between adapters. There are no
// silent skips: a test that a feature rules out says so with t.Skip.
type Features struct {
	// TimeUnit is the adapter's time granularity for visibility timeouts,
	// delays and long polls; the suite's timing steps are multiples of it.
	// SQS counts whole seconds, so adapters over SQS use time.Second; the
	// embedded queue can use a fraction of it. Must be > 0.
	TimeUnit time.Duration
	// LongPollWakesOnVisible reports whether a long-polling Receive returns a
	// message that becomes visible during the wait (ChangeVisibility to 0,
	// the end of a visibility timeout or a delay), not only one newly sent.
	// SQS and the embedded queue do; the kumo emulator does not (it wakes
	// long polls on send only, and otherwise returns empty at the end of the
	// wait).
	LongPollWakesOnVisible bool
}

// Run runs the conformance suite. newQueue is called once per subtest and
// must return a ready adapter (cleanup via t.Cleanup).
func Run(t *testing.T, newQueue func(t *testing.T) queue.Queue, f Features) {
	t.Helper()
	if f.TimeUnit <= 0 {
		t.Fatal("queuetest: Features.TimeUnit must be > 0")
	}
	tests := []struct {
		name string
		fn   func(t *testing.T, s *suite)
	}{
		{"SendBatchOne", testSendBatchOne},
		{"SendBatchTen", testSendBatchTen},
		{"SendBatchInvalidWhole", testSendBatchInvalidWhole},
		{"SendBatchInvalidEntry", testSendBatchInvalidEntry},
		{"SendAllChunks", testSendAllChunks},
		{"AttributesRoundTrip", testAttributesRoundTrip},
		{"ReceiveInvalidOptions", testReceiveInvalidOptions},
		{"LongPollReturnsOnSend", testLongPollReturnsOnSend},
		{"LongPollEmptyAfterWait", testLongPollEmptyAfterWait},
		{"LongPollWakesOnVisible", testLongPollWakesOnVisible},
		{"VisibilityTimeoutRedelivers", testVisibilityTimeoutRedelivers},
		{"ChangeVisibilityZero", testChangeVisibilityZero},
		{"ChangeVisibilityExtends", testChangeVisibilityExtends},
		{"ChangeVisibilityAfterDelete", testChangeVisibilityAfterDelete},
		{"ReceiveCountIncrements", testReceiveCountIncrements},
		{"Delete", testDelete},
		{"Delay", testDelay},
		{"DelayNeverEarly", testDelayNeverEarly},
		{"DelayLongPoll", testDelayLongPoll},
		{"RedriveToDLQ", testRedriveToDLQ},
		{"EnsureIdempotent", testEnsureIdempotent},
		{"EnsureInvalid", testEnsureInvalid},
		{"MissingQueue", testMissingQueue},
		{"Depth", testDepth},
		{"ConcurrentReceivers", testConcurrentReceivers},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			// One context per subtest, bounded well beyond any of its steps.
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second+40*f.TimeUnit)
			t.Cleanup(cancel)
			tc.fn(t, &suite{q: newQueue(t), f: f, u: f.TimeUnit, c: ctx})
		})
	}
}

// suite carries one subtest's adapter and features.
type suite struct {
	q queue.Queue
	f Features
	u time.Duration // TimeUnit
	c context.Context
}

// ctx returns the subtest's context.
func (s *suite) ctx(*testing.T) context.Context { return s.c }

// uniqueName returns a fresh queue name with a readable label.
func uniqueName(t *testing.T, label string) string {
	t.Helper()
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatalf("rand: %v", err)
	}
	return "qt-" + label + "-" + hex.EncodeToString(b[:])
}

// ensure creates a fresh queue named after label and returns its URL.
func (s *suite) ensure(t *testing.T, label string, spec queue.QueueSpec) string {
	t.Helper()
	spec.Name = uniqueName(t, label)
	url, err := s.q.Ensure(s.ctx(t), spec)
	if err != nil {
		t.Fatalf("Ensure(%+v): %v", spec, err)
	}
	if url == "" {
		t.Fatalf("Ensure(%+v) returned an empty URL", spec)
	}
	return url
}

// send sends msgs and fails the test unless every entry succeeded.
func (s *suite) send(t *testing.T, url string, msgs ...queue.OutMessage) []queue.SendResult {
	t.Helper()
	res, err := s.q.SendBatch(s.ctx(t), url, msgs)
	if err != nil {
		t.Fatalf("SendBatch: %v", err)
	}
	if len(res) != len(msgs) {
		t.Fatalf("SendBatch returned %d results for %d entries", len(res), len(msgs))
	}
	for i, r := range res {
		if r.ID != msgs[i].ID || r.Err != nil || r.MessageID == "" {
			t.Fatalf("SendBatch result %d = %+v, want success for entry %q", i, r, msgs[i].ID)
		}
	}
	return res
}

// receive calls Receive once and fails the test on error.
func (s *suite) receive(t *testing.T, url string, opts queue.ReceiveOptions) []queue.Message {
	t.Helper()
	msgs, err := s.q.Receive(s.ctx(t), url, opts)
	if err != nil {
		t.Fatalf("Receive(%+v): %v", opts, err)
	}
	if len(msgs) > max(opts.Max, 1) {
		t.Fatalf("Receive(%+v) returned %d messages", opts, len(msgs))
	}
	return msgs
}

// poll receives with short polls (Wait 0) until a message arrives or within
// passes; it returns nil if none did. It does not rely on long polls waking
// up for messages that become visible (see Features.LongPollWakesOnVisible).
func (s *suite) poll(t *testing.T, url string, opts queue.ReceiveOptions, within time.Duration) []queue.Message {
	t.Helper()
	opts.Wait = 0
	deadline := time.Now().Add(within)
	for {
		if msgs := s.receive(t, url, opts); len(msgs) > 0 {
			return msgs
		}
		if time.Now().After(deadline) {
			return nil
		}
		time.Sleep(s.u / 10)
	}
}

// pollOne is poll that requires exactly one message.
func (s *suite) pollOne(t *testing.T, url string, opts queue.ReceiveOptions, within time.Duration) queue.Message {
	t.Helper()
	msgs := s.poll(t, url, opts, within)
	if len(msgs) != 1 {
		t.Fatalf("received %d messages within %s, want 1", len(msgs), within)
	}
	return msgs[0]
}

// wantKind fails the test unless err is of kind k.
func wantKind(t *testing.T, what string, err error, k apperr.Kind) {
	t.Helper()
	if !apperr.Is(err, k) {
		t.Fatalf("%s: err = %v (kind %v), want kind %v", what, err, apperr.KindOf(err), k)
	}
}

// sameAttrs compares attribute maps, treating nil and empty alike.
func sameAttrs(a, b map[string]string) bool {
	if len(a) == 0 && len(b) == 0 {
		return true
	}
	return maps.Equal(a, b)
}

// missingURL turns the URL of an existing queue into the URL of a queue that
// does not exist. Queue URLs end with the queue name in every adapter (as in
// SQS), so replacing the last path segment is enough.
func missingURL(t *testing.T, url string) string {
	t.Helper()
	i := strings.LastIndex(url, "/")
	if i < 0 {
		t.Fatalf("queue URL %q has no path segment", url)
	}
	return url[:i+1] + uniqueName(t, "missing")
}
