// Package paymentsim is the local payment provider: the JSON API of package
// payments (POST /charges, POST /refunds) as an http.Handler, and the same
// rules in process as a payments.Provider for tests and chaos runs.
//
// Rules: requests are deduplicated by idempotency key (a repeat gets the
// first answer and changes nothing); a charge above DeclineAbove minor units
// is declined; a refund reverses the charge made under its charge key, or,
// if none was made, voids that key so a later charge with it is declined.
// Faults can be injected: a failure rate (503 / Transient, before any
// effect), a lost-answer rate (the effect happens but the caller gets 503 /
// Transient, as when a response times out) and a latency. Randomness is
// seedable and time is injectable, so runs are reproducible.
package paymentsim

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"ordersaga/shared/app/payments"
	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/kit/resilience"
	"ordersaga/shared/kit/validate"
)

// DefaultDeclineAbove is the largest amount (minor units) charged without a decline.
const DefaultDeclineAbove = 1_000_000

// Config configures a Sim (New). Zero fields take the defaults named;
// negative ones are refused. The zero value is a well-behaved provider.
type Config struct {
	// DeclineAbove declines charges with a larger amount (default
	// DefaultDeclineAbove).
	DeclineAbove int64
	// FailureRate in [0,1] is the probability that a request fails with 503
	// (Transient) before doing anything.
	FailureRate float64
	// LostAnswerRate in [0,1] is the probability that a request takes effect
	// but its caller is told 503 (Transient): the answer was "lost".
	LostAnswerRate float64
	// Latency is added to every request (through Sleep); zero adds none.
	Latency time.Duration
	// Seed seeds the fault randomness.
	Seed uint64
	// Sleep waits for the latency; a context-aware real sleep if nil.
	Sleep func(ctx context.Context, d time.Duration) error
}

// Counters are the simulator's totals, for tests and the local runner.
type Counters struct {
	Requests      int   `json:"requests"`
	Charges       int   `json:"charges"`  // charges made (money taken)
	Declines      int   `json:"declines"` // charges declined
	Refunds       int   `json:"refunds"`  // charges refunded
	Voids         int   `json:"voids"`    // refunds of keys never charged
	Replays       int   `json:"replays"`  // requests answered from the dedupe table
	Failures      int   `json:"failures"` // injected failures (no effect)
	LostAnswers   int   `json:"lost_answers"`
	ChargedMinor  int64 `json:"charged_minor"`
	RefundedMinor int64 `json:"refunded_minor"`
}

type chargeState int

const (
	charged chargeState = iota + 1
	declined
	voided
)

type chargeRec struct {
	state    chargeState
	ref      string
	amount   int64
	currency string
	reason   string
	refundBy string // refund key that reversed it
}

type refundRec struct {
	ref      string
	refunded bool
}

// Sim is the simulated provider. Safe for concurrent use; requests for the
// same key are serialised by one mutex, so the dedupe is exact.
type Sim struct {
	cfg Config

	mu       sync.Mutex
	rnd      *rand.Rand
	charges  map[string]*chargeRec
	refunds  map[string]refundRec
	counters Counters
	seq      int
}

var _ payments.Provider = (*Sim)(nil)

// Validate reports what New would refuse: a negative DeclineAbove or
// Latency, a FailureRate or LostAnswerRate outside [0,1]. Errors are
// apperr.Invalid and name the fields.
func (c Config) Validate() error {
	var p validate.Problems
	validate.NotNegative(&p, "DeclineAbove", c.DeclineAbove)
	validate.NotNegative(&p, "FailureRate", c.FailureRate)
	validate.AtMost(&p, "FailureRate", c.FailureRate, 1)
	validate.NotNegative(&p, "LostAnswerRate", c.LostAnswerRate)
	validate.AtMost(&p, "LostAnswerRate", c.LostAnswerRate, 1)
	validate.NotNegative(&p, "Latency", c.Latency)
	return p.Err("paymentsim.New")
}

// setDefaults gives each zero field of c its documented default.
func (c *Config) setDefaults() {
	c.DeclineAbove = cmp.Or(c.DeclineAbove, DefaultDeclineAbove)
}

// New returns a simulator configured by cfg. It fails (apperr.Invalid,
// naming the fields) on what Config.Validate refuses.
func New(cfg Config) (*Sim, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg.setDefaults()
	return &Sim{cfg: cfg, rnd: rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x5bd1e995)),
		charges: map[string]*chargeRec{}, refunds: map[string]refundRec{}}, nil
}

// SetFaults changes the failure and lost-answer rates and the latency at
// run time (e.g. to exercise the breaker from the local runner).
func (s *Sim) SetFaults(failureRate, lostAnswerRate float64, latency time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cfg.FailureRate, s.cfg.LostAnswerRate, s.cfg.Latency = failureRate, lostAnswerRate, latency
}

// SetFailureRate changes only the failure rate (the local runner's
// PATCH /_faults), keeping the lost-answer rate and the latency.
func (s *Sim) SetFailureRate(rate float64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cfg.FailureRate = rate
}

// FailureRate returns the current failure rate.
func (s *Sim) FailureRate() float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cfg.FailureRate
}

// Counters returns a snapshot of the totals.
func (s *Sim) Counters() Counters {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.counters
}

// Charge implements payments.Provider.
func (s *Sim) Charge(ctx context.Context, key string, amountMinor int64, currency string) (string, error) {
	if key == "" || amountMinor <= 0 || currency == "" {
		return "", apperr.New(apperr.Invalid, "paymentsim: charge needs a key, a positive amount and a currency")
	}
	lost, err := s.begin(ctx)
	if err != nil {
		return "", err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.charges[key]
	if ok {
		s.counters.Replays++
	} else {
		c = &chargeRec{amount: amountMinor, currency: currency}
		if amountMinor > s.cfg.DeclineAbove {
			c.state, c.reason = declined, fmt.Sprintf("amount %d is above the limit %d", amountMinor, s.cfg.DeclineAbove)
			s.counters.Declines++
		} else {
			s.seq++
			c.state, c.ref = charged, fmt.Sprintf("ch_%06d", s.seq)
			s.counters.Charges++
			s.counters.ChargedMinor += amountMinor
		}
		s.charges[key] = c
	}
	if lost {
		s.counters.LostAnswers++
		return "", apperr.New(apperr.Transient, "paymentsim: answer lost")
	}
	switch {
	case c.state == voided:
		return "", apperr.New(apperr.Rejected, "charge key was voided")
	case c.amount != amountMinor || c.currency != currency:
		return "", apperr.New(apperr.Invalid, "paymentsim: key %s was used for another amount", key)
	case c.state == charged:
		return c.ref, nil
	default:
		return "", apperr.New(apperr.Rejected, "%s", c.reason)
	}
}

// Refund implements payments.Provider.
func (s *Sim) Refund(ctx context.Context, key, chargeKey string, amountMinor int64, currency string) (bool, error) {
	if key == "" || chargeKey == "" {
		return false, apperr.New(apperr.Invalid, "paymentsim: refund needs a key and a charge key")
	}
	lost, err := s.begin(ctx)
	if err != nil {
		return false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.refunds[key]
	if ok {
		s.counters.Replays++
	} else {
		r, err = s.refundLocked(key, chargeKey, amountMinor, currency)
		if err != nil {
			return false, err
		}
		s.refunds[key] = r
	}
	if lost {
		s.counters.LostAnswers++
		return false, apperr.New(apperr.Transient, "paymentsim: answer lost")
	}
	return r.refunded, nil
}

// refundLocked applies a first refund request. Caller holds mu.
func (s *Sim) refundLocked(key, chargeKey string, amountMinor int64, currency string) (refundRec, error) {
	c, ok := s.charges[chargeKey]
	if !ok {
		s.charges[chargeKey] = &chargeRec{state: voided, amount: amountMinor, currency: currency, refundBy: key}
		s.counters.Voids++
		return refundRec{}, nil
	}
	if c.state != charged {
		return refundRec{}, nil
	}
	if c.refundBy != "" {
		return refundRec{}, apperr.New(apperr.Invalid, "paymentsim: charge %s was already refunded", chargeKey)
	}
	if c.amount != amountMinor || c.currency != currency {
		return refundRec{}, apperr.New(apperr.Invalid, "paymentsim: refund amount %d %s does not match the charge", amountMinor, currency)
	}
	s.seq++
	c.refundBy = key
	s.counters.Refunds++
	s.counters.RefundedMinor += c.amount
	return refundRec{ref: fmt.Sprintf("rf_%06d", s.seq), refunded: true}, nil
}

// begin counts a request, waits the latency and draws the injected faults:
// an error for a failure (no effect), lost=true for a lost answer.
func (s *Sim) begin(ctx context.Context) (lost bool, err error) {
	s.mu.Lock()
	s.counters.Requests++
	latency := s.cfg.Latency
	fail := s.cfg.FailureRate > 0 && s.rnd.Float64() < s.cfg.FailureRate
	lost = s.cfg.LostAnswerRate > 0 && s.rnd.Float64() < s.cfg.LostAnswerRate
	if fail {
		s.counters.Failures++
	}
	s.mu.Unlock()
	if latency > 0 {
		if err := s.sleep(ctx, latency); err != nil {
			return false, apperr.Wrap(apperr.Transient, err, "paymentsim: canceled")
		}
	}
	if fail {
		return false, apperr.New(apperr.Transient, "paymentsim: injected failure")
	}
	return lost, nil
}

func (s *Sim) sleep(ctx context.Context, d time.Duration) error {
	if s.cfg.Sleep != nil {
		return s.cfg.Sleep(ctx, d)
	}
	return resilience.SleepContext(ctx, d)
}
