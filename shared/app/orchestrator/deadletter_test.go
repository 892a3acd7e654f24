package orchestrator_test

import (
	"reflect"
	"testing"

	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/dlq"
	"ordersaga/shared/domain/order"
	"ordersaga/shared/domain/payment"
	"ordersaga/shared/domain/saga"
)

// TestDeadLetterRecordsWhatTheSagaHolds: a saga whose compensation gives
// up is dead-lettered with what it still holds — its charge when the refund
// is the compensation that gave up, its reserved units when the release is
// — and with nothing it gave back (the compensations before the one that
// gave up still run: a refund that gave up does not keep the units).
func TestDeadLetterRecordsWhatTheSagaHolds(t *testing.T) {
	cases := []struct {
		name     string
		stuck    string // the compensation that always fails
		charge   bool   // the charge is still held
		units    bool   // the units are still reserved
		quantity int64
	}{
		{"refund gives up", saga.StepRefundPayment, true, false, 2},
		{"release gives up after the refund", saga.StepReleaseInventory, false, true, 3},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, envOpts{stock: map[string]int64{"sku-1": 10}})
			e.fault = func(step string, dir saga.Direction) error {
				switch {
				case step == saga.StepConfirmOrder && dir == saga.Forward:
					return apperr.New(apperr.Invalid, "confirmation refused (injected)")
				case step == c.stuck && dir == saga.Compensate:
					return apperr.New(apperr.Transient, "participant down (injected)")
				}
				return nil
			}
			orderID, sagaID := e.place(item("sku-1", c.quantity, 150))
			e.deliver(chaos{})
			if s := e.saga(sagaID); s.State != saga.StateFailed {
				t.Fatalf("saga %s, want failed", s.State)
			}
			if o := e.order(orderID); o.Status != order.StatusFailed {
				t.Fatalf("order %s, want FAILED", o.Status)
			}
			dls := e.deadLetters()
			if len(dls) != 1 {
				t.Fatalf("%d dead letters, want 1", len(dls))
			}
			got, ok := dlq.HeldOf(dls[0])
			if !ok {
				t.Fatalf("dead letter attributes %v: no %q", dls[0].Attrs, dlq.AttrHeld)
			}
			var want dlq.Held
			reserved := int64(0)
			if c.units {
				want.Units, reserved = []dlq.HeldUnit{{SKU: "sku-1", Quantity: c.quantity}}, c.quantity
			}
			if c.charge {
				want.Charge = &dlq.HeldCharge{PaymentID: payment.EntryID(sagaID, payment.Charge), AmountMinor: 150 * c.quantity, Currency: "RUB"}
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("held %+v (charge %+v), want %+v (charge %+v)", got, got.Charge, want, want.Charge)
			}
			if st := e.stockOf("sku-1"); st.Reserved != reserved {
				t.Errorf("stock %+v: the record must match the store", st)
			}
		})
	}
}
