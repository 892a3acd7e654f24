package redrive

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"ordersaga/shared/adapters/sqlitequeue"
	"ordersaga/shared/adapters/sqlitestore"
	"ordersaga/shared/domain/dlq"
	"ordersaga/shared/domain/outbox"
	"ordersaga/shared/domain/queue"
	"ordersaga/shared/domain/saga"
	"ordersaga/shared/domain/store"
	"ordersaga/shared/kit/fakeclock"
)

// clock is the shared settable test clock.
type clock = fakeclock.Clock

const (
	srcName = "saga-commands"
	dlqName = "saga-commands-dlq"
	// maxReceives is the source queue's maxReceiveCount.
	maxReceives = 3
	visibility  = 30 * time.Second
)

type fixture struct {
	path   string
	store  store.Store
	queue  *sqlitequeue.Queue
	clock  *clock
	svc    *Service
	srcURL string
	dlqURL string

	mu     sync.Mutex
	sleeps []time.Duration
	ids    int
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	ctx := context.Background()
	f := &fixture{path: filepath.Join(t.TempDir(), "redrive.db"),
		clock: fakeclock.New(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))}
	s, err := sqlitestore.Open(ctx, f.path, sqlitestore.Config{Now: f.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	q, err := sqlitequeue.Open(f.path, sqlitequeue.Config{Now: f.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = q.Close(); _ = s.Close() })
	f.store, f.queue = s, q
	if f.dlqURL, err = q.Ensure(ctx, queue.QueueSpec{Name: dlqName}); err != nil {
		t.Fatal(err)
	}
	f.srcURL, err = q.Ensure(ctx, queue.QueueSpec{Name: srcName, VisibilityTimeout: visibility,
		MaxReceiveCount: maxReceives, DeadLetterQueueURL: f.dlqURL})
	if err != nil {
		t.Fatal(err)
	}
	f.svc = f.service(t)
	return f
}

// service builds a Service on the fixture's store and queue; each change
// adjusts its Config first.
func (f *fixture) service(t *testing.T, changes ...func(*Config)) *Service {
	t.Helper()
	cfg := Config{
		Store: f.store, Queue: f.queue, QueueURLs: map[string]string{srcName: f.srcURL, dlqName: f.dlqURL},
		DLQs: map[string]string{dlqName: srcName}, LoopLimit: 2, MaxPerCall: 50, MaxRate: 20,
		Now: f.clock.Now, NewID: f.newID, Sleep: f.sleep, Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
	for _, c := range changes {
		c(&cfg)
	}
	svc, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return svc
}

func (f *fixture) newID() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ids++
	return fmt.Sprintf("id-%04d", f.ids)
}

func (f *fixture) sleep(_ context.Context, d time.Duration) error {
	f.mu.Lock()
	f.sleeps = append(f.sleeps, d)
	f.mu.Unlock()
	f.clock.Advance(d)
	return nil
}

// snapshot dumps every table except those in skip, rows sorted, so two
// snapshots are equal exactly when no row changed.
func (f *fixture) snapshot(t *testing.T, skip ...string) string {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+f.path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name`)
	if err != nil {
		t.Fatal(err)
	}
	var tables []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		tables = append(tables, n)
	}
	rows.Close()
	var b strings.Builder
	for _, tbl := range tables {
		if contains(skip, tbl) {
			continue
		}
		b.WriteString("== " + tbl + "\n")
		b.WriteString(dumpTable(t, db, tbl))
	}
	return b.String()
}

func dumpTable(t *testing.T, db *sql.DB, tbl string) string {
	t.Helper()
	rows, err := db.Query(`SELECT * FROM "` + tbl + `"`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var lines []string
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		lines = append(lines, fmt.Sprintf("%q", vals))
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n") + "\n"
}

func contains(xs []string, x string) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

func (f *fixture) count(t *testing.T, table string) int {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+f.path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow(`SELECT COUNT(*) FROM "` + table + `"`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func (f *fixture) get(t *testing.T, id string) dlq.DeadLetter {
	t.Helper()
	var d dlq.DeadLetter
	err := f.store.View(context.Background(), func(ctx context.Context, tx store.Tx) error {
		var err error
		d, err = tx.GetDeadLetter(ctx, id)
		return err
	})
	if err != nil {
		t.Fatalf("get dead letter %s: %v", id, err)
	}
	return d
}

func (f *fixture) all(t *testing.T) []dlq.DeadLetter {
	t.Helper()
	var out []dlq.DeadLetter
	err := f.store.View(context.Background(), func(ctx context.Context, tx store.Tx) error {
		var err error
		out, _, err = tx.ListDeadLetters(ctx, dlq.Filter{}, dlq.Page{Limit: 1000})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func (f *fixture) tx(t *testing.T, fn func(ctx context.Context, tx store.Tx) error) {
	t.Helper()
	if err := f.store.InTx(context.Background(), fn); err != nil {
		t.Fatal(err)
	}
}

// addEntry inserts an open dead letter of src with ref, failed at the clock's now.
func (f *fixture) addEntry(t *testing.T, src dlq.Source, ref string, mod func(*dlq.DeadLetter)) string {
	t.Helper()
	now := f.clock.Now()
	d := dlq.DeadLetter{ID: f.newID(), Source: src, SourceRef: ref, Queue: srcName, Payload: []byte(`{"ref":"` + ref + `"}`),
		ErrorType: "transient", Error: "boom " + ref, RetryCount: 3, FirstFailedAt: now, LastFailedAt: now,
		History: []dlq.Failure{{At: now, ErrorType: "transient", Error: "boom " + ref}}, Status: dlq.StatusOpen,
		OrderID: "o-" + ref, CreatedAt: now, UpdatedAt: now, Version: 1}
	if mod != nil {
		mod(&d)
	}
	f.tx(t, func(ctx context.Context, tx store.Tx) error { return tx.InsertDeadLetter(ctx, d) })
	return d.ID
}

// addDeadOutbox inserts a dead outbox row and its dead letter; it returns
// the entry id.
func (f *fixture) addDeadOutbox(t *testing.T, rowID string) string {
	t.Helper()
	now := f.clock.Now()
	e := outbox.Event{ID: rowID, AggregateType: "order", AggregateID: "o-" + rowID, EventType: outbox.TypeOrderCreated,
		Destination: outbox.DestOrderEvents, Payload: []byte(`{"order":"` + rowID + `"}`),
		Metadata: map[string]string{outbox.AttrOrderID: "o-" + rowID}, Status: outbox.StatusDead, Attempts: 10,
		NextAttemptAt: now.Add(-time.Minute), LeaseOwner: "relay-1", LeaseUntil: now.Add(time.Hour),
		LastError: "queue unavailable", CreatedAt: now.Add(-time.Hour), Version: 12}
	f.tx(t, func(ctx context.Context, tx store.Tx) error { return tx.InsertOutbox(ctx, e) })
	return f.addEntry(t, dlq.SourceOutbox, rowID, func(d *dlq.DeadLetter) {
		d.Queue, d.OutboxEventID = outbox.DestOrderEvents, rowID
	})
}

// addFailedSaga inserts a saga that failed compensating step 2, and its
// dead letter; it returns the entry id.
func (f *fixture) addFailedSaga(t *testing.T, sagaID string) string {
	t.Helper()
	now := f.clock.Now()
	inst := saga.Instance{ID: sagaID, Type: saga.TypeCreateOrder, State: saga.StateFailed,
		Data: saga.Data{OrderID: "o-" + sagaID, CustomerID: "c-1", Currency: "EUR", TotalMinor: 100},
		Step: 2, Attempts: 10, LeaseOwner: "adv-1", LeaseUntil: now.Add(time.Minute), NextAttemptAt: now.Add(-time.Minute),
		LastError: "refund failed", CorrelationID: "key-" + sagaID, CreatedAt: now.Add(-time.Hour), UpdatedAt: now,
		FinishedAt: now, Version: 7}
	f.tx(t, func(ctx context.Context, tx store.Tx) error { return tx.InsertSaga(ctx, inst) })
	return f.addEntry(t, dlq.SourceSaga, sagaID, func(d *dlq.DeadLetter) {
		d.SagaID, d.OrderID, d.IdempotencyKey = sagaID, "o-"+sagaID, "key-"+sagaID
		d.Attrs = map[string]string{outbox.AttrCorrelationID: "key-" + sagaID}
	})
}

func (f *fixture) mustRedrive(t *testing.T, sel Selection) Report {
	t.Helper()
	rep, err := f.svc.Redrive(context.Background(), "ops@example", sel)
	if err != nil {
		t.Fatalf("Redrive: %v", err)
	}
	return rep
}

func (f *fixture) audit(t *testing.T) []dlq.AuditRecord {
	t.Helper()
	var out []dlq.AuditRecord
	err := f.store.View(context.Background(), func(ctx context.Context, tx store.Tx) error {
		var err error
		out, err = tx.ListAudit(ctx, 1000)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
