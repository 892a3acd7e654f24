package fakeclock

import (
	"testing"
	"time"
)

func TestClock(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c := New(t0)
	c.Advance(time.Minute)
	c.AtLeast(t0) // never back
	if got := c.Now(); !got.Equal(t0.Add(time.Minute)) {
		t.Fatalf("Now = %v", got)
	}
	c.AtLeast(t0.Add(time.Hour))
	if got := c.Now(); !got.Equal(t0.Add(time.Hour)) {
		t.Fatalf("Now = %v", got)
	}
}
