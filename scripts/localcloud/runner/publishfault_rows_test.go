package runner

// The local fast path (a message sent in the transaction is its own outbox
// entry, no outbox row is written for it) against the local runner's
// publish fault: with LOCAL_FAULT_PUBLISH_SKU set, order-events
// messages must not be sent in the transaction (the fault could not see
// the order there), so their rows must still be inserted pending, and the
// fault must hold back exactly the SKU's order.

import (
	"context"
	"database/sql"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"ordersaga/shared/domain/outbox"
	"ordersaga/shared/kit/config"
	"ordersaga/shared/wiring/triggers"
)

func TestPublishFaultKeepsOrderEventRowsPending(t *testing.T) {
	env := map[string]string{envFaultPublishSKU: "sku-4"}
	f, err := newFaults(config.Default(), &triggers.File{}, func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	a, _ := newFaultApp(t, f)
	tf, err := triggers.Load("../../../triggers/triggers.yaml")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := a.EnsureQueues(ctx, tf.Queues); err != nil {
		t.Fatal(err)
	}
	// A new order reserves in its own transaction: without stock it would
	// be cancelled there and leave no saga command.
	for _, sku := range []string{"sku-1", "sku-4"} {
		if _, err := a.Commands.Stock.SetAvailable(ctx, "test", sku, 10); err != nil {
			t.Fatal(err)
		}
	}
	post := func(key, sku string) string {
		t.Helper()
		body := `{"customer_id":"c-1","currency":"RUB","items":[{"sku":"` + sku + `","quantity":1,"unit_price_minor":100}]}`
		req := httptest.NewRequest(http.MethodPost, "/orders", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer dev-user")
		req.Header.Set("Idempotency-Key", key)
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		a.HTTP.ServeHTTP(rec, req)
		if rec.Code != http.StatusCreated {
			t.Fatalf("POST %s: %d %s", key, rec.Code, rec.Body)
		}
		loc := rec.Header().Get("Location")
		return loc[strings.LastIndex(loc, "/")+1:]
	}
	faulty := post("k-faulty", "sku-4")
	healthy := post("k-healthy", "sku-1")
	if _, err := a.Commands.RelayOutbox.Run(ctx, 5*time.Second); err != nil {
		t.Fatal(err)
	}

	db, err := sql.Open("sqlite", "file:"+a.Config.SQLitePath+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// Messages per (order, queue), and the outbox rows per (order, type).
	msgs := map[[2]string]int{}
	rows, err := db.Query(`SELECT queue, COALESCE(json_extract(attributes, '$.` + outbox.AttrOrderID + `'), '') FROM queue_messages`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var q, o string
		if err := rows.Scan(&q, &o); err != nil {
			t.Fatal(err)
		}
		msgs[[2]string{o, q}]++
	}
	rows.Close()
	type stored struct {
		status   string
		attempts int
	}
	box := map[[2]string]stored{}
	rows, err = db.Query(`SELECT COALESCE(json_extract(metadata, '$.` + outbox.AttrOrderID + `'), aggregate_id), event_type, status, attempts FROM outbox`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var o, typ string
		var s stored
		if err := rows.Scan(&o, &typ, &s.status, &s.attempts); err != nil {
			t.Fatal(err)
		}
		box[[2]string{o, typ}] = s
	}
	rows.Close()

	// The SKU's order.created was refused (by the fast path after commit;
	// the relay leaves it alone while the request's dispatch lease runs):
	// stored pending, never sent.
	if r, ok := box[[2]string{faulty, outbox.TypeOrderCreated}]; !ok || r.status != string(outbox.StatusPending) {
		t.Errorf("order.created of the faulty order stored as %+v (found %v), want pending", r, ok)
	}
	if n := msgs[[2]string{faulty, outbox.DestOrderEvents}]; n != 0 {
		t.Errorf("faulty order has %d order-events messages, want 0 (the fault refuses them)", n)
	}
	// Its saga command is unaffected: sent in the transaction, one message.
	if n := msgs[[2]string{faulty, outbox.DestSagaCommands}]; n != 1 {
		t.Errorf("faulty order has %d saga-commands messages, want 1", n)
	}
	// The other order's event went through the fault's SendBatch after commit.
	if n := msgs[[2]string{healthy, outbox.DestOrderEvents}]; n != 1 {
		t.Errorf("healthy order has %d order-events messages, want 1", n)
	}
	if r, ok := box[[2]string{healthy, outbox.TypeOrderCreated}]; ok && r.status != string(outbox.StatusPublished) {
		t.Errorf("healthy order.created stored %+v, want published (or no row)", r)
	}
}
