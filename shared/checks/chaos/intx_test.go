package chaos

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"ordersaga/shared/adapters/sqlitequeue"
	"ordersaga/shared/adapters/sqlitestore"
	"ordersaga/shared/app/relay"
	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/outbox"
	"ordersaga/shared/domain/outboxwrite"
	"ordersaga/shared/domain/queue"
	"ordersaga/shared/domain/store"
	"ordersaga/shared/wiring/app"
)

// TestInTxRunHoldsGuarantees runs the in-transaction mode under the default
// faults: every guarantee holds, the fast path inside the transaction really
// ran (messages stored by the forwarded SendInTx, events committed with no
// outbox row), and its faults were injected.
func TestInTxRunHoldsGuarantees(t *testing.T) {
	const orders = 150
	for _, seed := range []uint64{1, 2} {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			rep := run(t, Options{Orders: orders, Seed: seed, InTx: true})
			if !rep.OK() {
				var b bytes.Buffer
				rep.WriteTable(&b)
				t.Fatalf("violations:\n%s", b.String())
			}
			if got := rep.Confirmed + rep.Cancelled + rep.Failed; got != orders || rep.Orders != orders {
				t.Errorf("%d orders ended (%d placed), want %d", got, rep.Orders, orders)
			}
			// At least the order.created and the first command of most
			// orders go in their transaction.
			if rep.InTxSends < orders || rep.InTxEvents < orders || rep.InTxEvents > rep.InTxSends {
				t.Errorf("in-tx: %d messages stored by SendInTx, %d events committed as their message alone; want both >= %d, events <= sends",
					rep.InTxSends, rep.InTxEvents, orders)
			}
			for _, k := range []string{"queue_send_in_tx_refused", "queue_send_in_tx_failed_before", "queue_send_in_tx_failed_after",
				"store_after_tx_rollback", "api_before_dispatch"} {
				if rep.Faults[k]+rep.Crashes[k] == 0 {
					t.Errorf("no %s injected: faults %v, crashes %v", k, rep.Faults, rep.Crashes)
				}
			}
			if !strings.Contains(rep.Mode, "intx") || !strings.Contains(rep.Mode, "strict") {
				t.Errorf("mode %q, want intx and strict", rep.Mode)
			}
		})
	}
}

// TestInTxRunIsDeterministic: the same seed gives the same report in the
// in-transaction mode too.
func TestInTxRunIsDeterministic(t *testing.T) {
	a := run(t, Options{Orders: 30, Seed: 7, InTx: true})
	b := run(t, Options{Orders: 30, Seed: 7, InTx: true})
	a.Elapsed, b.Elapsed = 0, 0
	if !reflect.DeepEqual(a, b) {
		t.Errorf("two runs with seed 7 differ:\n%+v\n%+v", a, b)
	}
}

// TestDefaultModeHidesInTx: without InTx the decorators hide the ports of
// the fast path inside the transaction, as before.
func TestDefaultModeHidesInTx(t *testing.T) {
	var q queue.Queue = &faultyQueue{}
	if _, ok := q.(relay.TxSender); ok {
		t.Error("faultyQueue forwards SendInTx")
	}
	var d outboxwrite.Dispatcher = &dropper{}
	if _, ok := d.(outboxwrite.TxPublisher); ok {
		t.Error("dropper forwards PublishInTx")
	}
	rep := run(t, Options{Orders: 10, Seed: 1})
	if rep.InTxSends != 0 || rep.InTxEvents != 0 || !rep.OK() {
		t.Errorf("default mode: %d in-tx sends, %d in-tx events, violations %v; want none", rep.InTxSends, rep.InTxEvents, rep.Violations)
	}
}

// TestTxFaultyQueue: SendInTx is forwarded into the store's transaction
// (the message commits with it, vanishes with a rollback, and sentTable
// records exactly the committed ones); a refusal is Invalid and a failure
// Transient, and neither leaves a message once the transaction fails.
func TestTxFaultyQueue(t *testing.T) {
	ctx := context.Background()
	st, err := sqlitestore.Open(ctx, filepath.Join(t.TempDir(), "s.db"), sqlitestore.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	inner, err := sqlitequeue.New(st.DB(), sqlitequeue.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if err := recordSent(ctx, st.DB()); err != nil {
		t.Fatal(err)
	}
	url, err := inner.Ensure(ctx, queue.QueueSpec{Name: "q", VisibilityTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	f := Faults{}
	n, sent := newTally(), newTally()
	q := &txFaultyQueue{faultyQueue: &faultyQueue{inner: inner, in: &injector{on: true, rnd: rand.New(rand.NewPCG(1, 2))}, f: &f, faults: n}, sent: sent}
	errRollback := errors.New("roll back")
	send := func(id string, rollback bool) error {
		err := st.InTx(ctx, func(ctx context.Context, tx store.Tx) error {
			res, ok, err := q.SendInTx(ctx, tx, url, []queue.OutMessage{{ID: id, Body: "x", Attributes: map[string]string{outbox.AttrEventID: id}}})
			if err != nil {
				return err
			}
			if !ok || len(res) != 1 || res[0].Err != nil {
				return fmt.Errorf("SendInTx: ok %v, results %+v", ok, res)
			}
			if rollback {
				return errRollback
			}
			return nil
		})
		return err
	}
	if err := send("committed", false); err != nil {
		t.Fatal(err)
	}
	if err := send("rolled-back", true); !errors.Is(err, errRollback) {
		t.Fatal(err)
	}
	f.QueueSendInTxRefused = 1
	if err := send("refused", false); !apperr.Is(err, apperr.Invalid) {
		t.Fatalf("refused send: %v, want Invalid", err)
	}
	f.QueueSendInTxRefused, f.QueueSendInTxFailed = 0, 1
	for i := 0; n.get("queue_send_in_tx_failed_before") == 0 || n.get("queue_send_in_tx_failed_after") == 0; i++ {
		if i > 100 {
			t.Fatalf("faults %v: not both kinds of failure", n.snapshot())
		}
		if err := send(fmt.Sprint("failed-", i), false); !apperr.Is(err, apperr.Transient) {
			t.Fatalf("failed send: %v, want Transient", err)
		}
	}
	if v, _, _ := inner.Depth(ctx, url); v != 1 {
		t.Errorf("%d messages in the queue, want 1 (the committed one)", v)
	}
	got, err := readSent(ctx, st.DB())
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].event.ID != "committed" || got[0].queue != "q" {
		t.Errorf("sent record %+v, want the committed message alone", got)
	}
	if k := sent.get("in_tx_sends"); k != 2 {
		t.Errorf("in_tx_sends %d, want 2 (committed and rolled back; faults are not counted)", k)
	}
}

// TestInTxCheckerCatchesBrokenProduct damages the final state of an
// in-transaction run, in a different way per case, where only the queue's
// messages stand for the events, and expects the checker to report it.
func TestInTxCheckerCatchesBrokenProduct(t *testing.T) {
	tests := []struct {
		name string
		// damage edits the file's tables; an event sent in its transaction
		// (a message committed with no outbox row) is given as a
		// chaos_sent row.
		damage func(ctx context.Context, db *sql.DB, e sentRow) error
		want   string
	}{{
		name: "message lost from order-events",
		damage: func(ctx context.Context, db *sql.DB, e sentRow) error {
			return execOne(ctx, db, `DELETE FROM queue_messages WHERE queue = ? AND message_id = ?`, e.queue, e.messageID)
		},
		want: "sent in its transaction, is not in order-events",
	}, {
		name: "order committed without its order.created",
		damage: func(ctx context.Context, db *sql.DB, e sentRow) error {
			if err := execOne(ctx, db, `DELETE FROM queue_messages WHERE queue = ? AND message_id = ?`, e.queue, e.messageID); err != nil {
				return err
			}
			return execOne(ctx, db, `DELETE FROM `+sentTable+` WHERE seq = ?`, e.seq)
		},
		want: "was committed without an order.created event",
	}, {
		name: "message for an order never committed",
		damage: func(ctx context.Context, db *sql.DB, e sentRow) error {
			return insertLike(ctx, db, e, "ghost-order", outbox.TypeOrderCreated)
		},
		want: "that order was never committed",
	}, {
		name: "message announcing a status the order never reached",
		damage: func(ctx context.Context, db *sql.DB, e sentRow) error {
			var status string
			if err := db.QueryRowContext(ctx, `SELECT status FROM orders WHERE id = ?`, e.orderID).Scan(&status); err != nil {
				return err
			}
			typ := outbox.TypeOrderConfirmed
			if status == "CONFIRMED" {
				typ = outbox.TypeOrderCancelled
			}
			return insertLike(ctx, db, e, e.orderID, typ)
		},
		want: "the order is",
	}, {
		name: "saga command committed but never delivered",
		damage: func(ctx context.Context, db *sql.DB, e sentRow) error {
			// The queue's record of a command the advancer never saw (the
			// message itself is gone, as a lost one would be).
			return execOne(ctx, db, `INSERT INTO `+sentTable+` (queue, message_id, attributes)
				SELECT queue, 'lost-msg', json_set(attributes, '$.`+outbox.AttrEventID+`', 'lost-command') FROM `+sentTable+`
				WHERE json_extract(attributes, '$.`+outbox.AttrEventType+`') = ? ORDER BY seq LIMIT 1`, outbox.TypeSagaAdvance)
		},
		want: "event lost-command (saga.advance), sent in its transaction, never reached the advancer or the DLQ",
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			after := func(ctx context.Context, _ *app.App, st store.Store) error {
				db := st.(*faultyStore).inner.(*sqlitestore.Store).DB()
				e, err := inTxCreated(ctx, db)
				if err != nil {
					return err
				}
				return tc.damage(ctx, db, e)
			}
			rep := run(t, Options{Orders: 30, Seed: 3, InTx: true, AfterDrain: after})
			wantViolation(t, rep, tc.want)
		})
	}
}

// sentRow is a chaos_sent row of an order.created sent in its transaction.
type sentRow struct {
	seq                                   int64
	queue, messageID, attributes, orderID string
}

// inTxCreated finds an order.created whose message committed with no
// outbox row (still in order-events after the drain: its consumer is the
// checker).
func inTxCreated(ctx context.Context, db *sql.DB) (sentRow, error) {
	var r sentRow
	err := db.QueryRowContext(ctx, `SELECT s.seq, s.queue, s.message_id, s.attributes, json_extract(s.attributes, '$.`+outbox.AttrAggregateID+`')
		FROM `+sentTable+` s JOIN queue_messages m ON m.queue = s.queue AND m.message_id = s.message_id
		WHERE json_extract(s.attributes, '$.`+outbox.AttrEventType+`') = ?
		AND NOT EXISTS (SELECT 1 FROM outbox o WHERE o.id = json_extract(s.attributes, '$.`+outbox.AttrEventID+`'))
		ORDER BY s.seq LIMIT 1`, outbox.TypeOrderCreated).Scan(&r.seq, &r.queue, &r.messageID, &r.attributes, &r.orderID)
	if err != nil {
		return r, fmt.Errorf("no order.created sent in its transaction: %w", err)
	}
	return r, nil
}

// insertLike commits a message into e's queue like e's, for another order
// and event type, under a new event id (as a transaction that rolled back
// but left its message would).
func insertLike(ctx context.Context, db *sql.DB, e sentRow, orderID, eventType string) error {
	return execOne(ctx, db, `INSERT INTO queue_messages (queue, message_id, body, attributes, sent_at_ms, visible_at_ms)
		VALUES (?, 'ghost-msg', '{}', json_set(?, '$.`+outbox.AttrEventID+`', 'ghost-event', '$.`+outbox.AttrAggregateID+`', ?,
		'$.`+outbox.AttrOrderID+`', ?, '$.`+outbox.AttrEventType+`', ?), 0, 0)`, e.queue, e.attributes, orderID, orderID, eventType)
}

// execOne runs a statement that must change exactly one row.
func execOne(ctx context.Context, db *sql.DB, q string, args ...any) error {
	res, err := db.ExecContext(ctx, q, args...)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return fmt.Errorf("%s: %d rows changed (%v), want 1", q, n, err)
	}
	return nil
}
