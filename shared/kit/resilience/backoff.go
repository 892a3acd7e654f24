package resilience

import (
	"math"
	"math/rand/v2"
	"sync"
	"time"
)

// maxDuration is the largest representable time.Duration.
const maxDuration = time.Duration(math.MaxInt64)

// Backoff computes capped exponential delays with full jitter:
// Delay(n) is uniform in [0, min(Cap, Base·2^n)), n = 0 for the first retry.
//
// The zero value yields no delay at all. A Backoff is a value type and is
// safe for concurrent use if its Rand is.
type Backoff struct {
	// Base is the ceiling of the first retry's delay (n = 0). Zero means no
	// delay. A negative Base is refused by the Validate of the Config or
	// Retry holding the Backoff (and counts as zero here).
	Base time.Duration
	// Cap bounds every ceiling. Zero means no cap other than the largest
	// Duration; negative as for Base.
	Cap time.Duration
	// Rand returns a uniform sample in [0, 1). Nil uses math/rand/v2's global
	// source. Use [NewRand] for a seeded, concurrency-safe source in tests.
	Rand func() float64
}

// DefaultBackoff is a sensible starting point for calls inside one function
// invocation: 100 ms doubling up to 5 s.
var DefaultBackoff = Backoff{Base: 100 * time.Millisecond, Cap: 5 * time.Second}

// Ceiling returns min(Cap, Base·2^n), the exclusive upper bound of Delay(n).
// It never overflows: large n saturates at the cap. Negative n counts as 0.
func (b Backoff) Ceiling(n int) time.Duration {
	if b.Base <= 0 {
		return 0
	}
	limit := b.Cap
	if limit <= 0 {
		limit = maxDuration
	}
	if n < 0 {
		n = 0
	}
	// Base<<n overflows (or exceeds the limit) exactly when Base > limit>>n.
	if n >= 63 || b.Base > limit>>uint(n) {
		return limit
	}
	return min(b.Base<<uint(n), limit)
}

// Delay returns a full-jitter delay for retry n: uniform in [0, Ceiling(n)).
// It returns 0 when the ceiling is 0. Out-of-range samples from Rand are
// clamped so the result always stays inside the interval.
func (b Backoff) Delay(n int) time.Duration {
	ceil := b.Ceiling(n)
	if ceil <= 0 {
		return 0
	}
	r := b.sample()
	if r <= 0 || math.IsNaN(r) {
		return 0
	}
	// For r < 1, r·ceil < 2^63, so the conversion is defined; rounding may
	// still reach ceil, hence the clamp to keep the interval half-open.
	d := time.Duration(math.Min(r, 1) * float64(ceil))
	if d >= ceil {
		d = ceil - 1
	}
	if d < 0 {
		d = 0
	}
	return d
}

func (b Backoff) sample() float64 {
	if b.Rand != nil {
		return b.Rand()
	}
	return rand.Float64()
}

// NewRand returns a seeded uniform [0, 1) source suitable for Backoff.Rand.
// The same seed yields the same sequence; it is safe for concurrent use.
func NewRand(seed uint64) func() float64 {
	var mu sync.Mutex
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	return func() float64 {
		mu.Lock()
		defer mu.Unlock()
		return r.Float64()
	}
}
