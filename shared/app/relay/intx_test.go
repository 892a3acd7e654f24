package relay

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"ordersaga/shared/adapters/sqlitequeue"
	"ordersaga/shared/adapters/sqlitestore"
	"ordersaga/shared/domain/outbox"
	"ordersaga/shared/domain/queue"
	"ordersaga/shared/domain/store"
	"ordersaga/shared/kit/fakeclock"
)

// The in-transaction fast path against the real local stack: the store on a
// file and the embedded queue over the store's own *sql.DB.

// plainQueue hides the embedded queue's SendInTx: a queue.Queue that is no
// TxSender (the cloud's Message Queue, a decorator that does not forward).
type plainQueue struct{ queue.Queue }

type inTxFixture struct {
	path  string
	store *sqlitestore.Store
	queue *sqlitequeue.Queue
	urls  map[string]string
	clock *clock

	mu        sync.Mutex
	published map[string]int // OnPublished by destination
}

func newInTxFixture(t *testing.T) *inTxFixture {
	t.Helper()
	return newInTxFixtureOn(t, fakeclock.New(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)))
}

// newInTxFixtureOn is newInTxFixture with the store, the queue and the
// relay on clk.
func newInTxFixtureOn(t *testing.T, clk *clock) *inTxFixture {
	t.Helper()
	f := &inTxFixture{path: filepath.Join(t.TempDir(), "app.db"), clock: clk, published: map[string]int{}}
	s, err := sqlitestore.Open(context.Background(), f.path, sqlitestore.Config{Now: f.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	q, err := sqlitequeue.New(s.DB(), sqlitequeue.Config{Now: f.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = q.Close(); _ = s.Close() })
	f.store, f.queue = s, q
	f.urls = map[string]string{}
	for _, name := range []string{outbox.DestSagaCommands, outbox.DestOrderEvents} {
		u, err := q.Ensure(context.Background(), queue.QueueSpec{Name: name, VisibilityTimeout: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		f.urls[name] = u
	}
	return f
}

func (f *inTxFixture) relay(t *testing.T, q queue.Queue, urls map[string]string) *Relay {
	t.Helper()
	r, err := New(Config{Store: f.store, Queue: q, URLs: urls, Owner: "relay", Lease: 30 * time.Second,
		Now: f.clock.Now, Hooks: Hooks{OnPublished: func(dest string, n int) {
			f.mu.Lock()
			f.published[dest] += n
			f.mu.Unlock()
		}}})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// row is a new outbox row leased to the request, as the order service writes
// it; due is its NextAttemptAt.
func (f *inTxFixture) row(id, dest string, due time.Time) outbox.Event {
	now := f.clock.Now()
	return outbox.Event{ID: id, AggregateType: "order", AggregateID: "agg-" + id, EventType: outbox.TypeSagaAdvance,
		Destination: dest, Payload: []byte(`{"id":"` + id + `"}`),
		Metadata: map[string]string{outbox.AttrOrderID: "o-" + id, outbox.AttrCorrelationID: "c-" + id},
		Status:   outbox.StatusPending, NextAttemptAt: due, CreatedAt: now, Version: 1,
		LeaseOwner: "api-request", LeaseUntil: now.Add(10 * time.Second)}
}

// publishInTx runs PublishInTx and inserts the rows it returns, in one
// transaction.
func (f *inTxFixture) publishInTx(t *testing.T, r *Relay, evs []outbox.Event) []outbox.Event {
	t.Helper()
	var out []outbox.Event
	err := f.store.InTx(context.Background(), func(ctx context.Context, tx store.Tx) error {
		var err error
		if out, err = r.PublishInTx(ctx, tx, evs); err != nil {
			return err
		}
		for _, e := range out {
			if err := tx.InsertOutbox(ctx, e); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func (f *inTxFixture) insert(t *testing.T, evs []outbox.Event) {
	t.Helper()
	err := f.store.InTx(context.Background(), func(ctx context.Context, tx store.Tx) error {
		for _, e := range evs {
			if err := tx.InsertOutbox(ctx, e); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func (f *inTxFixture) get(t *testing.T, id string) outbox.Event {
	t.Helper()
	return getOutbox(t, f.store, id)
}

// storedMsg is a queue message as stored: what the relay sent.
type storedMsg struct {
	Queue, Body, Attributes string
	DelayMS                 int64
}

// messages reads every stored message by its event id attribute, through a
// read-only handle of its own.
func (f *inTxFixture) messages(t *testing.T) map[string][]storedMsg {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+f.path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT queue, body, COALESCE(attributes, ''), visible_at_ms - sent_at_ms,
		json_extract(attributes, '$.` + outbox.AttrEventID + `') FROM queue_messages`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string][]storedMsg{}
	for rows.Next() {
		var m storedMsg
		var id sql.NullString
		if err := rows.Scan(&m.Queue, &m.Body, &m.Attributes, &m.DelayMS, &id); err != nil {
			t.Fatal(err)
		}
		out[id.String] = append(out[id.String], m)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestPublishInTxWithoutTxSenderChangesNothing(t *testing.T) {
	f := newInTxFixture(t)
	// A second handle on the same file: a TxSender, but not on the store's
	// *sql.DB, so it cannot write in the store's transaction.
	sameFile, err := sqlitequeue.Open(f.path, sqlitequeue.Config{Now: f.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sameFile.Close() })
	for name, q := range map[string]queue.Queue{"plain queue": plainQueue{f.queue}, "other handle": sameFile} {
		t.Run(name, func(t *testing.T) {
			r := f.relay(t, q, f.urls)
			evs := []outbox.Event{
				f.row(name+"-1", outbox.DestSagaCommands, f.clock.Now()),
				f.row(name+"-2", outbox.DestOrderEvents, f.clock.Now()),
			}
			want := append([]outbox.Event(nil), evs...)
			out := f.publishInTx(t, r, evs)
			if !reflect.DeepEqual(out, want) || !reflect.DeepEqual(evs, want) {
				t.Errorf("PublishInTx changed the rows:\n got %+v\nwant %+v", out, want)
			}
			if got := f.messages(t); len(got) != 0 {
				t.Errorf("messages stored: %v", got)
			}
			for _, e := range evs {
				if g := f.get(t, e.ID); g.Status != outbox.StatusPending || g.LeaseOwner != "api-request" {
					t.Errorf("row %s stored %s leased to %q, want pending leased to the request", e.ID, g.Status, g.LeaseOwner)
				}
			}
		})
	}
}

func TestPublishInTxPublishesRowsWithTheRelaysMessages(t *testing.T) {
	inTx, fast := newInTxFixture(t), newInTxFixture(t)
	now := inTx.clock.Now()
	rows := func(f *inTxFixture) []outbox.Event {
		return []outbox.Event{
			f.row("due", outbox.DestSagaCommands, now),
			f.row("past", outbox.DestOrderEvents, now.Add(-time.Hour)),
			f.row("later", outbox.DestSagaCommands, now.Add(90*time.Second+500*time.Millisecond)),
			f.row("far", outbox.DestSagaCommands, now.Add(time.Hour)), // beyond the queue's longest delay: not sent
		}
	}
	const sendable = 3 // all but "far"
	r := inTx.relay(t, inTx.queue, inTx.urls)
	evs := rows(inTx)
	out := inTx.publishInTx(t, r, evs)
	if len(out) != len(evs) {
		t.Fatalf("%d rows back for %d", len(out), len(evs))
	}
	for i, e := range out {
		want := evs[i]
		if i >= sendable {
			if !reflect.DeepEqual(e, want) {
				t.Errorf("row %s due beyond the longest delay came back changed:\n got %+v\nwant %+v", e.ID, e, want)
			}
			continue
		}
		want.Status, want.PublishedAt, want.LeaseOwner, want.LeaseUntil = outbox.StatusPublished, now, "", time.Time{}
		if !reflect.DeepEqual(e, want) {
			t.Errorf("returned row %d:\n got %+v\nwant %+v", i, e, want)
		}
		g := inTx.get(t, e.ID)
		if g.Status != outbox.StatusPublished || !g.PublishedAt.Equal(now) || g.LeaseOwner != "" || !g.LeaseUntil.IsZero() {
			t.Errorf("stored row %s: status %s published %v lease %q until %v", e.ID, g.Status, g.PublishedAt, g.LeaseOwner, g.LeaseUntil)
		}
	}
	if evs[0].Status != outbox.StatusPending {
		t.Error("PublishInTx modified the caller's slice")
	}

	// The same rows through the fast path after commit (Dispatch, over a
	// queue that cannot write in the transaction).
	fevs := rows(fast)
	fast.insert(t, fevs)
	fast.relay(t, plainQueue{fast.queue}, fast.urls).Dispatch(context.Background(), fevs)
	want, got := fast.messages(t), inTx.messages(t)
	if len(want) != sendable {
		t.Fatalf("Dispatch sent %d rows, want %d", len(want), sendable)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("in-transaction messages differ from Dispatch's:\n got %+v\nwant %+v", got, want)
	}
	if d := got["later"][0].DelayMS; d != 91_000 {
		t.Errorf("delay of the later row (due in 90.5 s) = %dms, want 91000 (rounded up to whole seconds)", d)
	}
	if m, ok := got["far"]; ok {
		t.Errorf("the far row was sent: %+v", m)
	}
	if d := got["past"][0].DelayMS; d != 0 {
		t.Errorf("delay of an overdue row = %dms, want 0", d)
	}
	if q := got["past"][0].Queue; q != outbox.DestOrderEvents {
		t.Errorf("past row went to queue %q", q)
	}

	// And Run, for the due row, also sends the same message.
	run := newInTxFixture(t)
	revs := rows(run)[:1]
	revs[0].LeaseOwner, revs[0].LeaseUntil = "", time.Time{}
	run.insert(t, revs)
	if _, err := run.relay(t, run.queue, run.urls).Run(context.Background(), time.Minute); err != nil {
		t.Fatal(err)
	}
	if rm := run.messages(t); !reflect.DeepEqual(rm["due"], got["due"]) {
		t.Errorf("Run sent %+v, in-transaction %+v", rm["due"], got["due"])
	}
}

func TestPublishInTxThenDispatchSendsNothingAgain(t *testing.T) {
	f := newInTxFixture(t)
	r := f.relay(t, f.queue, f.urls)
	var evs []outbox.Event
	for i := 0; i < 23; i++ { // more than one batch of one destination
		evs = append(evs, f.row(fmt.Sprintf("s%02d", i), outbox.DestSagaCommands, f.clock.Now()))
	}
	evs = append(evs, f.row("o1", outbox.DestOrderEvents, f.clock.Now()), f.row("o2", outbox.DestOrderEvents, f.clock.Now()))
	out := f.publishInTx(t, r, evs)
	for _, e := range out {
		if e.Status != outbox.StatusPublished {
			t.Errorf("row %s returned %s", e.ID, e.Status)
		}
	}
	r.Dispatch(context.Background(), out)
	r.Dispatch(context.Background(), out) // a second call must not send either
	msgs := f.messages(t)
	if len(msgs) != len(evs) {
		t.Errorf("%d rows have messages, want %d", len(msgs), len(evs))
	}
	for _, e := range evs {
		if n := len(msgs[e.ID]); n != 1 {
			t.Errorf("row %s has %d messages, want 1", e.ID, n)
		}
	}
	for dest, want := range map[string]int{outbox.DestSagaCommands: 23, outbox.DestOrderEvents: 2} {
		vis, _, err := f.queue.Depth(context.Background(), f.urls[dest])
		if err != nil || vis != want {
			t.Errorf("%s depth %d (err %v), want %d", dest, vis, err, want)
		}
	}
	f.mu.Lock()
	if f.published[outbox.DestSagaCommands] != 2*23 || f.published[outbox.DestOrderEvents] != 2*2 {
		// Each Dispatch counts the rows it is handed that were published in
		// their transaction.
		t.Errorf("OnPublished counts %v, want 46 saga-commands and 4 order-events over two Dispatch calls", f.published)
	}
	f.mu.Unlock()
	// The relay has nothing left.
	f.clock.Advance(time.Hour)
	if rep, err := r.Run(context.Background(), time.Minute); err != nil || rep.Claimed != 0 {
		t.Errorf("relay Run after in-tx publish: %+v, %v", rep, err)
	}
}

func TestPublishInTxLeavesUnsendableRowsPending(t *testing.T) {
	f := newInTxFixture(t)
	urls := map[string]string{outbox.DestSagaCommands: f.urls[outbox.DestSagaCommands]} // no order-events URL
	r := f.relay(t, f.queue, urls)
	empty := f.row("empty", outbox.DestSagaCommands, f.clock.Now())
	empty.Payload = nil // an entry the queue refuses (empty body)
	huge := f.row("huge", outbox.DestSagaCommands, f.clock.Now())
	huge.Payload = []byte(`"` + strings.Repeat("x", queue.MaxMessageBytes) + `"`)
	evs := []outbox.Event{
		f.row("nourl", outbox.DestOrderEvents, f.clock.Now()),
		empty,
		f.row("good", outbox.DestSagaCommands, f.clock.Now()),
		huge,
	}
	out := f.publishInTx(t, r, evs)
	for i, e := range out {
		if e.ID == "good" {
			if e.Status != outbox.StatusPublished {
				t.Errorf("good row returned %s", e.Status)
			}
			continue
		}
		if !reflect.DeepEqual(e, evs[i]) {
			t.Errorf("row %s changed:\n got %+v\nwant %+v", e.ID, e, evs[i])
		}
		if g := f.get(t, e.ID); g.Status != outbox.StatusPending || g.LeaseOwner != "api-request" {
			t.Errorf("stored row %s: %s leased to %q, want pending, leased to the request", e.ID, g.Status, g.LeaseOwner)
		}
	}
	msgs := f.messages(t)
	if len(msgs) != 1 || len(msgs["good"]) != 1 {
		t.Errorf("messages %v, want only the good row's", msgs)
	}
	r.Dispatch(context.Background(), out)
	if g := f.get(t, "nourl"); g.Status != outbox.StatusPending {
		t.Errorf("row without a queue is %s after Dispatch, want pending", g.Status)
	}
	if n := len(f.messages(t)["good"]); n != 1 {
		t.Errorf("good row has %d messages after Dispatch", n)
	}
}

// A transaction that fails after PublishInTx keeps neither rows nor messages.
func TestPublishInTxRolledBack(t *testing.T) {
	f := newInTxFixture(t)
	r := f.relay(t, f.queue, f.urls)
	boom := errors.New("boom")
	err := f.store.InTx(context.Background(), func(ctx context.Context, tx store.Tx) error {
		rows, err := r.PublishInTx(ctx, tx, []outbox.Event{f.row("x", outbox.DestSagaCommands, f.clock.Now())})
		if err != nil {
			return err
		}
		for _, e := range rows {
			if err := tx.InsertOutbox(ctx, e); err != nil {
				return err
			}
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("InTx = %v", err)
	}
	if msgs := f.messages(t); len(msgs) != 0 {
		t.Errorf("messages of a rolled-back transaction: %v", msgs)
	}
}

// A database failure under the in-transaction send (here: the queue's table
// is gone) is not swallowed: PublishInTx returns it, the transaction fails,
// and nothing of it stays (the table is back, no row was written).
func TestPublishInTxDatabaseFailureFailsTheTransaction(t *testing.T) {
	f := newInTxFixture(t)
	r := f.relay(t, f.queue, f.urls)
	err := f.store.InTx(context.Background(), func(ctx context.Context, tx store.Tx) error {
		if _, err := tx.(store.SQLTx).ExecContext(ctx, `DROP TABLE queue_messages`); err != nil {
			return err
		}
		rows, err := r.PublishInTx(ctx, tx, []outbox.Event{f.row("gone", outbox.DestSagaCommands, f.clock.Now())})
		if err != nil {
			return err
		}
		for _, e := range rows {
			if err := tx.InsertOutbox(ctx, e); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil {
		t.Fatal("the transaction committed although its in-transaction send failed")
	}
	var n int
	if err := f.store.DB().QueryRow(`SELECT count(*) FROM queue_messages`).Scan(&n); err != nil {
		t.Fatalf("the queue's table did not come back with the rollback: %v", err)
	}
	if err := f.store.DB().QueryRow(`SELECT count(*) FROM outbox`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("outbox rows after the failed transaction: %d (%v), want 0", n, err)
	}
}
