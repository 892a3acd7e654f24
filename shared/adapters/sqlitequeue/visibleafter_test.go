package sqlitequeue

import (
	"testing"
	"time"
)

// A hidden message is never visible early: receives compare ms(now), which
// rounds down, so the instant it shows is rounded up; with no delay it is
// visible at once.
func TestVisibleAfterNeverEarly(t *testing.T) {
	at := time.UnixMilli(1_000_000).Add(450 * time.Microsecond) // 0.45 ms into a millisecond
	for _, tc := range []struct {
		d    time.Duration
		want int64
	}{
		{0, 1_000_000},
		{-time.Second, 1_000_000},
		{400 * time.Millisecond, 1_000_401},                      // 1 000 400.45 ms, rounded up
		{400*time.Millisecond - 450*time.Microsecond, 1_000_400}, // exactly on a millisecond
	} {
		if got := visibleAfter(at, tc.d); got != tc.want {
			t.Errorf("visibleAfter(+%s) = %d, want %d", tc.d, got, tc.want)
		}
		if tc.d > 0 && time.UnixMilli(visibleAfter(at, tc.d)).Before(at.Add(tc.d)) {
			t.Errorf("visibleAfter(+%s) is before the delay ends", tc.d)
		}
	}
}
