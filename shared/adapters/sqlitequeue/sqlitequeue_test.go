package sqlitequeue

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/queue"
)

// fakeClock is a settable clock.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// seqIDs returns a deterministic id generator.
func seqIDs() func() string {
	var mu sync.Mutex
	n := 0
	return func() string {
		mu.Lock()
		defer mu.Unlock()
		n++
		return fmt.Sprintf("id-%03d", n)
	}
}

func newFake(t *testing.T) (*Queue, *fakeClock) {
	t.Helper()
	clock := &fakeClock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	return openTemp(t, Config{Now: clock.Now, NewID: seqIDs()}), clock
}

func mustEnsure(t *testing.T, q queue.Queue, spec queue.QueueSpec) string {
	t.Helper()
	u, err := q.Ensure(context.Background(), spec)
	if err != nil {
		t.Fatalf("Ensure(%+v): %v", spec, err)
	}
	return u
}

func mustSend(t *testing.T, q queue.Queue, url string, msgs ...queue.OutMessage) {
	t.Helper()
	res, err := q.SendBatch(context.Background(), url, msgs)
	if err != nil {
		t.Fatalf("SendBatch: %v", err)
	}
	for _, r := range res {
		if r.Err != nil {
			t.Fatalf("SendBatch entry %s: %v", r.ID, r.Err)
		}
	}
}

func mustReceive(t *testing.T, q queue.Queue, url string, opts queue.ReceiveOptions) []queue.Message {
	t.Helper()
	msgs, err := q.Receive(context.Background(), url, opts)
	if err != nil {
		t.Fatalf("Receive: %v", err)
	}
	return msgs
}

func TestVisibilityWithClock(t *testing.T) {
	q, clock := newFake(t)
	url := mustEnsure(t, q, queue.QueueSpec{Name: "q", VisibilityTimeout: 10 * time.Second})
	mustSend(t, q, url, queue.OutMessage{ID: "a", Body: "x"})
	first := mustReceive(t, q, url, queue.ReceiveOptions{})
	if len(first) != 1 || first[0].MessageID != "id-001" || first[0].ReceiptHandle != "id-002" {
		t.Fatalf("first receive = %+v", first)
	}
	if !first[0].SentAt.Equal(clock.Now()) {
		t.Errorf("SentAt = %v, want %v", first[0].SentAt, clock.Now())
	}
	clock.Advance(10*time.Second - time.Millisecond)
	if got := mustReceive(t, q, url, queue.ReceiveOptions{}); len(got) != 0 {
		t.Fatalf("delivered again 1ms before the visibility timeout: %+v", got)
	}
	clock.Advance(time.Millisecond)
	second := mustReceive(t, q, url, queue.ReceiveOptions{})
	if len(second) != 1 || second[0].ReceiveCount != 2 || second[0].ReceiptHandle == first[0].ReceiptHandle {
		t.Fatalf("second receive = %+v, want count 2 and a new handle", second)
	}
	// The first delivery's handle is stale: deleting with it succeeds but
	// leaves the message (SQS semantics); the current handle deletes it.
	if err := q.Delete(context.Background(), url, first[0].ReceiptHandle); err != nil {
		t.Fatalf("Delete(stale): %v", err)
	}
	if v, f, _ := q.Depth(context.Background(), url); v != 0 || f != 1 {
		t.Fatalf("Depth after stale delete = %d, %d; want 0, 1", v, f)
	}
	if err := q.ChangeVisibility(context.Background(), url, first[0].ReceiptHandle, 0); !apperr.Is(err, apperr.NotFound) {
		t.Fatalf("ChangeVisibility(stale) = %v, want NotFound", err)
	}
	if err := q.Delete(context.Background(), url, second[0].ReceiptHandle); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if v, f, _ := q.Depth(context.Background(), url); v != 0 || f != 0 {
		t.Fatalf("Depth after delete = %d, %d; want 0, 0", v, f)
	}
}

func TestRedriveOnVisibilityExpiry(t *testing.T) {
	q, clock := newFake(t)
	dlq := mustEnsure(t, q, queue.QueueSpec{Name: "dlq"})
	src := mustEnsure(t, q, queue.QueueSpec{Name: "src", VisibilityTimeout: time.Second, MaxReceiveCount: 1, DeadLetterQueueURL: dlq})
	sentAt := clock.Now()
	mustSend(t, q, src, queue.OutMessage{ID: "a", Body: "poison", Attributes: map[string]string{"k": "v"}})
	if got := mustReceive(t, q, src, queue.ReceiveOptions{}); len(got) != 1 {
		t.Fatalf("first receive = %+v", got)
	}
	clock.Advance(time.Second)
	if v, f, _ := q.Depth(context.Background(), src); v != 1 || f != 0 {
		t.Fatalf("Depth after expiry = %d, %d; want 1, 0 (moves on the next receive)", v, f)
	}
	if got := mustReceive(t, q, src, queue.ReceiveOptions{Max: 10}); len(got) != 0 {
		t.Fatalf("receive past MaxReceiveCount = %+v, want none", got)
	}
	got := mustReceive(t, q, dlq, queue.ReceiveOptions{Max: 10})
	if len(got) != 1 {
		t.Fatalf("DLQ receive = %+v", got)
	}
	m := got[0]
	if m.MessageID != "id-001" || m.Body != "poison" || m.Attributes["k"] != "v" || m.ReceiveCount != 1 || !m.SentAt.Equal(sentAt) {
		t.Errorf("DLQ message = %+v", m)
	}
	if v, f, _ := q.Depth(context.Background(), src); v != 0 || f != 0 {
		t.Errorf("source Depth = %d, %d; want 0, 0", v, f)
	}
}

func TestRedriveKeepsFillingTheBatch(t *testing.T) {
	q, _ := newFake(t)
	dlq := mustEnsure(t, q, queue.QueueSpec{Name: "dlq"})
	src := mustEnsure(t, q, queue.QueueSpec{Name: "src", MaxReceiveCount: 1, DeadLetterQueueURL: dlq})
	mustSend(t, q, src, queue.OutMessage{ID: "a", Body: "poison"})
	p := mustReceive(t, q, src, queue.ReceiveOptions{})
	if err := q.ChangeVisibility(context.Background(), src, p[0].ReceiptHandle, 0); err != nil {
		t.Fatal(err)
	}
	mustSend(t, q, src, queue.OutMessage{ID: "b", Body: "good1"}, queue.OutMessage{ID: "c", Body: "good2"})
	got := mustReceive(t, q, src, queue.ReceiveOptions{Max: 2})
	if len(got) != 2 || got[0].Body != "good1" || got[1].Body != "good2" {
		t.Fatalf("receive = %+v, want the two good messages (poison moved)", got)
	}
}

func TestDelayWithClock(t *testing.T) {
	q, clock := newFake(t)
	url := mustEnsure(t, q, queue.QueueSpec{Name: "q"})
	mustSend(t, q, url, queue.OutMessage{ID: "a", Body: "later", Delay: time.Minute})
	if v, f, _ := q.Depth(context.Background(), url); v != 0 || f != 0 {
		t.Fatalf("Depth of a delayed message = %d, %d; want 0, 0", v, f)
	}
	if got := mustReceive(t, q, url, queue.ReceiveOptions{}); len(got) != 0 {
		t.Fatalf("delayed message delivered early")
	}
	clock.Advance(time.Minute)
	if got := mustReceive(t, q, url, queue.ReceiveOptions{}); len(got) != 1 {
		t.Fatalf("delayed message not delivered after its delay")
	}
}

func TestBadURLs(t *testing.T) {
	q, _ := newFake(t)
	ctx := context.Background()
	for _, u := range []string{"", "sqlitequeue://q", "http://host/q", "sqlitequeue:///bad name", "sqlitequeue:///a/b"} {
		_, err := q.Receive(ctx, u, queue.ReceiveOptions{})
		if !apperr.Is(err, apperr.Invalid) {
			t.Errorf("Receive(%q) = %v, want Invalid", u, err)
		}
		_, err = q.Ensure(ctx, queue.QueueSpec{Name: "x", MaxReceiveCount: 1, DeadLetterQueueURL: u})
		if !apperr.Is(err, apperr.Invalid) {
			t.Errorf("Ensure(dlq %q) = %v, want Invalid", u, err)
		}
	}
}

func TestOpenRejectsBadPaths(t *testing.T) {
	for _, p := range []string{"", ":memory:", "x.db?mode=ro", "x#y"} {
		if _, err := Open(p, Config{}); !apperr.Is(err, apperr.Invalid) {
			t.Errorf("Open(%q) = %v, want Invalid", p, err)
		}
	}
	if _, err := New(nil, Config{}); !apperr.Is(err, apperr.Invalid) {
		t.Errorf("New(nil) = %v, want Invalid", err)
	}
}

func TestReceiveCancelled(t *testing.T) {
	q := openTemp(t, Config{})
	url := mustEnsure(t, q, queue.QueueSpec{Name: "q"})
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(20 * time.Millisecond); cancel() }()
	_, err := q.Receive(ctx, url, queue.ReceiveOptions{Wait: 20 * time.Second})
	if !apperr.Is(err, apperr.Transient) {
		t.Fatalf("cancelled long poll = %v, want Transient", err)
	}
}

func TestEnsureUpdatesSettings(t *testing.T) {
	q, clock := newFake(t)
	spec := queue.QueueSpec{Name: "q", VisibilityTimeout: time.Hour}
	url := mustEnsure(t, q, spec)
	spec.VisibilityTimeout = time.Second
	if again := mustEnsure(t, q, spec); again != url {
		t.Fatalf("URL changed: %q then %q", url, again)
	}
	mustSend(t, q, url, queue.OutMessage{ID: "a", Body: "x"})
	mustReceive(t, q, url, queue.ReceiveOptions{})
	clock.Advance(time.Second)
	if got := mustReceive(t, q, url, queue.ReceiveOptions{}); len(got) != 1 {
		t.Fatalf("new visibility timeout not applied")
	}
}
