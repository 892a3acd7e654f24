package ydbtrips

import (
	"context"
	"time"

	"ordersaga/shared/adapters/ydbstore"
	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/dlq"
	"ordersaga/shared/domain/idempotency"
	"ordersaga/shared/domain/inventory"
	"ordersaga/shared/domain/order"
	"ordersaga/shared/domain/outbox"
	"ordersaga/shared/domain/payment"
	"ordersaga/shared/domain/saga"
	"ordersaga/shared/domain/store"
)

// Twin is a store.Store that runs every transaction on Inner (the data,
// the results the business code sees) and replays it on the YDB adapter
// over a TripCounter (the count). Not safe for concurrent transactions.
type Twin struct {
	Inner store.Store
	Cfg   ydbstore.Config
	// AfterSave, if set, is called after each transaction that appended a
	// saga-log line committed: the end of a saga step's save, where
	// Measure cuts a chain of steps run by one message into steps.
	AfterSave func()
	rec       TripCounter
}

var _ store.Store = (*Twin)(nil)

// Take returns the trips counted since the last Take and starts afresh.
func (w *Twin) Take() Trips {
	t := w.rec.Trips
	w.rec.Trips = Trips{}
	return t
}

// InTx implements store.Store.
func (w *Twin) InTx(ctx context.Context, fn func(context.Context, store.Tx) error) error {
	return w.run(ctx, false, fn)
}

// View implements store.Store.
func (w *Twin) View(ctx context.Context, fn func(context.Context, store.Tx) error) error {
	return w.run(ctx, true, fn)
}

// Close implements store.Store (Inner is the caller's).
func (w *Twin) Close() error { return nil }

func (w *Twin) run(ctx context.Context, readOnly bool, fn func(context.Context, store.Tx) error) error {
	inner := w.Inner.InTx
	if readOnly {
		inner = w.Inner.View
	}
	var fnErr error
	stepSaved := false
	err := inner(ctx, func(ctx context.Context, stx store.Tx) error {
		ran := false
		err := ydbstore.RunOffline(ctx, w.Cfg, &w.rec, readOnly, func(ctx context.Context, ytx store.Tx) error {
			if ran { // the adapter reran the closure: replaying it is impossible
				return apperr.New(apperr.Internal, "ydbtrips: the adapter reran a closure")
			}
			ran = true
			ttx := &twinTx{s: stx, y: ytx, rec: &w.rec}
			fnErr = fn(ctx, ttx)
			stepSaved = ttx.appendedLog
			return fnErr
		})
		if fnErr == nil && err != nil {
			return err
		}
		return fnErr
	})
	if err == nil && stepSaved && w.AfterSave != nil {
		w.AfterSave()
	}
	return err
}

// twinTx calls s (whose results it returns) and y (whose requests count).
type twinTx struct {
	s   store.Tx
	y   store.Tx
	rec *TripCounter
	// appendedLog: the closure appended a saga-log line (a step's save).
	appendedLog bool
}

// answer sets what the adapter's reads return for the next call.
func (t *twinTx) answer(rows ...map[string]any) { t.rec.Rows = rows }

// present is one row if err is nil (version v), else none.
func (t *twinTx) present(err error, v int64) {
	if err == nil {
		t.answer(map[string]any{"version": v})
	} else {
		t.answer()
	}
}

// inserted answers a key pre-read: a row exists if the insert conflicted.
func (t *twinTx) inserted(err error) {
	if apperr.Is(err, apperr.Conflict) {
		t.answer(map[string]any{"version": int64(1)})
	} else {
		t.answer()
	}
}

// updated answers a version read for an Update* that returned err.
func (t *twinTx) updated(err error, expected int64) {
	switch {
	case err == nil:
		t.answer(map[string]any{"version": expected})
	case apperr.Is(err, apperr.Conflict):
		t.answer(map[string]any{"version": expected + 1})
	default:
		t.answer()
	}
}

func n(k int) []map[string]any {
	rows := make([]map[string]any, k)
	for i := range rows {
		rows[i] = map[string]any{"id": "x"}
	}
	return rows
}

func (t *twinTx) InsertOrder(ctx context.Context, o order.Order) error {
	err := t.s.InsertOrder(ctx, o)
	t.inserted(err)
	_ = t.y.InsertOrder(ctx, o)
	return err
}

func (t *twinTx) GetOrder(ctx context.Context, id string) (order.Order, error) {
	o, err := t.s.GetOrder(ctx, id)
	t.present(err, o.Version)
	_, _ = t.y.GetOrder(ctx, id)
	return o, err
}

func (t *twinTx) UpdateOrder(ctx context.Context, o order.Order, v int64) error {
	err := t.s.UpdateOrder(ctx, o, v)
	t.updated(err, v)
	_ = t.y.UpdateOrder(ctx, o, v)
	return err
}

func (t *twinTx) InsertIdempotencyKey(ctx context.Context, r idempotency.Record) error {
	err := t.s.InsertIdempotencyKey(ctx, r)
	t.inserted(err)
	_ = t.y.InsertIdempotencyKey(ctx, r)
	return err
}

func (t *twinTx) GetIdempotencyKey(ctx context.Context, scope, key string) (idempotency.Record, error) {
	r, err := t.s.GetIdempotencyKey(ctx, scope, key)
	t.present(err, 0)
	_, _ = t.y.GetIdempotencyKey(ctx, scope, key)
	return r, err
}

func (t *twinTx) ReplaceIdempotencyKey(ctx context.Context, r, prev idempotency.Record) error {
	err := t.s.ReplaceIdempotencyKey(ctx, r, prev)
	if err == nil {
		t.answer(map[string]any{"fingerprint": prev.Fingerprint, "status": string(prev.Status), "expires_at": prev.ExpiresAt})
	} else {
		t.answer()
	}
	_ = t.y.ReplaceIdempotencyKey(ctx, r, prev)
	return err
}

func (t *twinTx) DeleteIdempotencyKey(ctx context.Context, scope, key string) error {
	err := t.s.DeleteIdempotencyKey(ctx, scope, key)
	_ = t.y.DeleteIdempotencyKey(ctx, scope, key)
	return err
}

func (t *twinTx) ListStaleIdempotencyKeys(ctx context.Context, now time.Time, limit int) ([]idempotency.Record, error) {
	l, err := t.s.ListStaleIdempotencyKeys(ctx, now, limit)
	t.answer(n(len(l))...)
	_, _ = t.y.ListStaleIdempotencyKeys(ctx, now, limit)
	return l, err
}

func (t *twinTx) InsertSaga(ctx context.Context, s saga.Instance) error {
	err := t.s.InsertSaga(ctx, s)
	t.inserted(err)
	_ = t.y.InsertSaga(ctx, s)
	return err
}

func (t *twinTx) GetSaga(ctx context.Context, id string) (saga.Instance, error) {
	s, err := t.s.GetSaga(ctx, id)
	t.present(err, s.Version)
	_, _ = t.y.GetSaga(ctx, id)
	return s, err
}

func (t *twinTx) UpdateSaga(ctx context.Context, s saga.Instance, v int64) error {
	err := t.s.UpdateSaga(ctx, s, v)
	t.updated(err, v)
	_ = t.y.UpdateSaga(ctx, s, v)
	return err
}

func (t *twinTx) ListSagasDue(ctx context.Context, now time.Time, limit int) ([]saga.Instance, error) {
	l, err := t.s.ListSagasDue(ctx, now, limit)
	t.answer(n(len(l))...)
	_, _ = t.y.ListSagasDue(ctx, now, limit)
	return l, err
}

func (t *twinTx) ListSagasByState(ctx context.Context, st saga.State, before time.Time, limit int) ([]saga.Instance, error) {
	l, err := t.s.ListSagasByState(ctx, st, before, limit)
	t.answer(n(len(l))...)
	_, _ = t.y.ListSagasByState(ctx, st, before, limit)
	return l, err
}

func (t *twinTx) CountSagasUpdatedSince(ctx context.Context, st saga.State, since time.Time, limit int) (int, error) {
	c, err := t.s.CountSagasUpdatedSince(ctx, st, since, limit)
	t.answer(n(c)...)
	_, _ = t.y.CountSagasUpdatedSince(ctx, st, since, limit)
	return c, err
}

func (t *twinTx) AppendSagaLog(ctx context.Context, e saga.LogEntry) error {
	err := t.s.AppendSagaLog(ctx, e)
	t.appendedLog = t.appendedLog || err == nil
	t.inserted(err)
	_ = t.y.AppendSagaLog(ctx, e)
	return err
}

func (t *twinTx) ListSagaLog(ctx context.Context, id string) ([]saga.LogEntry, error) {
	l, err := t.s.ListSagaLog(ctx, id)
	t.answer(n(len(l))...)
	_, _ = t.y.ListSagaLog(ctx, id)
	return l, err
}

func (t *twinTx) InsertOutbox(ctx context.Context, e outbox.Event) error {
	err := t.s.InsertOutbox(ctx, e)
	t.inserted(err)
	_ = t.y.InsertOutbox(ctx, e)
	return err
}

func (t *twinTx) GetOutbox(ctx context.Context, id string) (outbox.Event, error) {
	e, err := t.s.GetOutbox(ctx, id)
	t.present(err, e.Version)
	_, _ = t.y.GetOutbox(ctx, id)
	return e, err
}

func (t *twinTx) UpdateOutbox(ctx context.Context, e outbox.Event, v int64) error {
	err := t.s.UpdateOutbox(ctx, e, v)
	t.updated(err, v)
	_ = t.y.UpdateOutbox(ctx, e, v)
	return err
}

func (t *twinTx) ListOutboxDue(ctx context.Context, shard int, now time.Time, limit int) ([]outbox.Event, error) {
	l, err := t.s.ListOutboxDue(ctx, shard, now, limit)
	t.answer(n(len(l))...)
	_, _ = t.y.ListOutboxDue(ctx, shard, now, limit)
	return l, err
}

func (t *twinTx) EarliestPending(ctx context.Context, ids []string) (map[string]string, error) {
	m, err := t.s.EarliestPending(ctx, ids)
	t.answer(n(len(m))...)
	_, _ = t.y.EarliestPending(ctx, ids)
	return m, err
}

func (t *twinTx) OutboxBacklog(ctx context.Context) (int, time.Time, error) {
	k, at, err := t.s.OutboxBacklog(ctx)
	t.answer(map[string]any{"pending": uint64(k)})
	_, _, _ = t.y.OutboxBacklog(ctx)
	return k, at, err
}

func (t *twinTx) DeletePublishedOutbox(ctx context.Context, before time.Time, limit int) (int, error) {
	k, err := t.s.DeletePublishedOutbox(ctx, before, limit)
	t.answer(n(k)...)
	_, _ = t.y.DeletePublishedOutbox(ctx, before, limit)
	return k, err
}

func (t *twinTx) InsertInbox(ctx context.Context, consumer, id string, at, exp time.Time) error {
	err := t.s.InsertInbox(ctx, consumer, id, at, exp)
	t.inserted(err)
	_ = t.y.InsertInbox(ctx, consumer, id, at, exp)
	return err
}

func (t *twinTx) DeleteExpiredInbox(ctx context.Context, now time.Time, limit int) (int, error) {
	k, err := t.s.DeleteExpiredInbox(ctx, now, limit)
	t.answer(n(k)...)
	_, _ = t.y.DeleteExpiredInbox(ctx, now, limit)
	return k, err
}

func (t *twinTx) GetStock(ctx context.Context, sku string) (inventory.Stock, error) {
	s, err := t.s.GetStock(ctx, sku)
	t.present(err, s.Version)
	_, _ = t.y.GetStock(ctx, sku)
	return s, err
}

func (t *twinTx) PutStock(ctx context.Context, s inventory.Stock, v int64) error {
	err := t.s.PutStock(ctx, s, v)
	if v == 0 {
		t.inserted(err)
	} else {
		t.updated(err, v)
	}
	_ = t.y.PutStock(ctx, s, v)
	return err
}

func (t *twinTx) GetReservation(ctx context.Context, id string) (inventory.Reservation, error) {
	r, err := t.s.GetReservation(ctx, id)
	t.present(err, r.Version)
	_, _ = t.y.GetReservation(ctx, id)
	return r, err
}

func (t *twinTx) InsertReservation(ctx context.Context, r inventory.Reservation) error {
	err := t.s.InsertReservation(ctx, r)
	t.inserted(err)
	_ = t.y.InsertReservation(ctx, r)
	return err
}

func (t *twinTx) UpdateReservation(ctx context.Context, r inventory.Reservation, v int64) error {
	err := t.s.UpdateReservation(ctx, r, v)
	t.updated(err, v)
	_ = t.y.UpdateReservation(ctx, r, v)
	return err
}

func (t *twinTx) ListStock(ctx context.Context) ([]inventory.Stock, error) {
	l, err := t.s.ListStock(ctx)
	t.answer(n(len(l))...)
	_, _ = t.y.ListStock(ctx)
	return l, err
}

func (t *twinTx) GetStockShard(ctx context.Context, sku string, shard int64) (inventory.Shard, error) {
	s, err := t.s.GetStockShard(ctx, sku, shard)
	t.present(err, s.Version)
	_, _ = t.y.GetStockShard(ctx, sku, shard)
	return s, err
}

func (t *twinTx) PutStockShard(ctx context.Context, s inventory.Shard, v int64) error {
	err := t.s.PutStockShard(ctx, s, v)
	if v == 0 {
		t.inserted(err)
	} else {
		t.updated(err, v)
	}
	_ = t.y.PutStockShard(ctx, s, v)
	return err
}

func (t *twinTx) ListStockShards(ctx context.Context, sku string) ([]inventory.Shard, error) {
	l, err := t.s.ListStockShards(ctx, sku)
	t.answer(n(len(l))...)
	_, _ = t.y.ListStockShards(ctx, sku)
	return l, err
}

func (t *twinTx) InsertPayment(ctx context.Context, e payment.Entry) error {
	err := t.s.InsertPayment(ctx, e)
	t.inserted(err)
	_ = t.y.InsertPayment(ctx, e)
	return err
}

func (t *twinTx) GetPayment(ctx context.Context, id string) (payment.Entry, error) {
	e, err := t.s.GetPayment(ctx, id)
	t.present(err, 0)
	_, _ = t.y.GetPayment(ctx, id)
	return e, err
}

func (t *twinTx) PaymentTotals(ctx context.Context) (int64, int64, error) {
	c, r, err := t.s.PaymentTotals(ctx)
	t.answer()
	_, _, _ = t.y.PaymentTotals(ctx)
	return c, r, err
}

func (t *twinTx) InsertDeadLetter(ctx context.Context, d dlq.DeadLetter) error {
	err := t.s.InsertDeadLetter(ctx, d)
	t.inserted(err)
	_ = t.y.InsertDeadLetter(ctx, d)
	return err
}

func (t *twinTx) GetDeadLetter(ctx context.Context, id string) (dlq.DeadLetter, error) {
	d, err := t.s.GetDeadLetter(ctx, id)
	t.present(err, d.Version)
	_, _ = t.y.GetDeadLetter(ctx, id)
	return d, err
}

func (t *twinTx) FindDeadLetter(ctx context.Context, src dlq.Source, ref string) (dlq.DeadLetter, error) {
	d, err := t.s.FindDeadLetter(ctx, src, ref)
	t.present(err, d.Version)
	_, _ = t.y.FindDeadLetter(ctx, src, ref)
	return d, err
}

func (t *twinTx) UpdateDeadLetter(ctx context.Context, d dlq.DeadLetter, v int64) error {
	err := t.s.UpdateDeadLetter(ctx, d, v)
	t.updated(err, v)
	_ = t.y.UpdateDeadLetter(ctx, d, v)
	return err
}

func (t *twinTx) ListDeadLetters(ctx context.Context, f dlq.Filter, p dlq.Page) ([]dlq.DeadLetter, string, error) {
	l, c, err := t.s.ListDeadLetters(ctx, f, p)
	t.answer(n(len(l))...)
	_, _, _ = t.y.ListDeadLetters(ctx, f, p)
	return l, c, err
}

func (t *twinTx) DeleteDeadLetter(ctx context.Context, id string) error {
	err := t.s.DeleteDeadLetter(ctx, id)
	_ = t.y.DeleteDeadLetter(ctx, id)
	return err
}

func (t *twinTx) InsertAudit(ctx context.Context, a dlq.AuditRecord) error {
	err := t.s.InsertAudit(ctx, a)
	t.inserted(err)
	_ = t.y.InsertAudit(ctx, a)
	return err
}

func (t *twinTx) ListAudit(ctx context.Context, limit int) ([]dlq.AuditRecord, error) {
	l, err := t.s.ListAudit(ctx, limit)
	t.answer(n(len(l))...)
	_, _ = t.y.ListAudit(ctx, limit)
	return l, err
}

func (t *twinTx) ListOutboxDueFrom(ctx context.Context, fromShard int, now time.Time, limit int) ([]outbox.Event, error) {
	l, err := t.s.ListOutboxDueFrom(ctx, fromShard, now, limit)
	t.answer(n(len(l))...)
	_, _ = t.y.ListOutboxDueFrom(ctx, fromShard, now, limit)
	return l, err
}

func (t *twinTx) LeaseOutbox(ctx context.Context, rows []store.OutboxVersion, owner string, until time.Time) (int, error) {
	k, err := t.s.LeaseOutbox(ctx, rows, owner, until)
	t.answer(versionsOf(rows)...)
	_, _ = t.y.LeaseOutbox(ctx, rows, owner, until)
	return k, err
}

func (t *twinTx) MarkOutboxPublished(ctx context.Context, rows []store.OutboxVersion, at time.Time) (int, error) {
	k, err := t.s.MarkOutboxPublished(ctx, rows, at)
	t.answer(versionsOf(rows)...)
	_, _ = t.y.MarkOutboxPublished(ctx, rows, at)
	return k, err
}

// versionsOf answers a batched version read: every row at its expected
// version.
// DemoteOutbox implements store.OutboxBatch.
func (t *twinTx) DemoteOutbox(ctx context.Context, ids []string) error {
	err := t.s.DemoteOutbox(ctx, ids)
	_ = t.y.DemoteOutbox(ctx, ids)
	return err
}

func versionsOf(rows []store.OutboxVersion) []map[string]any {
	out := make([]map[string]any, len(rows))
	for i, r := range rows {
		out[i] = map[string]any{"id": r.ID, "version": r.Version}
	}
	return out
}

func (t *twinTx) ListOrdersByCustomer(ctx context.Context, customerID string, after store.OrderCursor, limit int) ([]order.Order, error) {
	l, err := t.s.ListOrdersByCustomer(ctx, customerID, after, limit)
	t.answer(n(len(l))...)
	_, _ = t.y.ListOrdersByCustomer(ctx, customerID, after, limit)
	return l, err
}
