// Package breakerboard keeps the last state of each circuit breaker this
// instance guards, for operators (the console's breaker list).
package breakerboard

import (
	"slices"
	"strings"
	"sync"
	"time"

	"ordersaga/shared/kit/resilience"
)

// Status is a dependency's circuit breaker as this instance last saw it
// change (an Open breaker turns Half-Open on its next call after the open
// timeout, so an idle Open one may be ready to probe).
type Status struct {
	Dependency string    `json:"dependency"`
	State      string    `json:"state"`
	Since      time.Time `json:"since"`
}

// Board keeps each breaker's last state. Safe for concurrent use.
type Board struct {
	mu  sync.Mutex
	now func() time.Time
	m   map[string]Status
}

// Config configures a Board (New).
type Config struct {
	Now func() time.Time // stamps each change; default time.Now
}

// New returns an empty Board. It never fails; the error keeps the shape of
// every use case's constructor.
func New(cfg Config) (*Board, error) {
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	return &Board{now: now, m: map[string]Status{}}, nil
}

// Set records that the breaker of dependency name is now in state s.
func (b *Board) Set(name string, s resilience.State) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.m[name] = Status{Dependency: name, State: s.String(), Since: b.now()}
}

// List returns every breaker's last state, by dependency name.
func (b *Board) List() []Status {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]Status, 0, len(b.m))
	for _, s := range b.m {
		out = append(out, s)
	}
	slices.SortFunc(out, func(x, y Status) int { return strings.Compare(x.Dependency, y.Dependency) })
	return out
}
