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

func TestTickingClockAdvancesOnEveryReading(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c := NewTicking(t0, 3*time.Millisecond)
	a, b := c.Now(), c.Now()
	if !a.Equal(t0) || b.Sub(a) != 3*time.Millisecond {
		t.Fatalf("readings %v, %v: want %v and 3ms later", a, b, t0)
	}
	if got := c.Peek(); !got.Equal(b.Add(3 * time.Millisecond)) {
		t.Fatalf("Peek = %v, want %v", got, b.Add(3*time.Millisecond))
	}
	if got := c.Peek(); !got.Equal(b.Add(3 * time.Millisecond)) {
		t.Fatalf("Peek moved the clock: %v", got)
	}
	c.Advance(time.Second)
	if got := c.Now(); got.Sub(b) != time.Second+3*time.Millisecond {
		t.Fatalf("after Advance: %v, want %v", got, b.Add(time.Second+3*time.Millisecond))
	}
	if got := NewTicking(t0, -time.Second); !got.Now().Equal(t0) || !got.Now().Equal(t0) {
		t.Fatal("a negative step must not move the clock")
	}
}
