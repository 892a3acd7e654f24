package app_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"ordersaga/shared/domain/outbox"
	"ordersaga/shared/kit/config"
	"ordersaga/shared/wiring/app"
)

// The order service's in-transaction fast path on the real local stack
// (localwiring: store and embedded queue on one file share one *sql.DB).

// outboxRow is a stored outbox row as the test reads it.
type outboxRow struct {
	ID, Destination, Status, LeaseOwner string
	PublishedAt, LeaseUntil             int64
}

// zeroMicros is the zero time as the store keeps it (unix microseconds).
var zeroMicros = time.Time{}.UnixMicro()

// queuedMsg is a stored queue message: its queue, the row it carries and
// that row's order.
type queuedMsg struct{ Queue, EventID, OrderID string }

func readOnly(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func outboxRows(t *testing.T, storePath string) map[string]outboxRow {
	t.Helper()
	rows, err := readOnly(t, storePath).Query(`SELECT id, destination, status, lease_owner, published_at, lease_until FROM outbox`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]outboxRow{}
	for rows.Next() {
		var r outboxRow
		if err := rows.Scan(&r.ID, &r.Destination, &r.Status, &r.LeaseOwner, &r.PublishedAt, &r.LeaseUntil); err != nil {
			t.Fatal(err)
		}
		out[r.ID] = r
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func queuedMessages(t *testing.T, queuePath string) []queuedMsg {
	t.Helper()
	rows, err := readOnly(t, queuePath).Query(`SELECT queue, COALESCE(json_extract(attributes, '$.` + outbox.AttrEventID + `'), ''),
		COALESCE(json_extract(attributes, '$.` + outbox.AttrOrderID + `'), '') FROM queue_messages`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []queuedMsg
	for rows.Next() {
		var m queuedMsg
		if err := rows.Scan(&m.Queue, &m.EventID, &m.OrderID); err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// Where the rows were sent.
const (
	sentInTx        = true  // in the order's transaction: a message and no outbox row
	sentAfterCommit = false // by the fast path after commit: a published row and its message
)

// checkSentOnce checks that every order's two events were each sent exactly
// once, to their queues, and that nothing else was sent. Sent in the
// transaction (inTx), an event is its queue message alone: the store must
// hold no outbox row. Sent after commit, every message has its outbox row,
// published with no lease left, and every row has one message. It returns
// the events by destination.
func checkSentOnce(t *testing.T, storePath, queuePath string, inTx bool) map[string]int {
	t.Helper()
	rows := outboxRows(t, storePath)
	msgs := queuedMessages(t, queuePath)
	if inTx && len(rows) != 0 {
		t.Errorf("%d outbox rows, want none: every event was sent in its transaction", len(rows))
	}
	perEvent := map[string]int{}
	perOrder := map[string]map[string]int{}
	byDest := map[string]int{}
	for _, m := range msgs {
		perEvent[m.EventID]++
		if perEvent[m.EventID] == 1 {
			byDest[m.Queue]++
		}
		if perOrder[m.OrderID] == nil {
			perOrder[m.OrderID] = map[string]int{}
		}
		perOrder[m.OrderID][m.Queue]++
		if inTx {
			continue
		}
		r, ok := rows[m.EventID]
		if !ok {
			t.Errorf("message in %s for unknown row %q", m.Queue, m.EventID)
			continue
		}
		if m.Queue != r.Destination {
			t.Errorf("row %s (%s) sent to queue %s", r.ID, r.Destination, m.Queue)
		}
	}
	for id, n := range perEvent {
		if n != 1 {
			t.Errorf("event %s sent %d times, want 1", id, n)
		}
	}
	for id, q := range perOrder {
		if id == "" || q[outbox.DestOrderEvents] != 1 || q[outbox.DestSagaCommands] != 1 || len(q) != 2 {
			t.Errorf("order %q has messages %v, want one in order-events and one in saga-commands", id, q)
		}
	}
	for id, r := range rows {
		if r.Status != string(outbox.StatusPublished) || r.PublishedAt == zeroMicros || r.LeaseOwner != "" || r.LeaseUntil != zeroMicros {
			t.Errorf("row %s: %+v, want published with no lease", id, r)
		}
		if perEvent[id] != 1 {
			t.Errorf("row %s (%s) has %d messages, want 1", id, r.Destination, perEvent[id])
		}
	}
	return byDest
}

func TestNewOrderPublishedInItsTransaction(t *testing.T) {
	env := newTestEnv(t)
	env.stocked("sku-1", 1000)
	env.txCount.Store(0)
	r := env.do("POST", "/orders", "dev-user", "intx-1", []byte(orderBody))
	if r.status != 201 {
		t.Fatalf("status %d: %s", r.status, r.body)
	}
	// One store transaction in all: the messages went in it, so there is
	// no publish mark after commit.
	if n := env.txCount.Load(); n != 1 {
		t.Errorf("new order used %d store transactions, want 1 (messages written in the order's)", n)
	}
	byDest := checkSentOnce(t, env.dbPath, env.dbPath, sentInTx)
	if byDest[outbox.DestOrderEvents] != 1 || byDest[outbox.DestSagaCommands] != 1 {
		t.Errorf("events by destination %v, want one order-events and one saga-commands", byDest)
	}
	before := len(queuedMessages(t, env.dbPath))

	// A replay writes nothing and sends nothing.
	rep := env.do("POST", "/orders", "dev-user", "intx-1", []byte(orderBody))
	if rep.status != 201 || rep.header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("replay: %d %q", rep.status, rep.header.Get("Idempotent-Replayed"))
	}
	if after := len(queuedMessages(t, env.dbPath)); after != before {
		t.Errorf("replay changed the queues from %d to %d messages", before, after)
	}
	checkSentOnce(t, env.dbPath, env.dbPath, sentInTx)

	// The relay finds nothing to publish.
	rr, err := env.app.Commands.RelayOutbox.Run(context.Background(), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if rr.Claimed != 0 {
		t.Errorf("relay claimed %d rows after the in-transaction publish", rr.Claimed)
	}
}

// Concurrent new orders run in group transactions: every one's events are
// sent exactly once, and none of a failed one (key reused with another body).
func TestConcurrentNewOrdersPublishedOnceEach(t *testing.T) {
	env := newTestEnv(t)
	env.stocked("sku-1", 1000)
	const n = 24
	var wg sync.WaitGroup
	replies := make([]reply, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			key := fmt.Sprint("k-", i)
			body := orderBody
			if i%6 == 5 {
				key = "k-0" // order 0's key with another body: 422, 409 or a replay
				body = `{"customer_id":"c-2","currency":"RUB","items":[{"sku":"sku-1","quantity":1,"unit_price_minor":10}]}`
			}
			replies[i] = env.do("POST", "/orders", "dev-user", key, []byte(body))
		}()
	}
	wg.Wait()
	created := 0 // new orders (not replays)
	for i, r := range replies {
		switch {
		case r.status == 201 && r.header.Get("Idempotent-Replayed") == "":
			created++
		case (i == 0 || i%6 == 5) && (r.status == 201 || r.status == 422 || r.status == 409):
		default:
			t.Errorf("request %d: status %d", i, r.status)
		}
	}
	if created < n-5 {
		t.Errorf("only %d new orders", created)
	}
	byDest := checkSentOnce(t, env.dbPath, env.dbPath, sentInTx)
	if byDest[outbox.DestOrderEvents] != created || byDest[outbox.DestSagaCommands] != created {
		t.Errorf("events by destination %v for %d created orders", byDest, created)
	}
}

// With the queue in a file of its own it cannot write in the store's
// transaction: the rows are published by the fast path after commit, in a
// second store transaction.
func TestNewOrderWithQueueElsewherePublishedAfterCommit(t *testing.T) {
	var queuePath string
	env := newTestEnv(t, func(c *config.Config, _ *app.Options) {
		queuePath = filepath.Join(filepath.Dir(c.SQLitePath), "queue.db")
		c.QueueSQLite = queuePath
	})
	env.stocked("sku-1", 1000)
	env.txCount.Store(0)
	if r := env.do("POST", "/orders", "dev-user", "elsewhere", []byte(orderBody)); r.status != 201 {
		t.Fatalf("status %d: %s", r.status, r.body)
	}
	if n := env.txCount.Load(); n != 2 {
		t.Errorf("new order used %d store transactions, want 2 (write, then the publish mark)", n)
	}
	byDest := checkSentOnce(t, env.dbPath, queuePath, sentAfterCommit)
	if byDest[outbox.DestOrderEvents] != 1 || byDest[outbox.DestSagaCommands] != 1 {
		t.Errorf("outbox rows by destination %v", byDest)
	}
	if n := env.rowCounts()["queue_messages"]; n != 0 {
		t.Errorf("the store's file holds %d queue messages, want 0", n)
	}
	if r := env.do("POST", "/orders", "dev-user", "elsewhere", []byte(orderBody)); r.header.Get("Idempotent-Replayed") != "true" {
		t.Fatal("not a replay")
	}
	checkSentOnce(t, env.dbPath, queuePath, sentAfterCommit)
}
