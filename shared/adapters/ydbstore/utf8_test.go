package ydbstore

import (
	"context"
	"testing"
	"time"

	"github.com/ydb-platform/ydb-go-sdk/v3/table/types"

	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/dlq"
	"ordersaga/shared/domain/inventory"
	"ordersaga/shared/domain/order"
	"ordersaga/shared/domain/outbox"
	"ordersaga/shared/domain/payment"
	"ordersaga/shared/domain/saga"
)

// bad is a Go string that is not UTF-8: a multi-byte character cut in the
// middle (what s[:n] does to "é") followed by a lone continuation byte.
const bad = "cut \xc3 and \x80"

// TestInvalidUTF8NeverReachesTheWire: the proto encoder the SDK uses
// really refuses such a string (so the check below can fail), every
// diagnostic text is repaired and then marshals, and every other text is
// Invalid before any statement runs.
func TestInvalidUTF8NeverReachesTheWire(t *testing.T) {
	raw := newParams().add("$x", types.TextValue(bad))
	p, _ := raw.build()
	if err := marshalParams(p); err == nil {
		t.Fatal("proto.Marshal accepted invalid UTF-8: the test below would prove nothing")
	}

	queries := allQueries(t)
	byText := map[string]string{}
	for name, yql := range queries {
		byText[yql] = name
	}
	rec := &recorder{t: t, queries: byText, tables: schemaTables(t), version: 1, ran: map[string]bool{}}
	tx := &tx{c: rec, cfg: &Config{OutboxRetention: time.Hour}, immediate: true}
	ctx := context.Background()
	at := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

	repaired := map[string]func() error{
		"outbox last_error": func() error {
			return tx.InsertOutbox(ctx, outbox.Event{ID: "e", AggregateID: "a", LastError: bad, Status: outbox.StatusPending, CreatedAt: at})
		},
		"saga last_error": func() error { return tx.InsertSaga(ctx, saga.Instance{ID: "s", LastError: bad, CreatedAt: at}) },
		"saga log error":  func() error { return tx.AppendSagaLog(ctx, saga.LogEntry{SagaID: "s", Seq: 1, Error: bad, At: at}) },
		"order status_reason": func() error {
			return tx.InsertOrder(ctx, order.Order{ID: "o", StatusReason: bad, CreatedAt: at})
		},
		"reservation reason": func() error {
			return tx.InsertReservation(ctx, inventory.Reservation{ID: "r", Reason: bad, CreatedAt: at})
		},
		"payment reason": func() error { return tx.InsertPayment(ctx, payment.Entry{ID: "p", Reason: bad, CreatedAt: at}) },
		"dead letter error": func() error {
			return tx.InsertDeadLetter(ctx, dlq.DeadLetter{ID: "d", Error: bad, Attrs: map[string]string{"k": bad}, LastFailedAt: at})
		},
		"json metadata": func() error {
			return tx.InsertOutbox(ctx, outbox.Event{ID: "e2", Metadata: map[string]string{bad: bad}, CreatedAt: at})
		},
	}
	for name, fn := range repaired {
		if err := fn(); err != nil {
			t.Errorf("%s: %v (a diagnostic text must be repaired, not refused)", name, err)
		}
	}

	refused := map[string]func() error{
		"order id":          func() error { return tx.InsertOrder(ctx, order.Order{ID: bad, CreatedAt: at}) },
		"order customer_id": func() error { return tx.InsertOrder(ctx, order.Order{ID: "o", CustomerID: bad, CreatedAt: at}) },
		"outbox aggregate_id": func() error {
			return tx.UpdateOutbox(ctx, outbox.Event{ID: "e", AggregateID: bad}, 1)
		},
		"get saga":       func() error { _, err := tx.GetSaga(ctx, bad); return err },
		"earliest":       func() error { _, err := tx.EarliestPending(ctx, []string{"a", bad}); return err },
		"stock sku":      func() error { return tx.PutStock(ctx, inventory.Stock{SKU: bad}, 0) },
		"inbox consumer": func() error { return tx.InsertInbox(ctx, bad, "m", at, at) },
		"dead letter cursor": func() error {
			_, _, err := tx.ListDeadLetters(ctx, dlq.Filter{}, dlq.Page{Limit: 5, Cursor: encodeCursor(at, bad)})
			return err
		},
	}
	before := len(rec.ran)
	rec.ran = map[string]bool{}
	for name, fn := range refused {
		if err := fn(); !apperr.Is(err, apperr.Invalid) {
			t.Errorf("%s: got %v, want Invalid", name, err)
		}
	}
	if len(rec.ran) != 0 {
		t.Errorf("refused values still ran statements: %v", rec.ran)
	}
	if before == 0 {
		t.Error("the repaired cases ran no statement")
	}
}
