// Package fakeclock is a settable clock for tests: use cases take a
// `Now func() time.Time`, and tests pass (*Clock).Now to move time forward
// explicitly (leases, backoff, TTL, visibility) instead of sleeping.
package fakeclock

import (
	"sync"
	"time"
)

// Clock is a concurrency-safe settable clock.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// New returns a clock showing t.
func New(t time.Time) *Clock { return &Clock{t: t} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// AtLeast moves the clock forward to t (never back).
func (c *Clock) AtLeast(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t.After(c.t) {
		c.t = t
	}
}
