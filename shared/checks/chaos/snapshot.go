package chaos

import (
	"context"
	"fmt"

	"ordersaga/shared/app/stock"
	"ordersaga/shared/domain/dlq"
	"ordersaga/shared/domain/inventory"
	"ordersaga/shared/domain/order"
	"ordersaga/shared/domain/outbox"
	"ordersaga/shared/domain/payment"
	"ordersaga/shared/domain/queue"
	"ordersaga/shared/domain/saga"
	"ordersaga/shared/domain/store"
)

// snapshot is the final state the checker judges: every row of the
// product's tables (read through the undecorated store, in id order), and
// what the queues still hold.
type snapshot struct {
	orderIDs []string
	orders   map[string]order.Order
	sagaIDs  []string
	sagas    map[string]saga.Instance
	logs     map[string][]saga.LogEntry
	outbox   []outbox.Event
	resIDs   []string
	res      map[string]inventory.Reservation
	payIDs   []string
	pays     map[string]payment.Entry
	dead     []dlq.DeadLetter
	stock    []inventory.Stock // the operator's view: sub-rows summed
	rows     []inventory.Stock // the stock rows as stored
	subs     map[string][]inventory.Shard
	charged  int64 // PaymentTotals
	refunded int64
	// inDLQ counts the messages the queue moved to saga-commands-dlq (still
	// there, or ingested as dead letters by recovery) and inEvents those in
	// order-events, by outbox event id.
	inDLQ, inEvents map[string]int
	// eventsSeq lists the event ids of order-events in the order they
	// arrived (duplicates included).
	eventsSeq []string
	cmdLeft   int // messages still in saga-commands (visible + in flight)
	// sent is every message the queue committed, in commit order (InTx).
	sent []sentMsg
}

// ids lists a table's primary keys in order. The store port has no "list
// everything" reads, so the checker enumerates with SQL on the SQLite file
// and reads each row through the port.
func (w *world) ids(ctx context.Context, table string) ([]string, error) {
	rows, err := w.sqlite.DB().QueryContext(ctx, "SELECT id FROM "+table+" ORDER BY id")
	if err != nil {
		return nil, fmt.Errorf("chaos: list %s: %w", table, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("chaos: list %s: %w", table, err)
		}
		out = append(out, id)
	}
	return out, rows.Err()
}

func (w *world) snapshot(ctx context.Context) (*snapshot, error) {
	s := &snapshot{orders: map[string]order.Order{}, sagas: map[string]saga.Instance{}, logs: map[string][]saga.LogEntry{},
		res: map[string]inventory.Reservation{}, pays: map[string]payment.Entry{}}
	lists := map[string]*[]string{"orders": &s.orderIDs, "sagas": &s.sagaIDs, "reservations": &s.resIDs, "payments": &s.payIDs}
	for _, table := range []string{"orders", "sagas", "reservations", "payments"} {
		ids, err := w.ids(ctx, table)
		if err != nil {
			return nil, err
		}
		*lists[table] = ids
	}
	outboxIDs, err := w.ids(ctx, "outbox")
	if err != nil {
		return nil, err
	}
	deadIDs, err := w.ids(ctx, "dead_letters")
	if err != nil {
		return nil, err
	}
	err = w.sqlite.View(ctx, func(ctx context.Context, tx store.Tx) error {
		for _, id := range s.orderIDs {
			o, err := tx.GetOrder(ctx, id)
			if err != nil {
				return err
			}
			s.orders[id] = o
		}
		for _, id := range s.sagaIDs {
			inst, err := tx.GetSaga(ctx, id)
			if err != nil {
				return err
			}
			s.sagas[id] = inst
			if s.logs[id], err = tx.ListSagaLog(ctx, id); err != nil {
				return err
			}
		}
		for _, id := range outboxIDs {
			e, err := tx.GetOutbox(ctx, id)
			if err != nil {
				return err
			}
			s.outbox = append(s.outbox, e)
		}
		for _, id := range s.resIDs {
			r, err := tx.GetReservation(ctx, id)
			if err != nil {
				return err
			}
			s.res[id] = r
		}
		for _, id := range s.payIDs {
			p, err := tx.GetPayment(ctx, id)
			if err != nil {
				return err
			}
			s.pays[id] = p
		}
		for _, id := range deadIDs {
			d, err := tx.GetDeadLetter(ctx, id)
			if err != nil {
				return err
			}
			s.dead = append(s.dead, d)
		}
		var err error
		if s.stock, err = stock.ListIn(ctx, tx); err != nil {
			return err
		}
		if s.rows, s.subs, err = readShards(ctx, tx); err != nil {
			return err
		}
		s.charged, s.refunded, err = tx.PaymentTotals(ctx)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("chaos: read final state: %w", err)
	}
	if s.inDLQ, _, err = w.drainQueue(ctx, w.dlqURL); err != nil {
		return nil, err
	}
	if s.inEvents, s.eventsSeq, err = w.drainQueue(ctx, w.eventsURL); err != nil {
		return nil, err
	}
	visible, inFlight, err := w.fqueue.Depth(ctx, w.cmdURL)
	if err != nil {
		return nil, fmt.Errorf("chaos: queue depth: %w", err)
	}
	s.cmdLeft = visible + inFlight
	if w.opts.InTx {
		if s.sent, err = readSent(ctx, w.sqlite.DB()); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// drainQueue receives (and deletes) every message of a queue, one at a
// time as a consumer of an ordered queue would, and counts them by outbox
// event id; seq lists the ids in arrival order.
func (w *world) drainQueue(ctx context.Context, url string) (seen map[string]int, seq []string, err error) {
	seen = map[string]int{}
	for {
		msgs, err := w.fqueue.Receive(ctx, url, queue.ReceiveOptions{Max: queue.MaxBatch, VisibilityTimeout: queue.MaxVisibilityTimeout})
		if err != nil {
			return nil, nil, fmt.Errorf("chaos: read %s: %w", url, err)
		}
		if len(msgs) == 0 {
			return seen, seq, nil
		}
		for _, m := range msgs {
			id := eventID(m.Attributes, m.MessageID)
			seen[id]++
			seq = append(seq, id)
			if err := w.fqueue.Delete(ctx, url, m.ReceiptHandle); err != nil {
				return nil, nil, fmt.Errorf("chaos: delete from %s: %w", url, err)
			}
		}
	}
}
