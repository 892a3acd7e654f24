package outboxwrite_test

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/outbox"
	"ordersaga/shared/domain/outboxwrite"
	"ordersaga/shared/domain/store"
)

// fakeTx records the outbox reads and inserts; every other method of
// store.Tx is unused here (nil embedded interface).
type fakeTx struct {
	store.Tx
	older    map[string]string
	reads    int
	inserted []string
}

func (t *fakeTx) EarliestPending(_ context.Context, ids []string) (map[string]string, error) {
	t.reads++
	return t.older, nil
}

func (t *fakeTx) InsertOutbox(_ context.Context, e outbox.Event) error {
	t.inserted = append(t.inserted, e.ID)
	return nil
}

// publisher sends every row it is given, marking the slice it got.
type publisher struct {
	got        []string
	dispatched []string
	deadline   time.Duration
	err        error
}

func (p *publisher) PublishInTx(_ context.Context, _ store.Tx, events []outbox.Event) ([]outbox.Event, error) {
	if p.err != nil {
		return nil, p.err
	}
	for i := range events {
		p.got = append(p.got, events[i].ID)
		events[i].Status, events[i].LeaseOwner, events[i].LeaseUntil = outbox.StatusPublished, "", time.Time{}
	}
	return events, nil
}

func (p *publisher) Dispatch(ctx context.Context, events []outbox.Event) {
	if d, ok := ctx.Deadline(); ok {
		p.deadline = time.Until(d)
	}
	for _, e := range events {
		p.dispatched = append(p.dispatched, e.ID)
	}
}

// dispatcher can only dispatch after commit.
type dispatcher struct{ n int }

func (d *dispatcher) Dispatch(_ context.Context, events []outbox.Event) { d.n += len(events) }

var now = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func row(id, agg, dest string, leased bool) outbox.Event {
	e := outbox.Event{ID: id, AggregateID: agg, Destination: dest, Status: outbox.StatusPending, NextAttemptAt: now, Version: 1}
	if leased {
		e.LeaseOwner, e.LeaseUntil = "w", now.Add(10*time.Second)
	}
	return e
}

// A Dispatcher that is a TxPublisher publishes the leased rows in the
// transaction (not the carried one): no row is inserted for them, and they
// are returned for Dispatch; the slice given is left unmarked.
func TestWritePublishesInTxWhenTheDispatcherCan(t *testing.T) {
	p := &publisher{}
	w := newWriter(t, outboxwrite.Config{Dispatcher: p})
	tx := &fakeTx{}
	events := []outbox.Event{row("carried", "s1", outbox.DestSagaCommands, true), row("cmd", "s2", outbox.DestSagaCommands, true),
		row("plain", "s3", outbox.DestSagaCommands, false)}
	got, err := w.Write(context.Background(), tx, events, "carried")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(p.got, []string{"cmd"}) || !reflect.DeepEqual(tx.inserted, []string{"carried", "plain"}) {
		t.Fatalf("published %v, inserted %v; want [cmd], [carried plain]", p.got, tx.inserted)
	}
	if len(got) != 2 || got[0].ID != "carried" || got[1].ID != "cmd" || got[1].Status != outbox.StatusPublished {
		t.Fatalf("returned %+v, want carried (pending) and cmd (published)", got)
	}
	if tx.reads != 0 {
		t.Fatalf("%d outbox reads for saga commands, want 0", tx.reads)
	}
	for _, e := range events {
		if e.Status != outbox.StatusPending {
			t.Fatalf("the caller's row %s was marked %s", e.ID, e.Status)
		}
	}
}

// A plain Dispatcher (no TxPublisher) inserts every row; the leased ones
// are returned for the dispatch after commit.
func TestWriteInsertsWhenTheDispatcherCannotPublishInTx(t *testing.T) {
	d := &dispatcher{}
	tx := &fakeTx{}
	got, err := newWriter(t, outboxwrite.Config{Dispatcher: d}).Write(context.Background(), tx,
		[]outbox.Event{row("a", "s1", outbox.DestSagaCommands, true), row("b", "s2", outbox.DestSagaCommands, false)}, "")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(tx.inserted, []string{"a", "b"}) || len(got) != 1 || got[0].ID != "a" {
		t.Fatalf("inserted %v, returned %v; want [a b], [a]", tx.inserted, got)
	}
}

// An order event behind an older pending row of its order is stored
// without a lease, neither published in the transaction nor returned;
// WriteNew reads nothing (a new aggregate has no older row).
func TestWriteLeavesAnEventBehindAnOlderOneToTheRelay(t *testing.T) {
	p := &publisher{}
	w := newWriter(t, outboxwrite.Config{Dispatcher: p})
	tx := &fakeTx{older: map[string]string{"o1": "old"}}
	got, err := w.Write(context.Background(), tx, []outbox.Event{row("behind", "o1", outbox.DestOrderEvents, true),
		row("free", "o2", outbox.DestOrderEvents, true)}, "")
	if err != nil {
		t.Fatal(err)
	}
	if tx.reads != 1 || !reflect.DeepEqual(p.got, []string{"free"}) || !reflect.DeepEqual(tx.inserted, []string{"behind"}) ||
		len(got) != 1 || got[0].ID != "free" {
		t.Fatalf("reads %d, published %v, inserted %v, returned %v", tx.reads, p.got, tx.inserted, got)
	}
	tx2 := &fakeTx{older: map[string]string{"o1": "old"}}
	if _, err := w.WriteNew(context.Background(), tx2, []outbox.Event{row("new", "o1", outbox.DestOrderEvents, true)}); err != nil {
		t.Fatal(err)
	}
	if tx2.reads != 0 || len(tx2.inserted) != 0 {
		t.Fatalf("WriteNew: reads %d, inserted %v; want 0 reads, the row published", tx2.reads, tx2.inserted)
	}
}

// A failed in-transaction publish fails the write, inserting nothing.
func TestWriteFailsWithThePublish(t *testing.T) {
	boom := errors.New("database gone")
	tx := &fakeTx{}
	_, err := newWriter(t, outboxwrite.Config{Dispatcher: &publisher{err: boom}}).Write(context.Background(), tx,
		[]outbox.Event{row("a", "s1", outbox.DestSagaCommands, true)}, "")
	if !errors.Is(err, boom) || len(tx.inserted) != 0 {
		t.Fatalf("err %v, inserted %v; want %v and nothing", err, tx.inserted, boom)
	}
}

// Dispatch bounds the dispatcher by the configured timeout (the default
// when none is set) and does nothing without a dispatcher or rows.
func TestDispatchBoundsByTheTimeout(t *testing.T) {
	for _, tc := range []struct {
		set, want time.Duration
	}{{0, outboxwrite.DefaultTimeout}, {500 * time.Millisecond, 500 * time.Millisecond}} {
		p := &publisher{}
		newWriter(t, outboxwrite.Config{Dispatcher: p, Timeout: tc.set}).Dispatch(context.Background(), []outbox.Event{row("a", "s", outbox.DestSagaCommands, true)})
		if len(p.dispatched) != 1 || p.deadline <= tc.want-time.Second/4 || p.deadline > tc.want {
			t.Errorf("timeout %v: dispatched %v within %v, want within %v", tc.set, p.dispatched, p.deadline, tc.want)
		}
		p2 := &publisher{}
		newWriter(t, outboxwrite.Config{Dispatcher: p2, Timeout: tc.set}).Dispatch(context.Background(), nil)
		if len(p2.dispatched) != 0 || p2.deadline != 0 {
			t.Errorf("dispatched with no rows")
		}
	}
	if newWriter(t, outboxwrite.Config{}).Dispatches() || !newWriter(t, outboxwrite.Config{Dispatcher: &dispatcher{}}).Dispatches() {
		t.Error("Dispatches reports the wrong thing")
	}
	outboxwrite.Writer{}.Dispatch(context.Background(), []outbox.Event{row("a", "s", outbox.DestSagaCommands, true)}) // no panic
}

// Chain falls back for the correlation id and the idempotency key and
// leaves empty values out.
func TestChain(t *testing.T) {
	got := outboxwrite.Chain("", "key", "corr", "o1", "")
	want := map[string]string{outbox.AttrCorrelationID: "corr", outbox.AttrIdempotencyKey: "key", outbox.AttrOrderID: "o1"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Chain = %v, want %v", got, want)
	}
	got = outboxwrite.Chain("req", "", "corr", "", "s1")
	want = map[string]string{outbox.AttrCorrelationID: "req", outbox.AttrIdempotencyKey: "corr", outbox.AttrSagaID: "s1"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Chain = %v, want %v", got, want)
	}
	if got := outboxwrite.Chain("", "", "", "", ""); len(got) != 0 {
		t.Fatalf("Chain of nothing = %v, want empty", got)
	}
}

// newWriter is outboxwrite.New for a Config the test knows is valid.
func newWriter(t *testing.T, cfg outboxwrite.Config) outboxwrite.Writer {
	t.Helper()
	w, err := outboxwrite.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// A zero Timeout is the default (TestDispatchBoundsByTheTimeout); a
// negative one is refused with an error naming the field.
func TestNewRefusesNegativeTimeout(t *testing.T) {
	w, err := outboxwrite.New(outboxwrite.Config{Dispatcher: &dispatcher{}, Timeout: -time.Second})
	if !apperr.Is(err, apperr.Invalid) || !strings.Contains(err.Error(), "Timeout must not be negative (got -1s)") {
		t.Fatalf("err = %v, want Invalid naming Timeout", err)
	}
	if w.Dispatches() {
		t.Error("a refused Config still gave a Writer that dispatches")
	}
}
