package ydbstore

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ydb-platform/ydb-go-sdk/v3"
	"github.com/ydb-platform/ydb-go-sdk/v3/query"

	"ordersaga/shared/domain/store"

	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/dlq"
	"ordersaga/shared/domain/idempotency"
	"ordersaga/shared/domain/inventory"
	"ordersaga/shared/domain/order"
	"ordersaga/shared/domain/outbox"
	"ordersaga/shared/domain/payment"
	"ordersaga/shared/domain/saga"
)

// call is one tx method with sample arguments, and the error kind it must
// return when reads find no row (absent) and when they find one (present).
type call struct {
	name            string
	fn              func(context.Context, *tx) error
	absent, present apperr.Kind
}

const ok = apperr.Kind(255) // no error expected

func sampleCalls() []call {
	at := time.Date(1990, 3, 4, 5, 6, 7, 8000, time.UTC)
	flag := true
	o := order.Order{ID: "o", Items: []order.Item{{SKU: "s", Quantity: 1}}, CreatedAt: at, UpdatedAt: at, Version: 2}
	rec := idempotency.Record{Scope: "sc", Key: "k", Status: idempotency.StatusCompleted, ResponseBody: []byte("{}"),
		CreatedAt: at, ExpiresAt: at.Add(time.Hour)}
	s := saga.Instance{ID: "sg", State: saga.StatePending, NextAttemptAt: at, CreatedAt: at, Version: 2}
	le := saga.LogEntry{SagaID: "sg", Seq: 1, At: at}
	e := outbox.Event{ID: "e", Payload: []byte("{}"), Metadata: map[string]string{"a": "b"}, Status: outbox.StatusPublished,
		PublishedAt: at, Version: 2}
	st := inventory.Stock{SKU: "s", Available: 3, UpdatedAt: at, Version: 2}
	sh := inventory.Shard{SKU: "s", Shard: 3, Available: 3, UpdatedAt: at, Version: 2}
	rv := inventory.Reservation{ID: "sg", Lines: []inventory.Line{{SKU: "s", Quantity: 1}},
		Takes: []inventory.Take{{SKU: "s", Shard: 3, Quantity: 1}}, CreatedAt: at, Version: 2}
	pe := payment.Entry{ID: "sg:charge", Kind: payment.Charge, AmountMinor: 100, CreatedAt: at}
	dl := dlq.DeadLetter{ID: "d", Source: dlq.SourceOutbox, Attrs: map[string]string{"x": "y"},
		History: []dlq.Failure{{At: at}}, LastFailedAt: at, Version: 2}
	au := dlq.AuditRecord{ID: "a", At: at, Params: []byte("{}")}
	page := dlq.Page{Limit: 10, Cursor: encodeCursor(at, "d0")}
	filter := dlq.Filter{Status: dlq.StatusOpen, Source: dlq.SourceQueue, From: at, Flagged: &flag}
	nf, cf := apperr.NotFound, apperr.Conflict
	calls := []call{
		{"InsertOrder", func(c context.Context, t *tx) error { return t.InsertOrder(c, o) }, ok, cf},
		{"GetOrder", func(c context.Context, t *tx) error { _, err := t.GetOrder(c, "o"); return err }, nf, ok},
		{"UpdateOrder", func(c context.Context, t *tx) error { return t.UpdateOrder(c, o, 1) }, nf, ok},
		{"UpdateOrder stale", func(c context.Context, t *tx) error { return t.UpdateOrder(c, o, 5) }, nf, cf},
		{"ListOrdersByCustomer", func(c context.Context, t *tx) error {
			_, err := t.ListOrdersByCustomer(c, "cu", store.OrderCursor{}, 5)
			return err
		}, ok, ok},
		{"ListOrdersByCustomer after", func(c context.Context, t *tx) error {
			_, err := t.ListOrdersByCustomer(c, "cu", store.OrderCursor{CreatedAt: at, ID: "o"}, 5)
			return err
		}, ok, ok},
		{"ListOrdersByCustomer after undated", func(c context.Context, t *tx) error {
			_, err := t.ListOrdersByCustomer(c, "cu", store.OrderCursor{ID: "o"}, 5)
			return err
		}, ok, ok},
		{"InsertIdempotencyKey", func(c context.Context, t *tx) error { return t.InsertIdempotencyKey(c, rec) }, ok, cf},
		{"GetIdempotencyKey", func(c context.Context, t *tx) error { _, err := t.GetIdempotencyKey(c, "sc", "k"); return err }, nf, ok},
		{"ReplaceIdempotencyKey", func(c context.Context, t *tx) error {
			return t.ReplaceIdempotencyKey(c, rec, idempotency.Record{Scope: "sc", Key: "k"})
		}, cf, ok},
		{"DeleteIdempotencyKey", func(c context.Context, t *tx) error { return t.DeleteIdempotencyKey(c, "sc", "k") }, ok, ok},
		{"ListStaleIdempotencyKeys", func(c context.Context, t *tx) error { _, err := t.ListStaleIdempotencyKeys(c, at, 5); return err }, ok, ok},
		{"InsertSaga", func(c context.Context, t *tx) error { return t.InsertSaga(c, s) }, ok, cf},
		{"GetSaga", func(c context.Context, t *tx) error { _, err := t.GetSaga(c, "sg"); return err }, nf, ok},
		{"UpdateSaga", func(c context.Context, t *tx) error { return t.UpdateSaga(c, s, 1) }, nf, ok},
		{"ListSagasDue", func(c context.Context, t *tx) error { _, err := t.ListSagasDue(c, at, 5); return err }, ok, ok},
		{"ListSagasByState", func(c context.Context, t *tx) error {
			_, err := t.ListSagasByState(c, saga.StateRunning, at, 5)
			return err
		}, ok, ok},
		{"CountSagasUpdatedSince", func(c context.Context, t *tx) error {
			_, err := t.CountSagasUpdatedSince(c, saga.StateRunning, at, 5)
			return err
		}, ok, ok},
		{"ListSagasByState any time", func(c context.Context, t *tx) error {
			_, err := t.ListSagasByState(c, saga.StateRunning, time.Time{}, 5)
			return err
		}, ok, ok},
		{"AppendSagaLog", func(c context.Context, t *tx) error { return t.AppendSagaLog(c, le) }, ok, cf},
		{"ListSagaLog", func(c context.Context, t *tx) error { _, err := t.ListSagaLog(c, "sg"); return err }, ok, ok},
		{"InsertOutbox", func(c context.Context, t *tx) error { return t.InsertOutbox(c, e) }, ok, cf},
		{"GetOutbox", func(c context.Context, t *tx) error { _, err := t.GetOutbox(c, "e"); return err }, nf, ok},
		{"UpdateOutbox", func(c context.Context, t *tx) error { return t.UpdateOutbox(c, e, 1) }, nf, ok},
		{"ListOutboxDue", func(c context.Context, t *tx) error { _, err := t.ListOutboxDue(c, 3, at, 5); return err }, ok, ok},
		{"EarliestPending", func(c context.Context, t *tx) error { _, err := t.EarliestPending(c, []string{"o", "p"}); return err }, ok, ok},
		{"ListOutboxDueFrom", func(c context.Context, t *tx) error { _, err := t.ListOutboxDueFrom(c, 3, at, 5); return err }, ok, ok},
		// The recorder's rows read "" for every text column: ID "" is the row it finds.
		{"LeaseOutbox", func(c context.Context, t *tx) error {
			_, err := t.LeaseOutbox(c, []store.OutboxVersion{{ID: "", Version: 1}}, "r", at)
			return err
		}, ok, ok},
		{"MarkOutboxPublished", func(c context.Context, t *tx) error {
			_, err := t.MarkOutboxPublished(c, []store.OutboxVersion{{ID: "", Version: 1}}, at)
			return err
		}, ok, ok},
		{"DemoteOutbox", func(c context.Context, t *tx) error { return t.DemoteOutbox(c, []string{"", "x", ""}) }, ok, ok},
		{"OutboxBacklog", func(c context.Context, t *tx) error { _, _, err := t.OutboxBacklog(c); return err }, ok, ok},
		{"DeletePublishedOutbox", func(c context.Context, t *tx) error { _, err := t.DeletePublishedOutbox(c, at, 5); return err }, ok, ok},
		{"InsertInbox", func(c context.Context, t *tx) error { return t.InsertInbox(c, "cons", "m", at, at.Add(time.Hour)) }, ok, cf},
		{"DeleteExpiredInbox", func(c context.Context, t *tx) error { _, err := t.DeleteExpiredInbox(c, at, 5); return err }, ok, ok},
		{"GetStock", func(c context.Context, t *tx) error { _, err := t.GetStock(c, "s"); return err }, nf, ok},
		{"PutStock insert", func(c context.Context, t *tx) error { return t.PutStock(c, st, 0) }, ok, cf},
		{"PutStock update", func(c context.Context, t *tx) error { return t.PutStock(c, st, 1) }, nf, ok},
		{"ListStock", func(c context.Context, t *tx) error { _, err := t.ListStock(c); return err }, ok, ok},
		{"GetStockShard", func(c context.Context, t *tx) error { _, err := t.GetStockShard(c, "s", 3); return err }, nf, ok},
		{"PutStockShard insert", func(c context.Context, t *tx) error { return t.PutStockShard(c, sh, 0) }, ok, cf},
		{"PutStockShard update", func(c context.Context, t *tx) error { return t.PutStockShard(c, sh, 1) }, nf, ok},
		{"ListStockShards", func(c context.Context, t *tx) error { _, err := t.ListStockShards(c, "s"); return err }, ok, ok},
		{"GetReservation", func(c context.Context, t *tx) error { _, err := t.GetReservation(c, "sg"); return err }, nf, ok},
		{"InsertReservation", func(c context.Context, t *tx) error { return t.InsertReservation(c, rv) }, ok, cf},
		{"UpdateReservation", func(c context.Context, t *tx) error { return t.UpdateReservation(c, rv, 1) }, nf, ok},
		{"InsertPayment", func(c context.Context, t *tx) error { return t.InsertPayment(c, pe) }, ok, cf},
		{"GetPayment", func(c context.Context, t *tx) error { _, err := t.GetPayment(c, pe.ID); return err }, nf, ok},
		{"PaymentTotals", func(c context.Context, t *tx) error { _, _, err := t.PaymentTotals(c); return err }, ok, ok},
		{"InsertDeadLetter", func(c context.Context, t *tx) error { return t.InsertDeadLetter(c, dl) }, ok, cf},
		{"GetDeadLetter", func(c context.Context, t *tx) error { _, err := t.GetDeadLetter(c, "d"); return err }, nf, ok},
		{"FindDeadLetter", func(c context.Context, t *tx) error { _, err := t.FindDeadLetter(c, dlq.SourceSaga, "sg"); return err }, nf, ok},
		{"UpdateDeadLetter", func(c context.Context, t *tx) error { return t.UpdateDeadLetter(c, dl, 1) }, nf, ok},
		{"ListDeadLetters", func(c context.Context, t *tx) error {
			_, _, err := t.ListDeadLetters(c, dlq.Filter{}, dlq.Page{})
			return err
		}, ok, ok},
		{"ListDeadLetters by status", func(c context.Context, t *tx) error { _, _, err := t.ListDeadLetters(c, filter, page); return err }, ok, ok},
		{"DeleteDeadLetter", func(c context.Context, t *tx) error { return t.DeleteDeadLetter(c, "d") }, ok, ok},
		{"InsertAudit", func(c context.Context, t *tx) error { return t.InsertAudit(c, au) }, ok, cf},
		{"ListAudit", func(c context.Context, t *tx) error { _, err := t.ListAudit(c, 5); return err }, ok, ok},
	}
	// The dead-letter list of every filter shape: each built text is run.
	for _, sh := range allDeadLetterShapes() {
		f, p := deadLetterShapeFilter(sh, at)
		calls = append(calls, call{deadLetterShapeName(sh), func(c context.Context, t *tx) error {
			_, _, err := t.ListDeadLetters(c, f, p)
			return err
		}, ok, ok})
	}
	return calls
}

// deadLetterShapeFilter returns a filter and page of shape sh.
func deadLetterShapeFilter(sh deadLetterShape, at time.Time) (dlq.Filter, dlq.Page) {
	flag := false
	var f dlq.Filter
	if sh.status {
		f.Status = dlq.StatusOpen
	}
	if sh.source {
		f.Source = dlq.SourceOutbox
	}
	if sh.errorType {
		f.ErrorType = "timeout"
	}
	if sh.orderID {
		f.OrderID = "o"
	}
	if sh.sagaID {
		f.SagaID = "sg"
	}
	if sh.from {
		f.From = at
	}
	if sh.to {
		f.To = at.Add(time.Hour)
	}
	if sh.flagged {
		f.Flagged = &flag
	}
	p := dlq.Page{Limit: 7}
	switch sh.cursor {
	case afterDated:
		p.Cursor = encodeCursor(at.Add(time.Minute), "d9")
	case afterUndated:
		p.Cursor = encodeCursor(time.Time{}, "d9")
	}
	return f, p
}

// TestMethodsBindAndScan runs every store method against the recorder, with
// reads finding no row and then one row, checks the kinds they return, and
// that together they execute every yql const of the package.
func TestMethodsBindAndScan(t *testing.T) {
	queries := allQueries(t)
	byText := map[string]string{}
	for name, yql := range queries {
		byText[yql] = name
	}
	withGuards(queries, byText)
	rec := &recorder{t: t, queries: byText, tables: schemaTables(t), version: 1, ran: map[string]bool{}}
	cfg := Config{OutboxRetention: time.Hour}
	ctx := context.Background()
	for _, found := range []bool{false, true} {
		rec.found = found
		for _, c := range sampleCalls() {
			want := c.absent
			if found {
				want = c.present
			}
			// Immediate: every check runs at the call.
			err := c.fn(ctx, &tx{c: rec, cfg: &cfg, immediate: true})
			if (want == ok) != (err == nil) || (err != nil && !apperr.Is(err, want)) {
				t.Errorf("%s (row found: %v): got %v, want kind %v", c.name, found, err, want)
			}
			// Deferred: writes wait for the flush, which the recorder
			// checks like any statement; a check that needs no read still
			// answers at the call.
			dtx := &tx{c: rec, cfg: &cfg}
			err = c.fn(ctx, dtx)
			if err != nil && !apperr.Is(err, want) {
				t.Errorf("%s deferred (row found: %v): got %v, want nil or kind %v", c.name, found, err, want)
			}
			if err := dtx.finish(ctx); err != nil {
				t.Errorf("%s deferred: flush: %v", c.name, err)
			}
		}
	}
	// Run by Store.Migrate against the driver, outside a transaction.
	storeLevel := map[string]bool{"yqlCreateMigrationsTable": true, "yqlListMigrations": true, "yqlRecordMigration": true,
		"yqlCreateMigrationStatementsTable": true, "yqlListMigrationStatements": true, "yqlRecordMigrationStatement": true}
	for name := range queries {
		if !rec.ran[name] && !storeLevel[name] {
			t.Errorf("%s is never executed by any store method", name)
		}
	}
	checkDeclares(t, "record migration", yqlRecordMigration, migrationParams(Migration{Version: 3, Name: "0003_x.sql"}, time.Now()))
	checkDeclares(t, "record migration statement", yqlRecordMigrationStatement, statementParams(Migration{Version: 3}, 2, time.Now()))
	for name := range storeLevel {
		if !strings.HasPrefix(name, "yqlRecordMigration") && len(declares(queries[name])) != 0 {
			t.Errorf("%s must take no parameters", name)
		}
	}
}

func TestLimitsAndEmptyInputs(t *testing.T) {
	rec := &recorder{t: t, queries: map[string]string{}, ran: map[string]bool{}}
	tx := &tx{c: rec, cfg: &Config{}, immediate: true}
	ctx := context.Background()
	now := time.Date(1990, 1, 1, 0, 0, 0, 0, time.UTC)
	// limit <= 0 and empty id lists touch nothing (the recorder would
	// complain about any statement, as it knows no queries).
	if l, err := tx.ListStaleIdempotencyKeys(ctx, now, 0); l != nil || err != nil {
		t.Error("ListStaleIdempotencyKeys(0)")
	}
	if l, err := tx.ListSagasDue(ctx, now, -1); l != nil || err != nil {
		t.Error("ListSagasDue(-1)")
	}
	if n, err := tx.DeleteExpiredInbox(ctx, now, 0); n != 0 || err != nil {
		t.Error("DeleteExpiredInbox(0)")
	}
	if n, err := tx.DeletePublishedOutbox(ctx, now, 0); n != 0 || err != nil {
		t.Error("DeletePublishedOutbox(0)")
	}
	if m, err := tx.EarliestPending(ctx, nil); len(m) != 0 || err != nil {
		t.Error("EarliestPending(nil)")
	}
	if l, err := tx.ListAudit(ctx, 0); l != nil || err != nil {
		t.Error("ListAudit(0)")
	}
	if err := tx.ReplaceIdempotencyKey(ctx, idempotency.Record{Key: "a"}, idempotency.Record{Key: "b"}); !apperr.Is(err, apperr.Invalid) {
		t.Errorf("Replace with different keys: %v", err)
	}
	// A time YDB cannot store is Invalid before any statement runs.
	if err := tx.InsertOrder(ctx, order.Order{ID: "x", CreatedAt: time.Date(1960, 1, 1, 0, 0, 0, 0, time.UTC)}); !apperr.Is(err, apperr.Invalid) {
		t.Errorf("pre-1970 time: %v", err)
	}
	if len(rec.ran) != 0 {
		t.Errorf("statements ran: %v", rec.ran)
	}
}

// TestDeferredWritesTravelTogether: a closure's writes are one query, sent
// with the commit; a read of a written table flushes first.
func TestDeferredWritesTravelTogether(t *testing.T) {
	queries := allQueries(t)
	byText := map[string]string{}
	for name, yql := range queries {
		byText[yql] = name
	}
	withGuards(queries, byText)
	rec := &recorder{t: t, queries: byText, tables: schemaTables(t), version: 1, ran: map[string]bool{}}
	counter := &countingConn{OfflineConn: rec}
	at := time.Date(1990, 3, 4, 5, 6, 7, 0, time.UTC)
	err := RunOffline(context.Background(), Config{}, counter, false, func(ctx context.Context, tx store.Tx) error {
		if err := tx.InsertOrder(ctx, order.Order{ID: "o", CreatedAt: at, Version: 1}); err != nil {
			return err
		}
		if err := tx.InsertSaga(ctx, saga.Instance{ID: "s", Version: 1}); err != nil {
			return err
		}
		for _, id := range []string{"e1", "e2"} {
			if err := tx.InsertOutbox(ctx, outbox.Event{ID: id, AggregateID: "o", Payload: []byte("{}"), Version: 1}); err != nil {
				return err
			}
		}
		// Not read in this transaction: guarded.
		return tx.UpdateOutbox(ctx, outbox.Event{ID: "e0", Payload: []byte("{}"), Version: 3}, 2)
	})
	if err != nil {
		t.Fatal(err)
	}
	if counter.execs != 1 || counter.commits != 1 || counter.reads != 0 || counter.rpcs != 0 {
		t.Errorf("want one committing statement and nothing else, got %+v", counter)
	}
	if !rec.ran["yqlOutboxVersion"] || !rec.ran["yqlUpsertOutbox"] || !rec.ran["yqlInsertSaga"] {
		t.Errorf("flush did not carry every write: %v", rec.ran)
	}
	// A read of a table with a pending write flushes it first.
	counter = &countingConn{OfflineConn: rec}
	err = RunOffline(context.Background(), Config{}, counter, false, func(ctx context.Context, tx store.Tx) error {
		if err := tx.InsertOrder(ctx, order.Order{ID: "o", CreatedAt: at, Version: 1}); err != nil {
			return err
		}
		_, err := tx.GetSaga(ctx, "s") // another table: no flush
		if err != nil && !apperr.Is(err, apperr.NotFound) {
			return err
		}
		_, err = tx.GetOrder(ctx, "o")
		if err != nil && !apperr.Is(err, apperr.NotFound) {
			return err
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if counter.execs != 1 || counter.commits != 0 || counter.reads != 2 || counter.rpcs != 1 {
		t.Errorf("want flush before the order read, two reads and a commit RPC, got %+v", counter)
	}
}

// countingConn counts what passes through an OfflineConn.
type countingConn struct {
	OfflineConn
	execs, commits, reads, rpcs int
}

func (c *countingConn) Exec(ctx context.Context, yql string, p ydb.Params, commit bool) error {
	c.execs++
	if commit {
		c.commits++
	}
	return c.OfflineConn.Exec(ctx, yql, p, commit)
}

func (c *countingConn) QueryRow(ctx context.Context, yql string, p ydb.Params) (query.Row, error) {
	c.reads++
	return c.OfflineConn.QueryRow(ctx, yql, p)
}

func (c *countingConn) Commit(ctx context.Context) error {
	c.rpcs++
	return c.OfflineConn.Commit(ctx)
}
