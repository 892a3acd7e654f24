package orders

// Tests of the early draft (a new order is drafted before its transaction
// and drafted again only after a long wait) and of the local fast path that
// writes no outbox row for a message sent in the transaction, when the
// store reruns the transaction's closure.

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"ordersaga/shared/adapters/sqlitequeue"
	"ordersaga/shared/adapters/sqlitestore"
	"ordersaga/shared/app/relay"
	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/idempotency"
	"ordersaga/shared/domain/order"
	"ordersaga/shared/domain/outbox"
	"ordersaga/shared/domain/queue"
	"ordersaga/shared/domain/store"
	"ordersaga/shared/kit/fakeclock"
	"ordersaga/shared/transport/identity"
)

var errRerun = errors.New("roll the first run back")

// rerunStore runs every InTx closure twice, as store.Store.InTx allows ("the
// adapter may run fn more than once"; sqlitestore's group commit does so
// when another member of the group fails after a write): the first run does
// all its work and is rolled back, the second commits.
type rerunStore struct {
	*sqlitestore.Store
	runs atomic.Int64
}

func (s *rerunStore) InTx(ctx context.Context, fn func(context.Context, store.Tx) error) error {
	err := s.Store.InTx(ctx, func(ctx context.Context, tx store.Tx) error {
		s.runs.Add(1)
		if err := fn(ctx, tx); err != nil {
			return err
		}
		return errRerun
	})
	if !errors.Is(err, errRerun) {
		return err
	}
	return s.Store.InTx(ctx, func(ctx context.Context, tx store.Tx) error {
		s.runs.Add(1)
		return fn(ctx, tx)
	})
}

// inPlacePublisher is a TxPublisher that marks the rows it sends in the
// slice it was given and returns that slice — which outboxwrite.TxPublisher's
// contract ("It returns the rows, those it sent marked published") allows.
// Its first call sends (in the transaction, so the sends vanish with a
// rollback); later calls find the queue refusing and return the rows
// unchanged, as relay.PublishInTx does for "an entry the queue refuses".
type inPlacePublisher struct {
	calls      int
	dispatched []outbox.Event
}

func (p *inPlacePublisher) PublishInTx(_ context.Context, _ store.Tx, events []outbox.Event) ([]outbox.Event, error) {
	p.calls++
	if p.calls == 1 {
		for i := range events {
			events[i].Status, events[i].LeaseOwner, events[i].LeaseUntil = outbox.StatusPublished, "", time.Time{}
		}
	}
	return events, nil
}

func (p *inPlacePublisher) Dispatch(_ context.Context, events []outbox.Event) {
	p.dispatched = append(p.dispatched, events...)
}

func rerunCmd(key string) CreateCommand {
	return CreateCommand{Caller: identity.Identity{Subject: "c"}, Key: key, RequestID: "r-" + key,
		Request: order.Request{CustomerID: "c", Currency: "RUB", Items: []order.Item{{SKU: "a", Quantity: 1, UnitPriceMinor: 10}}}}
}

func openRerunStore(t *testing.T) *sqlitestore.Store {
	t.Helper()
	st, err := sqlitestore.Open(context.Background(), filepath.Join(t.TempDir(), "rerun.db"), sqlitestore.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

// The early draft's rows (draft.events) are built once, before InTx, and
// the closure may run more than once. A TxPublisher may mark the rows in the
// slice it was given, so each run must publish a copy: otherwise a
// rolled-back first run's "published" marks survive into the second run,
// whose publish is refused, writeRest skips the InsertOutbox of both rows
// (a message sent in the transaction is its own outbox entry), and the
// committed order has no saga.advance and no order.created anywhere — the
// saga never starts.
func TestRolledBackInTxPublishDoesNotLeakIntoTheRerun(t *testing.T) {
	st := openRerunStore(t)
	rs := &rerunStore{Store: st}
	pub := &inPlacePublisher{}
	s, err := New(Config{Store: rs, Dispatcher: pub})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := s.Create(context.Background(), rerunCmd("k-rerun"))
	if err != nil {
		t.Fatal(err)
	}
	if rs.runs.Load() < 2 || pub.calls < 2 {
		t.Fatalf("closure ran %d times, PublishInTx called %d times: the rerun did not happen", rs.runs.Load(), pub.calls)
	}
	// The committed run's publish was refused: both rows must be stored
	// pending for the relay.
	err = st.View(context.Background(), func(ctx context.Context, tx store.Tx) error {
		if _, err := tx.GetOrder(ctx, resp.OrderID); err != nil {
			return fmt.Errorf("order: %w", err)
		}
		for _, e := range pub.dispatched {
			got, err := tx.GetOutbox(ctx, e.ID)
			if err != nil {
				t.Errorf("row %s (%s) of the committed order: %v; it was sent only in the rolled-back run, so it is lost", e.ID, e.EventType, err)
				continue
			}
			if got.Status != outbox.StatusPending {
				t.Errorf("row %s stored %s, want pending", e.ID, got.Status)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(pub.dispatched) != 2 {
		t.Fatalf("dispatched %d rows, want 2", len(pub.dispatched))
	}
}

// localStack is the Service over the real local fast path: the SQLite store
// and the embedded queue on one file, the relay as Dispatcher (PublishInTx
// over sqlitequeue.SendInTx).
type localStack struct {
	path      string
	st        *sqlitestore.Store
	rl        *relay.Relay
	published atomic.Int64 // relay OnPublished
}

func newLocalStack(t *testing.T) *localStack {
	t.Helper()
	ls := &localStack{path: filepath.Join(t.TempDir(), "local.db")}
	st, err := sqlitestore.Open(context.Background(), ls.path, sqlitestore.Config{})
	if err != nil {
		t.Fatal(err)
	}
	q, err := sqlitequeue.New(st.DB(), sqlitequeue.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = q.Close(); _ = st.Close() })
	urls := map[string]string{}
	for _, name := range []string{outbox.DestSagaCommands, outbox.DestOrderEvents} {
		u, err := q.Ensure(context.Background(), queue.QueueSpec{Name: name, VisibilityTimeout: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		urls[name] = u
	}
	ls.st = st
	ls.rl, err = relay.New(relay.Config{Store: st, Queue: q, URLs: urls, Owner: "relay", Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Hooks: relay.Hooks{OnPublished: func(_ string, n int) { ls.published.Add(int64(n)) }}})
	if err != nil {
		t.Fatal(err)
	}
	return ls
}

// messages counts the queued messages per outbox event id, and the outbox
// rows, read from the file.
func (ls *localStack) messages(t *testing.T) (perEvent map[string]int, perOrder map[string]map[string]int, outboxRows int) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+ls.path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT queue, json_extract(attributes, '$.` + outbox.AttrEventID + `'),
		COALESCE(json_extract(attributes, '$.` + outbox.AttrOrderID + `'), '') FROM queue_messages`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	perEvent, perOrder = map[string]int{}, map[string]map[string]int{}
	for rows.Next() {
		var q, id, orderID string
		if err := rows.Scan(&q, &id, &orderID); err != nil {
			t.Fatal(err)
		}
		perEvent[id]++
		if perOrder[orderID] == nil {
			perOrder[orderID] = map[string]int{}
		}
		perOrder[orderID][q]++
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow(`SELECT count(*) FROM outbox`).Scan(&outboxRows); err != nil {
		t.Fatal(err)
	}
	return perEvent, perOrder, outboxRows
}

// The same early draft (same ids) reused by a second run of the closure,
// after a first run that claimed the key, wrote the order and its saga and
// stored both queue messages in the transaction, then rolled back: exactly
// one order, one message per event, no outbox row, each event counted once.
func TestEarlyDraftReusedAcrossARolledBackRunOfTheRealFastPath(t *testing.T) {
	ls := newLocalStack(t)
	rs := &rerunStore{Store: ls.st}
	s, err := New(Config{Store: rs, Dispatcher: ls.rl})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := s.Create(context.Background(), rerunCmd("k-real"))
	if err != nil {
		t.Fatal(err)
	}
	if rs.runs.Load() != 2 {
		t.Fatalf("closure ran %d times, want 2", rs.runs.Load())
	}
	perEvent, perOrder, rowsN := ls.messages(t)
	if rowsN != 0 {
		t.Errorf("%d outbox rows, want 0 (both sent in the transaction)", rowsN)
	}
	for id, n := range perEvent {
		if n != 1 {
			t.Errorf("event %s queued %d times", id, n)
		}
	}
	if q := perOrder[resp.OrderID]; len(perOrder) != 1 || q[outbox.DestSagaCommands] != 1 || q[outbox.DestOrderEvents] != 1 {
		t.Errorf("messages by order %v, want one of each for %s", perOrder, resp.OrderID)
	}
	if n := ls.published.Load(); n != 2 {
		t.Errorf("outbox_published counted %d, want 2", n)
	}
}

// failingPublisher wraps the real relay: after the in-transaction send of
// the rows of an order whose key starts with "fail-", it fails the
// transaction (an error after a write: in a sqlitestore group it forces the
// rollback and the savepoint rerun of the whole group). The first caller
// holds the writer until every other caller waits for it, so the rest run
// as one group.
type failingPublisher struct {
	*relay.Relay
	keys   sync.Map // event id -> key
	gate   chan struct{}
	holdMu sync.Mutex
	held   bool
}

var errAfterInTxSend = apperr.New(apperr.Internal, "this order fails after its in-transaction send")

func (p *failingPublisher) PublishInTx(ctx context.Context, tx store.Tx, events []outbox.Event) ([]outbox.Event, error) {
	p.holdMu.Lock()
	first := !p.held
	p.held = true
	p.holdMu.Unlock()
	if first {
		<-p.gate
	}
	out, err := p.Relay.PublishInTx(ctx, tx, events)
	if err != nil {
		return out, err
	}
	for _, e := range events {
		if k := e.Metadata[outbox.AttrIdempotencyKey]; len(k) > 5 && k[:5] == "fail-" {
			return nil, errAfterInTxSend
		}
	}
	return out, nil
}

// countingStore counts InTx calls and closure runs.
type countingStore struct {
	*sqlitestore.Store
	calls, runs atomic.Int64
}

func (s *countingStore) InTx(ctx context.Context, fn func(context.Context, store.Tx) error) error {
	s.calls.Add(1)
	return s.Store.InTx(ctx, func(ctx context.Context, tx store.Tx) error {
		s.runs.Add(1)
		return fn(ctx, tx)
	})
}

// Concurrent new orders in one sqlitestore group, some failing after their
// in-transaction send: the group is rolled back and rerun with savepoints
// (each member's fn runs again with its early draft). Every order that
// succeeded has exactly one message per event and no outbox row; a failed
// one has none; outbox_published counts each sent event once.
func TestGroupRerunWithInTxSendsSendsEachEventOnce(t *testing.T) {
	ls := newLocalStack(t)
	cs := &countingStore{Store: ls.st}
	pub := &failingPublisher{Relay: ls.rl, gate: make(chan struct{})}
	s, err := New(Config{Store: cs, Dispatcher: pub})
	if err != nil {
		t.Fatal(err)
	}
	const n = 12
	var wg sync.WaitGroup
	resps := make([]Response, n)
	errs := make([]error, n)
	for i := 0; i < n; i++ {
		key := fmt.Sprint("ok-", i)
		if i%4 == 3 {
			key = fmt.Sprint("fail-", i)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			resps[i], errs[i] = s.Create(context.Background(), rerunCmd(key))
		}()
	}
	// Release the first caller once every caller has entered InTx (the
	// others then wait for the writer it holds, and run as one group).
	for cs.calls.Load() < n {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(20 * time.Millisecond) // let the last callers reach the writer's queue
	close(pub.gate)
	wg.Wait()
	if cs.runs.Load() <= cs.calls.Load() {
		t.Fatalf("%d closure runs for %d transactions: no group rerun happened, the test proves nothing", cs.runs.Load(), cs.calls.Load())
	}
	perEvent, perOrder, rowsN := ls.messages(t)
	if rowsN != 0 {
		t.Errorf("%d outbox rows, want 0", rowsN)
	}
	for id, c := range perEvent {
		if c != 1 {
			t.Errorf("event %s queued %d times", id, c)
		}
	}
	created := 0
	for i := 0; i < n; i++ {
		failing := i%4 == 3
		switch {
		case failing && !errors.Is(errs[i], errAfterInTxSend):
			t.Errorf("order %d: %v, want the injected failure", i, errs[i])
		case !failing && errs[i] != nil:
			t.Errorf("order %d: %v", i, errs[i])
		case !failing:
			created++
			q := perOrder[resps[i].OrderID]
			if q[outbox.DestSagaCommands] != 1 || q[outbox.DestOrderEvents] != 1 {
				t.Errorf("order %d (%s): messages %v, want one of each", i, resps[i].OrderID, q)
			}
		}
	}
	if len(perOrder) != created {
		t.Errorf("messages for %d orders, want %d (none of a failed one)", len(perOrder), created)
	}
	if got := ls.published.Load(); got != int64(2*created) {
		t.Errorf("outbox_published counted %d, want %d", got, 2*created)
	}
}

// hidingStore hands out transactions that are only a store.Tx: no
// KeyClaimer, no SQLTx (the YDB-like path; no in-transaction send).
type hidingStore struct{ *sqlitestore.Store }

type plainTx struct{ store.Tx }

func (s hidingStore) InTx(ctx context.Context, fn func(context.Context, store.Tx) error) error {
	return s.Store.InTx(ctx, func(ctx context.Context, tx store.Tx) error { return fn(ctx, plainTx{tx}) })
}

// On the YDB-like path (read the key, then insert or take it over) with the
// early draft: a new key, a replay, a mismatch, and the takeover of an
// expired key after the clock jumped past its TTL. The takeover writes a
// new order with its rows, stamped at the jumped time; the old order stays.
func TestEarlyDraftOnTheReadThenWritePath(t *testing.T) {
	st := openRerunStore(t)
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	clock := fakeclock.New(t0)
	disp := &recordingDispatcher{}
	s, err := New(Config{Store: hidingStore{st}, Dispatcher: disp, Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	first, err := s.Create(ctx, rerunCmd("k-ydb"))
	if err != nil || first.Replayed {
		t.Fatalf("first: %+v %v", first, err)
	}
	again, err := s.Create(ctx, rerunCmd("k-ydb"))
	if err != nil || !again.Replayed || again.OrderID != first.OrderID {
		t.Fatalf("replay: %+v %v", again, err)
	}
	other := rerunCmd("k-ydb")
	other.Request.Items[0].Quantity = 2
	if _, err := s.Create(ctx, other); !errors.Is(err, idempotency.ErrFingerprintMismatch) {
		t.Fatalf("mismatch: %v", err)
	}
	clock.Advance(idempotency.TTL + time.Minute)
	taken, err := s.Create(ctx, other)
	if err != nil || taken.Replayed || taken.OrderID == first.OrderID {
		t.Fatalf("takeover of the expired key: %+v %v", taken, err)
	}
	err = st.View(ctx, func(ctx context.Context, tx store.Tx) error {
		rec, err := tx.GetIdempotencyKey(ctx, "c", "k-ydb")
		if err != nil {
			return err
		}
		if rec.ResourceID != taken.OrderID || !rec.CreatedAt.Equal(clock.Now()) {
			t.Errorf("key now %+v, want order %s created at %v", rec, taken.OrderID, clock.Now())
		}
		for _, id := range []string{first.OrderID, taken.OrderID} {
			if _, err := tx.GetOrder(ctx, id); err != nil {
				t.Errorf("order %s: %v", id, err)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(disp.got) != 4 {
		t.Errorf("dispatched %d rows for two new orders, want 4", len(disp.got))
	}
}

// A failed INSERT of the queue message inside the order's transaction (a
// trigger aborts it for one key): the order fails as a whole — no key, no
// order, no message, no outbox row — and the next order on the same stack
// is written and sent normally (the writer is not left in a broken
// transaction).
func TestFailedQueueInsertFailsTheOrderAndLeavesNothing(t *testing.T) {
	ls := newLocalStack(t)
	err := ls.st.InTx(context.Background(), func(ctx context.Context, tx store.Tx) error {
		_, err := tx.(store.SQLTx).ExecContext(ctx, `CREATE TRIGGER refuse_queue_insert BEFORE INSERT ON queue_messages
			WHEN json_extract(NEW.attributes, '$.`+outbox.AttrIdempotencyKey+`') = 'k-bad'
			BEGIN SELECT RAISE(ABORT, 'queue insert refused'); END`)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{Store: ls.st, Dispatcher: ls.rl})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Create(context.Background(), rerunCmd("k-bad")); err == nil {
		t.Fatal("the order whose queue insert failed was created")
	}
	good, err := s.Create(context.Background(), rerunCmd("k-good"))
	if err != nil {
		t.Fatal(err)
	}
	err = ls.st.View(context.Background(), func(ctx context.Context, tx store.Tx) error {
		if _, err := tx.GetIdempotencyKey(ctx, "c", "k-bad"); !apperr.Is(err, apperr.NotFound) {
			t.Errorf("key of the failed order: %v, want NotFound", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	_, perOrder, rowsN := ls.messages(t)
	if rowsN != 0 {
		t.Errorf("%d outbox rows, want 0", rowsN)
	}
	if q := perOrder[good.OrderID]; len(perOrder) != 1 || q[outbox.DestSagaCommands] != 1 || q[outbox.DestOrderEvents] != 1 {
		t.Errorf("messages by order %v, want only the good order's two", perOrder)
	}
	db, err := sql.Open("sqlite", "file:"+ls.path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var orders int
	if err := db.QueryRow(`SELECT count(*) FROM orders`).Scan(&orders); err != nil || orders != 1 {
		t.Errorf("%d orders (%v), want 1", orders, err)
	}
}
