package chaos

import (
	"sync"
	"time"
)

// start is the fake clock's first instant (microsecond precision, as the
// stores keep it).
var start = time.Date(2025, 6, 1, 9, 0, 0, 0, time.UTC)

// clock is the run's fake time: every component reads it, only the run moves
// it forward, so leases, backoffs, visibility timeouts and recovery windows
// expire without sleeping. With a step, every reading also moves it forward
// by step, as a real clock moves between two readings of one code path (a
// wait computed from one reading and sent from a later one is shorter by
// then). Safe for concurrent use; monotonic.
type clock struct {
	mu   sync.Mutex
	t    time.Time
	step time.Duration
}

// newClock returns a clock at start that advances by step (truncated to
// microseconds, the stores' precision; 0: not at all) after every reading.
func newClock(step time.Duration) *clock {
	return &clock{t: start, step: step.Truncate(time.Microsecond)}
}

// Now returns the current fake time, then moves the clock by its step.
func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.t
	c.t = c.t.Add(c.step)
	return t
}

// Advance moves the clock forward by d (negative d is ignored).
func (c *clock) Advance(d time.Duration) {
	if d <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d.Truncate(time.Microsecond))
}

// Elapsed is how much fake time passed since the run started.
func (c *clock) Elapsed() time.Duration { return c.Now().Sub(start) }
