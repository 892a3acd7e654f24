// Package fakeclock is a settable clock for tests: use cases take a
// `Now func() time.Time`, and tests pass (*Clock).Now to move time forward
// explicitly (leases, backoff, TTL, visibility) instead of sleeping.
//
// A clock that never moves between two readings hides rounding and ordering
// bugs (a delay computed from a later reading than the deadline it serves):
// NewTicking makes every reading advance the clock by a step, the way time
// passes between two calls of time.Now on a real machine.
package fakeclock

import (
	"sync"
	"time"
)

// Clock is a concurrency-safe settable clock.
type Clock struct {
	mu   sync.Mutex
	t    time.Time
	step time.Duration
}

// New returns a clock showing t that moves only when told (Advance, AtLeast).
func New(t time.Time) *Clock { return &Clock{t: t} }

// NewTicking returns a clock showing t that, besides moving when told,
// advances by step after every reading: two calls of Now never return the
// same time (for step > 0), and the later call always returns the later
// time. A step <= 0 is a clock that moves only when told, as New.
func NewTicking(t time.Time, step time.Duration) *Clock {
	return &Clock{t: t, step: max(step, 0)}
}

// Now returns the clock's time, then advances it by the clock's step
// (NewTicking).
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.t
	c.t = c.t.Add(c.step)
	return t
}

// Peek returns the time the next Now would return, without advancing the
// clock (for a test's own bookkeeping, which must not move time).
func (c *Clock) Peek() time.Time {
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
