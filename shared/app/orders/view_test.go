package orders

import (
	"testing"
	"time"

	"ordersaga/shared/domain/order"
	"ordersaga/shared/domain/saga"
)

// TestViewPlacesRecoveryResends: the saga row's resend version gives the
// last resend's time exactly while recovery's write is the row's last,
// only an upper bound once an advancer wrote the row after it, and nothing
// when no resend happened since the saga last moved.
func TestViewPlacesRecoveryResends(t *testing.T) {
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		name            string
		version, redriv int64
		want            *ResendMark
	}{
		{"no resend", 4, 0, nil},
		{"resend is the last write", 5, 5, &ResendMark{At: at, Exact: true}},
		{"an advancer wrote after it", 6, 5, &ResendMark{At: at, Exact: false}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			inst := saga.Instance{ID: "s", State: saga.StateRunning, Version: tc.version, UpdatedAt: at,
				Data: saga.Data{Resends: 2, UnconsumedResends: 1, ResendVersion: tc.redriv, Waits: 3}}
			v := NewView(order.Order{ID: "o"}, &inst, nil, nil)
			got := v.Saga.LastResend
			if (got == nil) != (tc.want == nil) || (got != nil && *got != *tc.want) {
				t.Errorf("LastResend = %+v, want %+v", got, tc.want)
			}
			if v.Saga.RecoveryResends != 2 || v.Saga.UnconsumedResends != 1 || v.Saga.BreakerWaits != 3 {
				t.Errorf("counts = %d consumed, %d unconsumed, %d waits; want 2, 1, 3",
					v.Saga.RecoveryResends, v.Saga.UnconsumedResends, v.Saga.BreakerWaits)
			}
		})
	}
}
