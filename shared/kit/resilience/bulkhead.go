package resilience

import (
	"cmp"
	"context"
	"fmt"

	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/kit/validate"
)

// ErrBulkheadFull is returned (wrapped) when a [Bulkhead] has no free slot.
// It is Transient; test with errors.Is.
var ErrBulkheadFull = apperr.New(apperr.Transient, "bulkhead full")

// Bulkhead limits the number of concurrent calls to one dependency and fails
// fast, without queueing, when the limit is reached. It is safe for
// concurrent use and starts no goroutines.
type Bulkhead struct {
	cfg   BulkheadConfig
	slots chan struct{}
}

// DefaultBulkheadLimit is the Limit of a BulkheadConfig that sets none.
const DefaultBulkheadLimit = 1

// BulkheadConfig configures a [Bulkhead] (NewBulkhead). Zero fields take the
// defaults named; a negative Limit is refused.
type BulkheadConfig struct {
	// Name names the dependency in errors and in OnReject.
	Name string
	// Limit is the most calls in flight at once (default DefaultBulkheadLimit).
	Limit int
	// OnReject, if set, is called synchronously with the bulkhead's name for
	// every rejected call (metrics hook).
	OnReject func(name string)
}

// NewBulkhead returns a bulkhead admitting at most cfg.Limit concurrent
// calls. It fails (apperr.Invalid, naming the field) on a negative Limit.
func NewBulkhead(cfg BulkheadConfig) (*Bulkhead, error) {
	var p validate.Problems
	validate.NotNegative(&p, "Limit", cfg.Limit)
	if err := p.Err("resilience.NewBulkhead"); err != nil {
		return nil, err
	}
	cfg.Limit = cmp.Or(cfg.Limit, DefaultBulkheadLimit)
	return &Bulkhead{cfg: cfg, slots: make(chan struct{}, cfg.Limit)}, nil
}

// Name returns the bulkhead's name.
func (b *Bulkhead) Name() string { return b.cfg.Name }

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
		if b.cfg.OnReject != nil {
			b.cfg.OnReject(b.cfg.Name)
		}
		return fmt.Errorf("bulkhead %s: %w", b.cfg.Name, ErrBulkheadFull)
	}
	defer func() { <-b.slots }()
	return fn(ctx)
}
