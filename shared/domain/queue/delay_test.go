package queue

import (
	"testing"
	"time"
)

func TestDelayUntilRoundsUpAndNeverDeliversEarly(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name   string
		due    time.Duration // after now
		want   time.Duration
		wantOK bool
	}{
		{"past", -time.Second, 0, true},
		{"now", 0, 0, true},
		{"one nanosecond", time.Nanosecond, time.Second, true},
		{"a second read 2 ms late", time.Second - 2*time.Millisecond, time.Second, true},
		{"exactly one second", time.Second, time.Second, true},
		{"one and a half seconds", 1500 * time.Millisecond, 2 * time.Second, true},
		{"the longest delay", MaxDelay, MaxDelay, true},
		{"rounds up to the longest delay", MaxDelay - time.Millisecond, MaxDelay, true},
		{"beyond the longest delay", MaxDelay + time.Millisecond, MaxDelay, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := DelayUntil(now.Add(tc.due), now)
			if got != tc.want || ok != tc.wantOK {
				t.Fatalf("DelayUntil(now+%s) = %s, %v; want %s, %v", tc.due, got, ok, tc.want, tc.wantOK)
			}
			if ok && now.Add(got).Before(now.Add(tc.due)) {
				t.Fatalf("a message sent at now with delay %s arrives before its due time now+%s", got, tc.due)
			}
			if got%DelayUnit != 0 {
				t.Fatalf("delay %s is not a whole number of %s", got, DelayUnit)
			}
		})
	}
}
