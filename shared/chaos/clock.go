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
// expire without sleeping. Safe for concurrent use; monotonic.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: start} }

// Now returns the current fake time.
func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
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
