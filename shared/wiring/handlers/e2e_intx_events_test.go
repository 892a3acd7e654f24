package handlers

// The local fast path (a message sent in the transaction is its own outbox
// entry; no outbox row is written for it), end to end:
// the saga's steps, chained in place, write their commands and order events
// in their own transactions through the same in-transaction path.

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"ordersaga/shared/domain/outbox"
	"ordersaga/shared/transport/yc"
)

// Three orders run to their ends (confirmed, cancelled for stock, cancelled
// for a declined payment). Every order has exactly two order events in
// order-events, order.created first and then its final one, each once; the
// outbox keeps no pending or dead row (only the published rows of commands
// run in place); outbox_published_total{order-events} counts each event
// once.
func TestInTxEventsEndToEndOnceAndInOrder(t *testing.T) {
	s := newSuite(t, nil)
	ids := map[string]string{} // order id -> final event type
	for key, c := range map[string]struct{ body, final string }{
		"r3-ok":       {`{"customer_id":"c-1","currency":"RUB","items":[{"sku":"sku-1","quantity":1,"unit_price_minor":100}]}`, outbox.TypeOrderConfirmed},
		"r3-stock":    {`{"customer_id":"c-1","currency":"RUB","items":[{"sku":"sku-out","quantity":1,"unit_price_minor":100}]}`, outbox.TypeOrderCancelled},
		"r3-declined": {`{"customer_id":"c-1","currency":"RUB","items":[{"sku":"sku-1","quantity":1,"unit_price_minor":2000000}]}`, outbox.TypeOrderCancelled},
	} {
		o := s.post(key, c.body)
		ids[o["id"].(string)] = c.final
	}
	s.pump()
	if _, err := Registry["outboxrelay"](context.Background(), s.app, yc.EncodeTimer("t", "p", time.Now())); err != nil {
		t.Fatal(err)
	}

	db, err := sql.Open("sqlite", "file:"+s.app.Config.SQLitePath+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT json_extract(attributes, '$.`+outbox.AttrEventID+`'), json_extract(attributes, '$.`+outbox.AttrEventType+`'),
		json_extract(attributes, '$.`+outbox.AttrOrderID+`') FROM queue_messages WHERE queue = ? ORDER BY seq`, outbox.DestOrderEvents)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	byOrder := map[string][]string{}
	total := 0
	for rows.Next() {
		var id, typ, orderID string
		if err := rows.Scan(&id, &typ, &orderID); err != nil {
			t.Fatal(err)
		}
		seen[id]++
		byOrder[orderID] = append(byOrder[orderID], typ)
		total++
	}
	rows.Close()
	for id, n := range seen {
		if n != 1 {
			t.Errorf("event %s in order-events %d times", id, n)
		}
	}
	for id, final := range ids {
		if got, want := strings.Join(byOrder[id], ","), outbox.TypeOrderCreated+","+final; got != want {
			t.Errorf("order %s: order-events %s, want %s", id, got, want)
		}
	}
	var notPublished int
	if err := db.QueryRow(`SELECT count(*) FROM outbox WHERE status != ?`, string(outbox.StatusPublished)).Scan(&notPublished); err != nil {
		t.Fatal(err)
	}
	if notPublished != 0 {
		t.Errorf("%d outbox rows not published after the drain", notPublished)
	}
	var orderEventRows int
	if err := db.QueryRow(`SELECT count(*) FROM outbox WHERE destination = ?`, outbox.DestOrderEvents).Scan(&orderEventRows); err != nil {
		t.Fatal(err)
	}
	if orderEventRows != 0 {
		t.Errorf("%d order-events outbox rows, want 0 (every event sent in its transaction)", orderEventRows)
	}

	resp, err := http.Get(s.srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	want := fmt.Sprintf(`outbox_published_total{destination=%q} %d`, outbox.DestOrderEvents, total)
	if !strings.Contains(string(b), want+"\n") {
		t.Errorf("/metrics lacks %q:\n%s", want, grep(b, "outbox_published_total"))
	}
}
