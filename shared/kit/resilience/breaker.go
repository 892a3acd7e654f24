package resilience

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/kit/validate"
)

// State is a circuit breaker state.
type State int

// The breaker states.
const (
	// StateClosed lets every call through and counts consecutive failures.
	StateClosed State = iota
	// StateOpen fails every call fast with ErrOpen until OpenTimeout passes.
	StateOpen
	// StateHalfOpen lets exactly one probe call through at a time.
	StateHalfOpen
)

// String returns "closed", "open" or "half_open" (stable; used as a metric label).
func (s State) String() string {
	switch s {
	case StateClosed:
		return "closed"
	case StateOpen:
		return "open"
	case StateHalfOpen:
		return "half_open"
	default:
		return fmt.Sprintf("state(%d)", int(s))
	}
}

// ErrOpen is returned (wrapped in an [*OpenError]) when the breaker refuses a
// call: it is Open, or it is Half-Open and a probe is already in flight.
// It is Transient: the dependency may recover; test with errors.Is.
var ErrOpen = apperr.New(apperr.Transient, "circuit breaker is open")

// OpenError is the error a refusing breaker returns. It unwraps to [ErrOpen]
// and hints, via RetryAfter, how long until the breaker will allow a probe
// (0 when unknown, e.g. while a probe is in flight).
type OpenError struct {
	// Name is the breaker's name.
	Name string
	// RetryIn is the remaining open time.
	RetryIn time.Duration
}

var _ RetryAfterer = (*OpenError)(nil)

// Error implements error.
func (e *OpenError) Error() string { return "breaker " + e.Name + ": " + ErrOpen.Error() }

// Unwrap returns ErrOpen.
func (e *OpenError) Unwrap() error { return ErrOpen }

// RetryAfter implements [RetryAfterer].
func (e *OpenError) RetryAfter() time.Duration { return e.RetryIn }

// ErrDown marks a call that reached the dependency and failed while the
// breaker judges the dependency down: the failure opened the breaker, was a
// failed Half-Open probe (which opens it again), or the breaker opened while
// the call ran. Like a refusal ([ErrOpen]), such a failure says the
// dependency is down, not that the request is wrong. It is Transient; test
// with errors.Is.
var ErrDown = apperr.New(apperr.Transient, "circuit breaker is open after this failure")

// DownError is the error Execute returns for a failure after which the
// breaker is open (see [ErrDown]). errors.Is and errors.As find both the
// call's own error (first: its apperr kind is the call's) and ErrDown;
// RetryAfter is the breaker's remaining open time.
type DownError struct {
	// Err is the call's own error.
	Err error
	// Name is the breaker's name.
	Name string
	// RetryIn is the remaining open time.
	RetryIn time.Duration
}

var _ RetryAfterer = (*DownError)(nil)

// Error implements error.
func (e *DownError) Error() string {
	return e.Err.Error() + " (breaker " + e.Name + " is open)"
}

// Unwrap returns the call's error and ErrDown.
func (e *DownError) Unwrap() []error { return []error{e.Err, ErrDown} }

// RetryAfter implements [RetryAfterer].
func (e *DownError) RetryAfter() time.Duration { return e.RetryIn }

// Breaker defaults, used when the BreakerConfig field is zero.
const (
	DefaultFailureThreshold = 5
	DefaultOpenTimeout      = 30 * time.Second
	DefaultSuccessesToClose = 2
)

// BreakerConfig configures a [Breaker] (NewBreaker). Zero fields take the
// defaults named; negative ones are refused.
type BreakerConfig struct {
	// Name names the dependency in errors, log lines and the hooks.
	Name string
	// FailureThreshold is the number of consecutive failures (in Closed) that
	// opens the breaker (default DefaultFailureThreshold).
	FailureThreshold int
	// OpenTimeout is how long the breaker stays Open before allowing a probe
	// (default DefaultOpenTimeout).
	OpenTimeout time.Duration
	// SuccessesToClose is the number of consecutive successful Half-Open
	// probes that closes the breaker (default DefaultSuccessesToClose).
	SuccessesToClose int
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// IsFailure decides which errors count against the dependency; nil means
	// DefaultIsFailure. Errors that are not failures count as successes.
	IsFailure func(error) bool
	// OnStateChange, if set, is called on every transition, synchronously and
	// under the breaker's lock (so calls arrive in order): it must be quick and
	// must not call back into the breaker.
	OnStateChange func(name string, from, to State)
	// OnInit, if set, is called once by NewBreaker with the initial state
	// (Closed), so that metrics can export the breaker's series from the
	// start instead of from its first transition.
	OnInit func(name string, s State)
	// Log, if set, gets one warn line per transition (dependency, from, to;
	// on opening also the open timeout).
	Log *slog.Logger
}

// DefaultIsFailure counts every error as a dependency failure except caller
// errors — apperr kinds Invalid, NotFound, Conflict, Rejected, Forbidden and
// Unauthenticated — which prove the dependency answered.
func DefaultIsFailure(err error) bool {
	if err == nil {
		return false
	}
	switch apperr.KindOf(err) {
	case apperr.Invalid, apperr.NotFound, apperr.Conflict, apperr.Rejected,
		apperr.Forbidden, apperr.Unauthenticated:
		return false
	}
	return true
}

// Breaker is a Closed → Open → Half-Open circuit breaker for one dependency.
// It is safe for concurrent use and starts no goroutines: the Open → Half-Open
// move happens lazily, on the first Execute or State after OpenTimeout.
type Breaker struct {
	name string
	cfg  BreakerConfig

	mu        sync.Mutex
	state     State
	gen       uint64 // bumped on every transition; results from older generations are ignored
	failures  int    // consecutive failures while Closed
	successes int    // consecutive successful probes while Half-Open
	probing   bool   // a Half-Open probe is in flight
	openedAt  time.Time
}

// NewBreaker returns a Closed breaker with cfg's zero fields set to their
// defaults, and calls cfg.OnInit. It fails (apperr.Invalid, naming the
// fields; see BreakerConfig.Validate) on a negative setting.
func NewBreaker(cfg BreakerConfig) (*Breaker, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg.setDefaults()
	b := &Breaker{name: cfg.Name, cfg: cfg}
	if cfg.OnInit != nil {
		cfg.OnInit(cfg.Name, StateClosed)
	}
	return b, nil
}

// Validate reports what NewBreaker would refuse: a negative
// FailureThreshold, OpenTimeout or SuccessesToClose. Errors are
// apperr.Invalid and name the fields.
func (c BreakerConfig) Validate() error {
	var p validate.Problems
	validate.NotNegative(&p, "FailureThreshold", c.FailureThreshold)
	validate.NotNegative(&p, "OpenTimeout", c.OpenTimeout)
	validate.NotNegative(&p, "SuccessesToClose", c.SuccessesToClose)
	return p.Err("resilience.NewBreaker")
}

// setDefaults gives each zero field of c its documented default.
func (c *BreakerConfig) setDefaults() {
	c.FailureThreshold = cmp.Or(c.FailureThreshold, DefaultFailureThreshold)
	c.OpenTimeout = cmp.Or(c.OpenTimeout, DefaultOpenTimeout)
	c.SuccessesToClose = cmp.Or(c.SuccessesToClose, DefaultSuccessesToClose)
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.IsFailure == nil {
		c.IsFailure = DefaultIsFailure
	}
}

// Name returns the breaker's name.
func (b *Breaker) Name() string { return b.name }

// State returns the current state, first moving Open to Half-Open if the
// open timeout has passed. Safe for concurrent use.
func (b *Breaker) State() State {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.advance(b.cfg.Now())
	return b.state
}

// Execute runs fn if the breaker allows it and records the outcome. While
// Open, and while Half-Open with a probe in flight, it returns an
// [*OpenError] (errors.Is(err, ErrOpen), Transient) without calling fn.
// Otherwise it returns fn's error, unchanged unless it is a failure
// (IsFailure) after which the breaker is open: then it is wrapped in a
// [*DownError] (errors.Is(err, ErrDown)). A caller cancellation
// (context.Canceled while ctx is canceled) counts neither way. A panic in fn
// counts as a failure and is re-raised. Safe for concurrent use.
func (b *Breaker) Execute(ctx context.Context, fn func(ctx context.Context) error) error {
	gen, probe, err := b.admit()
	if err != nil {
		return err
	}
	finished := false
	defer func() {
		if !finished { // fn panicked: never leave a probe slot held
			b.record(gen, probe, true)
		}
	}()
	ferr := fn(ctx)
	finished = true
	if errors.Is(ferr, context.Canceled) && errors.Is(ctx.Err(), context.Canceled) {
		b.release(gen, probe)
		return ferr
	}
	failed := b.cfg.IsFailure(ferr)
	if retryIn, open := b.record(gen, probe, failed); failed && open {
		return &DownError{Err: ferr, Name: b.name, RetryIn: retryIn}
	}
	return ferr
}

// admit decides whether a call may run; probe is true for the Half-Open probe.
func (b *Breaker) admit() (gen uint64, probe bool, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.cfg.Now()
	b.advance(now)
	switch b.state {
	case StateOpen:
		return 0, false, &OpenError{Name: b.name, RetryIn: b.openedAt.Add(b.cfg.OpenTimeout).Sub(now)}
	case StateHalfOpen:
		if b.probing {
			return 0, false, &OpenError{Name: b.name}
		}
		b.probing = true
		return b.gen, true, nil
	default:
		return b.gen, false, nil
	}
}

// record applies a finished call's outcome, unless the state moved on
// meanwhile, and reports whether the breaker is Open afterwards, with its
// remaining open time.
func (b *Breaker) record(gen uint64, probe, failed bool) (retryIn time.Duration, open bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.cfg.Now()
	defer func() {
		if b.state == StateOpen {
			retryIn, open = max(b.openedAt.Add(b.cfg.OpenTimeout).Sub(now), 0), true
		}
	}()
	if gen != b.gen {
		return // stale: e.g. a Closed-era call finishing after the breaker opened
	}
	if probe {
		b.probing = false
		if failed {
			b.transition(StateOpen, now) // fresh open timeout
			return
		}
		b.successes++
		if b.successes >= b.cfg.SuccessesToClose {
			b.transition(StateClosed, now)
		}
		return
	}
	// Same generation and not a probe: the breaker is still Closed.
	if !failed {
		b.failures = 0
		return
	}
	b.failures++
	if b.failures >= b.cfg.FailureThreshold {
		b.transition(StateOpen, now)
	}
	return
}

// release frees a probe slot without judging the outcome.
func (b *Breaker) release(gen uint64, probe bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if probe && gen == b.gen {
		b.probing = false
	}
}

// advance moves Open to Half-Open once the open timeout has passed. Caller holds mu.
func (b *Breaker) advance(now time.Time) {
	if b.state == StateOpen && !now.Before(b.openedAt.Add(b.cfg.OpenTimeout)) {
		b.transition(StateHalfOpen, now)
	}
}

// transition switches state, resets counters and fires the hook. Caller holds mu.
func (b *Breaker) transition(to State, now time.Time) {
	from := b.state
	b.state = to
	b.gen++
	b.failures, b.successes, b.probing = 0, 0, false
	if to == StateOpen {
		b.openedAt = now
	}
	if from == to {
		return
	}
	if b.cfg.Log != nil {
		attrs := []any{"dependency", b.name, "from", from.String(), "to", to.String()}
		if to == StateOpen {
			attrs = append(attrs, "open_for", b.cfg.OpenTimeout.String())
		}
		b.cfg.Log.Warn("circuit breaker state changed", attrs...)
	}
	if b.cfg.OnStateChange != nil {
		b.cfg.OnStateChange(b.name, from, to)
	}
}
