package app

import (
	"slices"
	"strings"
	"sync"
	"time"

	"ordersaga/shared/kit/resilience"
)

// BreakerStatus is a dependency's circuit breaker as this instance last
// saw it change (an Open breaker turns Half-Open on its next call after the
// open timeout, so an idle Open one may be ready to probe).
type BreakerStatus struct {
	Dependency string    `json:"dependency"`
	State      string    `json:"state"`
	Since      time.Time `json:"since"`
}

// breakerBoard keeps each breaker's last state. Safe for concurrent use.
type breakerBoard struct {
	mu  sync.Mutex
	now func() time.Time
	m   map[string]BreakerStatus
}

func (b *breakerBoard) set(name string, s resilience.State) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.m == nil {
		b.m = map[string]BreakerStatus{}
	}
	b.m[name] = BreakerStatus{Dependency: name, State: s.String(), Since: b.now()}
}

func (b *breakerBoard) list() []BreakerStatus {
	if b == nil {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]BreakerStatus, 0, len(b.m))
	for _, s := range b.m {
		out = append(out, s)
	}
	slices.SortFunc(out, func(x, y BreakerStatus) int { return strings.Compare(x.Dependency, y.Dependency) })
	return out
}

// Breakers returns the circuit breaker of each dependency this instance
// guards, by dependency name. Safe for concurrent use.
func (a *App) Breakers() []BreakerStatus { return a.hooks.board.list() }
