package redrive

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"ordersaga/shared/domain/dlq"
	"ordersaga/shared/domain/inventory"
	"ordersaga/shared/domain/payment"
	"ordersaga/shared/domain/store"
)

// addHolding gives saga sagaID a live reservation of 2 × sku-1 and a
// charge of 100 EUR without a refund.
func (f *fixture) addHolding(t *testing.T, sagaID string) dlq.Held {
	t.Helper()
	now := f.clock.Now()
	f.tx(t, func(ctx context.Context, tx store.Tx) error {
		if err := tx.InsertReservation(ctx, inventory.Reservation{ID: sagaID, OrderID: "o-" + sagaID,
			Lines: []inventory.Line{{SKU: "sku-1", Quantity: 2}}, Status: inventory.Reserved, CreatedAt: now, UpdatedAt: now, Version: 1}); err != nil {
			return err
		}
		return tx.InsertPayment(ctx, payment.Entry{ID: payment.EntryID(sagaID, payment.Charge), SagaID: sagaID, OrderID: "o-" + sagaID,
			Kind: payment.Charge, AmountMinor: 100, Currency: "EUR", Status: payment.Succeeded, CreatedAt: now})
	})
	return dlq.Held{Units: []dlq.HeldUnit{{SKU: "sku-1", Quantity: 2}},
		Charge: &dlq.HeldCharge{PaymentID: payment.EntryID(sagaID, payment.Charge), AmountMinor: 100, Currency: "EUR"}}
}

// TestReportsSayWhatHappensToHeldResources: a failed saga that holds
// reserved units and an unrefunded charge shows them, and each action's
// JSON report says what becomes of them: a redrive (and its dry run)
// releases them through the resumed compensations, a discard keeps them.
// A saga that holds nothing gets no held fields.
func TestReportsSayWhatHappensToHeldResources(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	holding := f.addFailedSaga(t, "saga-holding")
	want := f.addHolding(t, "saga-holding")
	empty := f.addFailedSaga(t, "saga-empty")
	kept := f.addFailedSaga(t, "saga-kept")
	f.addHolding(t, "saga-kept")

	d, err := f.svc.Show(ctx, holding)
	if err != nil {
		t.Fatal(err)
	}
	if d.Held == nil || !reflect.DeepEqual(*d.Held, want) {
		t.Fatalf("show held %+v, want %+v", d.Held, want)
	}
	if d, _ := f.svc.Show(ctx, empty); d.Held != nil {
		t.Errorf("show of a saga holding nothing: held %+v", d.Held)
	}

	itemOf := func(rep Report, id string) Item {
		for _, it := range rep.Items {
			if it.ID == id {
				return it
			}
		}
		t.Fatalf("no item %s in %+v", id, rep)
		return Item{}
	}
	dry := f.mustRedrive(t, Selection{IDs: []string{holding, empty}, DryRun: true})
	if it := itemOf(dry, holding); it.Held == nil || !reflect.DeepEqual(*it.Held, want) || it.HeldEffect != HeldWouldRelease {
		t.Errorf("dry-run item %+v", it)
	}
	if it := itemOf(dry, empty); it.Held != nil || it.HeldEffect != "" {
		t.Errorf("dry-run item of a saga holding nothing %+v", it)
	}
	rep := f.mustRedrive(t, Selection{IDs: []string{holding}})
	it := itemOf(rep, holding)
	if it.Outcome != OutcomeRedriven || it.Held == nil || it.HeldEffect != HeldReleased {
		t.Errorf("redrive item %+v", it)
	}
	b, _ := json.Marshal(rep)
	for _, s := range []string{`"held":{"units":[{"sku":"sku-1","quantity":2}]`, `"held_effect":"` + HeldReleased + `"`} {
		if !strings.Contains(string(b), s) {
			t.Errorf("redrive report %s lacks %s", b, s)
		}
	}
	ch, err := f.svc.Discard(ctx, "ops", []string{kept, empty}, "given up")
	if err != nil {
		t.Fatal(err)
	}
	if len(ch.Items) != 2 || ch.Items[0].Held == nil || ch.Items[0].HeldEffect != HeldKept || ch.Items[1].Held != nil {
		t.Errorf("discard items %+v", ch.Items)
	}
	// The discard left the units reserved and the charge taken: it says so, and it is so.
	var h dlq.Held
	f.tx(t, func(ctx context.Context, tx store.Tx) (err error) {
		h, err = dlq.HeldBy(ctx, tx, "saga-kept")
		return err
	})
	if h.Empty() {
		t.Error("a discard released what the saga held")
	}
}
