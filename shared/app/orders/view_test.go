package orders

import (
	"testing"
	"time"

	"ordersaga/shared/domain/order"
	"ordersaga/shared/domain/saga"
)

// TestViewPlacesRecoveryRedrives: the saga row's re-drive version gives the
// last re-drive's time exactly while recovery's write is the row's last,
// only an upper bound once an advancer wrote the row after it, and nothing
// when no re-drive happened since the saga last moved.
func TestViewPlacesRecoveryRedrives(t *testing.T) {
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		name            string
		version, redriv int64
		want            *RedriveMark
	}{
		{"no re-drive", 4, 0, nil},
		{"re-drive is the last write", 5, 5, &RedriveMark{At: at, Exact: true}},
		{"an advancer wrote after it", 6, 5, &RedriveMark{At: at, Exact: false}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			inst := saga.Instance{ID: "s", State: saga.StateRunning, Version: tc.version, UpdatedAt: at,
				Data: saga.Data{Redrives: 2, UnconsumedRedrives: 1, RedriveVersion: tc.redriv, Waits: 3}}
			v := NewView(order.Order{ID: "o"}, &inst, nil, nil)
			got := v.Saga.LastRedrive
			if (got == nil) != (tc.want == nil) || (got != nil && *got != *tc.want) {
				t.Errorf("LastRedrive = %+v, want %+v", got, tc.want)
			}
			if v.Saga.RecoveryRedrives != 2 || v.Saga.UnconsumedRedrives != 1 || v.Saga.BreakerWaits != 3 {
				t.Errorf("counts = %d consumed, %d unconsumed, %d waits; want 2, 1, 3",
					v.Saga.RecoveryRedrives, v.Saga.UnconsumedRedrives, v.Saga.BreakerWaits)
			}
		})
	}
}
