package chaos

import (
	"context"
	"errors"
	"sync"
	"time"

	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/outbox"
	"ordersaga/shared/domain/outboxwrite"
	"ordersaga/shared/domain/queue"
	"ordersaga/shared/domain/store"
)

// faultyStore is a store.Store decorator injecting transient failures: some
// InTx calls fail before their closure runs, some after it returned (the
// decorator then fails the transaction from inside, so it rolls back), and
// some View calls fail before their closure runs. Each decision is drawn
// once per call, before the inner store runs the transaction, and holds
// for every run of the closure: a transaction the inner store runs again
// (busy, a failed group commit) fails after its work again, so whether it
// commits does not depend on how often it ran.
type faultyStore struct {
	inner  store.Store
	in     *injector
	f      *Faults
	faults *tally
}

var _ store.Store = (*faultyStore)(nil)

// The store's injected failures: a transaction refused before its
// closure runs, one failed after its work (rolled back), a read refused.
// The outage-cancel check tells them from the provider's failures by
// their text in the saga's step log (harnessFault).
var (
	errStoreDown = apperr.New(apperr.Transient, "chaos: store unavailable")
	errAfterTx   = apperr.New(apperr.Transient, "chaos: transaction aborted after its work")
	errReadsDown = apperr.New(apperr.Transient, "chaos: store unavailable for reads")
)

// InTx implements store.Store (contract of the inner store, plus injected
// Transient errors).
func (s *faultyStore) InTx(ctx context.Context, fn func(ctx context.Context, tx store.Tx) error) error {
	if s.in.fire(s.faults, "store_before_tx", s.f.StoreBefore) {
		return errStoreDown
	}
	if !s.in.fire(nil, "", s.f.StoreAfter) {
		return s.inner.InTx(ctx, fn)
	}
	err := s.inner.InTx(ctx, func(ctx context.Context, tx store.Tx) error {
		if err := fn(ctx, tx); err != nil {
			return err
		}
		return errAfterTx
	})
	if errors.Is(err, errAfterTx) {
		s.faults.add("store_after_tx_rollback", 1)
	}
	return err
}

// View implements store.Store.
func (s *faultyStore) View(ctx context.Context, fn func(ctx context.Context, tx store.Tx) error) error {
	if s.in.fire(s.faults, "store_view", s.f.StoreView) {
		return errReadsDown
	}
	return s.inner.View(ctx, fn)
}

// Close implements store.Store; the run closes the inner store itself.
func (s *faultyStore) Close() error { return nil }

// faultyQueue is a queue.Queue decorator injecting transient failures into
// SendBatch, Receive and Delete, half of them before the call (nothing
// happened) and half after it (it happened, the caller hears an error).
type faultyQueue struct {
	inner  queue.Queue
	in     *injector
	f      *Faults
	faults *tally
	// refuse, if set, fails every send to a queue that is down (an outage)
	// before anything is stored; nil means no queue is down.
	refuse func(url string) error
}

var _ queue.Queue = (*faultyQueue)(nil)

func errQueue(op string) error { return apperr.New(apperr.Transient, "chaos: queue %s failed", op) }

// Ensure implements queue.Queue (no faults: queues are set up before the run).
func (q *faultyQueue) Ensure(ctx context.Context, spec queue.QueueSpec) (string, error) {
	return q.inner.Ensure(ctx, spec)
}

// SendBatch implements queue.Queue.
func (q *faultyQueue) SendBatch(ctx context.Context, url string, msgs []queue.OutMessage) ([]queue.SendResult, error) {
	if q.refuse != nil {
		if err := q.refuse(url); err != nil {
			return nil, err
		}
	}
	if !q.in.fire(nil, "", q.f.QueueSend) {
		return q.inner.SendBatch(ctx, url, msgs)
	}
	if q.in.intn(2) == 0 {
		q.faults.add("queue_send_before", 1)
		return nil, errQueue("send")
	}
	res, err := q.inner.SendBatch(ctx, url, msgs)
	if err == nil {
		q.faults.add("queue_send_after", 1)
		err = errQueue("send answer")
		res = nil
	}
	return res, err
}

// Receive implements queue.Queue.
func (q *faultyQueue) Receive(ctx context.Context, url string, opts queue.ReceiveOptions) ([]queue.Message, error) {
	if !q.in.fire(nil, "", q.f.QueueReceive) {
		return q.inner.Receive(ctx, url, opts)
	}
	if q.in.intn(2) == 0 {
		q.faults.add("queue_receive_before", 1)
		return nil, errQueue("receive")
	}
	msgs, err := q.inner.Receive(ctx, url, opts)
	if err == nil {
		// The messages are in flight now and come back after the
		// visibility timeout.
		q.faults.add("queue_receive_after", 1)
		err = errQueue("receive answer")
		msgs = nil
	}
	return msgs, err
}

// Delete implements queue.Queue.
func (q *faultyQueue) Delete(ctx context.Context, url, handle string) error {
	if !q.in.fire(nil, "", q.f.QueueDelete) {
		return q.inner.Delete(ctx, url, handle)
	}
	if q.in.intn(2) == 0 {
		q.faults.add("queue_delete_before", 1)
		return errQueue("delete")
	}
	if err := q.inner.Delete(ctx, url, handle); err != nil {
		return err
	}
	q.faults.add("queue_delete_after", 1)
	return errQueue("delete answer")
}

// ChangeVisibility implements queue.Queue.
func (q *faultyQueue) ChangeVisibility(ctx context.Context, url, handle string, d time.Duration) error {
	return q.inner.ChangeVisibility(ctx, url, handle, d)
}

// Depth implements queue.Queue.
func (q *faultyQueue) Depth(ctx context.Context, url string) (int, int, error) {
	return q.inner.Depth(ctx, url)
}

// dropper wraps a fast-path Dispatcher: sometimes the process "dies" right
// after its commit, before dispatching, and the rows wait for the relay.
// It notes which component dispatched each event (for violation reports).
type dropper struct {
	inner   outboxwrite.Dispatcher
	in      *injector
	p       float64
	kind    string
	who     string
	crashes *tally
	origin  *origins
}

// origins remembers which fast path dispatched each outbox event. Safe for
// concurrent use.
type origins struct {
	mu sync.Mutex
	m  map[string]string
}

func (o *origins) note(events []outbox.Event, who string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, e := range events {
		o.m[e.ID] = who
	}
}

// has reports whether some fast path dispatched event id.
func (o *origins) has(id string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	_, ok := o.m[id]
	return ok
}

// of names the component that dispatched event id ("the relay" if none did).
func (o *origins) of(id string) string {
	o.mu.Lock()
	defer o.mu.Unlock()
	if who, ok := o.m[id]; ok {
		return who + "'s fast path"
	}
	return "the relay"
}

var _ outboxwrite.Dispatcher = (*dropper)(nil)

// Dispatch implements outboxwrite.Dispatcher (best effort, never fails).
func (d *dropper) Dispatch(ctx context.Context, events []outbox.Event) {
	// Drawn from the stream: a fast path dispatches after its commit, on
	// the caller's goroutine, outside any transaction.
	if len(events) > 0 && d.in.fire(d.crashes, d.kind, d.p) {
		return
	}
	d.origin.note(events, d.who)
	d.inner.Dispatch(context.WithValue(ctx, fastPathKey{}, true), events)
}

// fastPathKey marks the context of a fast-path dispatch: the relay's crash
// after a send (crashQueue) is a crash of the relay function, not of the
// writers that dispatch their rows after commit.
type fastPathKey struct{}

// rerunStore runs every transaction whose closure succeeds a second time
// after rolling the first run back, as a store does after a busy database
// or a failed group commit (Options.rerunTx). A closure that fails ends
// the transaction at once.
type rerunStore struct{ store.Store }

// errRerun rolls back the first run of a closure (rerunStore).
var errRerun = errors.New("chaos: run the transaction again")

// InTx implements store.Store.
func (s rerunStore) InTx(ctx context.Context, fn func(ctx context.Context, tx store.Tx) error) error {
	err := s.Store.InTx(ctx, func(ctx context.Context, tx store.Tx) error {
		if err := fn(ctx, tx); err != nil {
			return err
		}
		return errRerun
	})
	if !errors.Is(err, errRerun) {
		return err
	}
	return s.Store.InTx(ctx, fn)
}
