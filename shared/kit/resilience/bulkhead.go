package resilience

import (
	"context"
	"fmt"

	"ordersaga/shared/domain/apperr"
)

// ErrBulkheadFull is returned (wrapped) when a [Bulkhead] has no free slot.
// It is Transient; test with errors.Is.
var ErrBulkheadFull = apperr.New(apperr.Transient, "bulkhead full")

// Bulkhead limits the number of concurrent calls to one dependency and fails
// fast, without queueing, when the limit is reached. It is safe for
// concurrent use and starts no goroutines.
type Bulkhead struct {
	name  string
	slots chan struct{}

	// OnReject, if set, is called synchronously with the bulkhead's name for
	// every rejected call (metrics hook). Set it before first use.
	OnReject func(name string)
}

// NewBulkhead returns a bulkhead admitting at most limit concurrent calls.
// A limit below 1 is treated as 1.
func NewBulkhead(name string, limit int) *Bulkhead {
	return &Bulkhead{name: name, slots: make(chan struct{}, max(limit, 1))}
}

// Name returns the bulkhead's name.
func (b *Bulkhead) Name() string { return b.name }

// Limit returns the maximum number of concurrent calls.
func (b *Bulkhead) Limit() int { return cap(b.slots) }

// InFlight returns the number of calls currently holding a slot.
func (b *Bulkhead) InFlight() int { return len(b.slots) }

// Execute runs fn in a free slot and returns its error unchanged. When every
// slot is taken it returns an error wrapping [ErrBulkheadFull] immediately,
// without calling fn. The slot is released when fn returns (or panics).
func (b *Bulkhead) Execute(ctx context.Context, fn func(ctx context.Context) error) error {
	select {
	case b.slots <- struct{}{}:
	default:
		if b.OnReject != nil {
			b.OnReject(b.name)
		}
		return fmt.Errorf("bulkhead %s: %w", b.name, ErrBulkheadFull)
	}
	defer func() { <-b.slots }()
	return fn(ctx)
}
