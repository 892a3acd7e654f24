package orchestrator_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"ordersaga/shared/adapters/sqlitequeue"
	"ordersaga/shared/adapters/sqlitestore"
	"ordersaga/shared/adapters/ydbstore"
	"ordersaga/shared/app/orchestrator"
	"ordersaga/shared/app/orders"
	"ordersaga/shared/checks/ydbtrips"
	"ordersaga/shared/domain/order"
	"ordersaga/shared/domain/outbox"
	"ordersaga/shared/domain/queue"
	"ordersaga/shared/domain/saga"
	"ordersaga/shared/domain/store"
	"ordersaga/shared/kit/config"
	"ordersaga/shared/transport/identity"
	"ordersaga/shared/wiring/app"
)

// stepTrips is the target for one saga step, newOrderTrips for a new
// order that runs no step, and idleTrips for an idle recovery run
// (orchestrator.Recovery.Run), in YDB round trips.
const (
	stepTrips     = 3
	newOrderTrips = 3
	idleTrips     = 10
)

// TestStepRoundTrips counts the YDB round trips of every step of a
// confirmed order's chained saga (its lease, its effect and its save) and
// of an idle recovery run, with the server-free recorder of ydbtrips.
func TestStepRoundTrips(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "trips.db")
	st, err := sqlitestore.Open(ctx, path, sqlitestore.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	q, err := sqlitequeue.Open(filepath.Join(dir, "queue.db"), sqlitequeue.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	twin := &ydbtrips.Twin{Inner: st, Cfg: ydbstore.Config{OutboxRetention: 7 * 24 * time.Hour}}
	cfg := config.Default()
	cfg.SQLitePath = path
	cfg.LogLevel = "error"
	type row struct {
		name  string
		trips ydbtrips.Trips
	}
	var rows []row
	measuring := false // the steps of the delivered message, not the order's transaction
	onSteps := func(c *orchestrator.AdvancerConfig) {
		onStep := c.Hooks.OnStep
		c.Hooks.OnStep = func(step string, dir saga.Direction, o saga.Outcome) {
			if measuring {
				rows = append(rows, row{fmt.Sprintf("%s (%s)", step, dir), twin.Take()})
			}
			if onStep != nil {
				onStep(step, dir, o)
			}
		}
	}
	a, err := app.New(ctx, cfg, app.Use(app.Ports{Store: twin, Queue: q}), app.Options{Advancer: onSteps})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	for _, name := range []string{"saga-commands", "order-events"} {
		if _, err := q.Ensure(ctx, queue.QueueSpec{Name: name}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := a.Commands.Stock.SetAvailable(ctx, "bench", "sku-1", 1000); err != nil {
		t.Fatal(err)
	}
	req, err := order.DecodeRequest(strings.NewReader(
		`{"customer_id":"c-1","currency":"RUB","items":[{"sku":"sku-1","quantity":2,"unit_price_minor":1500}]}`))
	if err != nil {
		t.Fatal(err)
	}
	twin.Take()
	resp, err := a.Commands.Orders.Create(ctx, orders.CreateCommand{Caller: identity.Identity{Subject: "u", Role: identity.RoleUser}, Key: "k-1", Request: req})
	if err != nil {
		t.Fatal(err)
	}
	post := twin.Take()
	t.Logf("new order (POST /orders)                  %2d round trips  %v", post.Total(), post.Texts)
	// The steps the order's transaction ran (orchestrator.Start) are not
	// the message's.
	var started int
	if err := st.View(ctx, func(ctx context.Context, tx store.Tx) error {
		s, err := tx.GetSaga(ctx, resp.SagaID)
		started = s.Step
		return err
	}); err != nil {
		t.Fatal(err)
	}
	msgs, err := q.Receive(ctx, cfg.QueueURLs.SagaCommands, queue.ReceiveOptions{Max: 1})
	if err != nil || len(msgs) != 1 {
		t.Fatalf("first command: %v %v", msgs, err)
	}
	measuring = true
	twin.Take()
	m := msgs[0]
	res, err := a.Commands.Advancer.Handle(ctx, orchestrator.Message{EventID: m.Attributes[outbox.AttrEventID], Body: []byte(m.Body), Attributes: m.Attributes})
	if err != nil || res.State != saga.StateCompleted {
		t.Fatalf("saga: %+v %v", res, err)
	}
	if want := len(orchestrator.CreateOrderSaga) - started; len(rows) != want {
		t.Fatalf("%d steps measured, want %d (chained in one message)", len(rows), want)
	}
	// A step saved in the transaction of the step before it (a fold:
	// Advancer.saveIn) has its round trips counted with that step's, and
	// shows none of its own. The steps run in the order's transaction are
	// counted with the new order: the target holds for the whole order,
	// the new order and every step.
	total := 0
	for i := 0; i < len(rows); {
		group, trips := rows[i].name, rows[i].trips.Total()
		t.Logf("saga step %-30s %2d round trips  %v", rows[i].name, trips, rows[i].trips.Texts)
		n := 1
		for i+n < len(rows) && rows[i+n].trips.Total() == 0 {
			t.Logf("saga step %-30s saved with %s", rows[i+n].name, group)
			group += " + " + rows[i+n].name
			n++
		}
		total += trips
		i += n
	}
	t.Logf("whole chained saga: %d round trips; with the new order %d", total, total+post.Total())
	if limit := newOrderTrips + stepTrips*len(orchestrator.CreateOrderSaga); total+post.Total() > limit {
		t.Errorf("new order and saga: %d round trips, target %d (%d a new order, %d per step)", total+post.Total(), limit, newOrderTrips, stepTrips)
	}

	twin.Take()
	if _, err := a.Commands.Recovery.Run(ctx); err != nil {
		t.Fatal(err)
	}
	idle := twin.Take()
	t.Logf("idle recovery run (orchestrator.Recovery) %2d round trips  %v", idle.Total(), idle.Texts)
	if idle.Total() > idleTrips {
		t.Errorf("idle recovery run: %d round trips, target %d", idle.Total(), idleTrips)
	}
}
