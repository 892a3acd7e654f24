package payments_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"ordersaga/shared/adapters/paymentsim"
	"ordersaga/shared/app/payments"
	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/kit/fakeclock"
	"ordersaga/shared/kit/resilience"
)

func serve(t *testing.T, h http.Handler) *payments.HTTPProvider {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	p, err := payments.NewHTTPProvider(payments.HTTPConfig{BaseURL: srv.URL, Client: srv.Client(), Now: func() time.Time { return t0 }})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestHTTPProviderAgainstSimulator(t *testing.T) {
	ctx := context.Background()
	sim := newSim(t, paymentsim.Config{DeclineAbove: 1000})
	p := serve(t, sim.Handler())

	ref, err := p.Charge(ctx, "k1", 900, "RUB")
	if err != nil || ref == "" {
		t.Fatalf("charge: %q, %v", ref, err)
	}
	again, err := p.Charge(ctx, "k1", 900, "RUB")
	if err != nil || again != ref {
		t.Fatalf("replayed charge: got %q, %v; want %q", again, err, ref)
	}
	if _, err := p.Charge(ctx, "k2", 1001, "RUB"); !apperr.Is(err, apperr.Rejected) {
		t.Fatalf("charge above limit: got %v, want Rejected", err)
	}
	if _, err := p.Charge(ctx, "k1", 800, "RUB"); !apperr.Is(err, apperr.Invalid) {
		t.Fatalf("key reused for another amount: got %v, want Invalid", err)
	}
	if _, err := p.Charge(ctx, "", 800, "RUB"); !apperr.Is(err, apperr.Invalid) {
		t.Fatalf("no key: got %v, want Invalid", err)
	}
	got, err := p.Refund(ctx, "r1", "k1", 900, "RUB")
	if err != nil || !got {
		t.Fatalf("refund: %v, %v", got, err)
	}
	if got, err := p.Refund(ctx, "r2", "never", 900, "RUB"); err != nil || got {
		t.Fatalf("refund of nothing: got %v, %v; want false", got, err)
	}
	c := sim.Counters()
	if c.Charges != 1 || c.Declines != 1 || c.Refunds != 1 || c.Voids != 1 || c.Replays != 2 {
		t.Errorf("counters: %+v", c)
	}

	sim.SetFaults(1, 0, 0)
	_, err = p.Charge(ctx, "k3", 10, "RUB")
	var he *resilience.HTTPStatusError
	if !apperr.Is(err, apperr.Transient) || !errors.As(err, &he) || he.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("injected failure: got %v, want Transient 503", err)
	}
}

func TestHTTPProviderStatusMapping(t *testing.T) {
	tests := []struct {
		code       int
		retryAfter string
		want       apperr.Kind
		wantHint   time.Duration
	}{
		{http.StatusTooManyRequests, "2", apperr.Transient, 2 * time.Second},
		{http.StatusBadGateway, "", apperr.Transient, 0},
		{http.StatusNotImplemented, "", apperr.Invalid, 0},
		{http.StatusBadRequest, "", apperr.Invalid, 0},
		{http.StatusConflict, "", apperr.Conflict, 0},
		{http.StatusTooEarly, "", apperr.Conflict, 0},
	}
	for _, tc := range tests {
		t.Run(http.StatusText(tc.code), func(t *testing.T) {
			p := serve(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				if tc.retryAfter != "" {
					w.Header().Set("Retry-After", tc.retryAfter)
				}
				w.WriteHeader(tc.code)
			}))
			_, err := p.Charge(context.Background(), "k", 1, "RUB")
			var ra resilience.RetryAfterer
			if apperr.KindOf(err) != tc.want || !errors.As(err, &ra) || ra.RetryAfter() != tc.wantHint {
				t.Fatalf("got %v, want kind %v with hint %v", err, tc.want, tc.wantHint)
			}
		})
	}
}

// clock is the shared settable test clock.
type clock = fakeclock.Clock

// gate blocks the simulator's latency sleep until released, announcing each entry.
type gate struct {
	entered chan struct{}
	release chan struct{}
}

func newGate() *gate { return &gate{entered: make(chan struct{}, 16), release: make(chan struct{})} }

func (g *gate) Sleep(ctx context.Context, _ time.Duration) error {
	g.entered <- struct{}{}
	select {
	case <-g.release:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

type policyOpts struct {
	threshold, toClose, attempts, concurrent int
	sleeps                                   *[]time.Duration
	events                                   *[]resilience.AttemptEvent
}

// guard returns p behind the policy o describes, and that policy.
func guard(t *testing.T, p payments.Provider, clk *clock, o policyOpts) (*payments.Guarded, *resilience.Policy) {
	t.Helper()
	g, err := payments.NewGuarded(payments.GuardedConfig{Provider: p, Policy: payments.PolicyConfig{
		MaxConcurrent: o.concurrent,
		Breaker: resilience.BreakerConfig{FailureThreshold: o.threshold, OpenTimeout: 30 * time.Second,
			SuccessesToClose: o.toClose, Now: clk.Now},
		MaxAttempts:    o.attempts,
		Backoff:        resilience.Backoff{Base: 100 * time.Millisecond, Cap: time.Second, Rand: resilience.NewRand(7)},
		AttemptTimeout: 10 * time.Second,
		Sleep: func(_ context.Context, d time.Duration) error {
			if o.sleeps != nil {
				*o.sleeps = append(*o.sleeps, d)
			}
			return nil
		},
		OnAttempt: func(e resilience.AttemptEvent) {
			if o.events != nil {
				*o.events = append(*o.events, e)
			}
		},
	}})
	if err != nil {
		t.Fatal(err)
	}
	return g, g.Policy
}

func TestBreakerThroughHTTP(t *testing.T) {
	ctx := context.Background()
	clk := fakeclock.New(time.Unix(0, 0))
	g := newGate()
	sim := newSim(t, paymentsim.Config{FailureRate: 1})
	p, policy := guard(t, serve(t, sim.Handler()), clk, policyOpts{threshold: 3, toClose: 2, attempts: 1, concurrent: 8})

	for i := 0; i < 3; i++ {
		if _, err := p.Charge(ctx, "k", 10, "RUB"); !apperr.Is(err, apperr.Transient) || errors.Is(err, resilience.ErrOpen) {
			t.Fatalf("call %d: got %v, want a Transient provider failure", i, err)
		}
	}
	if got := policy.Breaker.State(); got != resilience.StateOpen {
		t.Fatalf("after 3 failures: breaker %v, want open", got)
	}
	if _, err := p.Charge(ctx, "k", 10, "RUB"); !errors.Is(err, resilience.ErrOpen) {
		t.Fatalf("while open: got %v, want ErrOpen", err)
	}
	if n := sim.Counters().Requests; n != 3 {
		t.Fatalf("provider saw %d requests, want 3 (open breaker must fail fast)", n)
	}

	// Half-Open: exactly one probe goes through; others fail fast meanwhile.
	clk.Advance(31 * time.Second)
	sim = newSim(t, paymentsim.Config{Latency: time.Millisecond, Sleep: g.Sleep})
	p.Provider = serve(t, sim.Handler())
	probe := make(chan error, 1)
	go func() { _, err := p.Charge(ctx, "k-probe", 10, "RUB"); probe <- err }()
	<-g.entered
	if _, err := p.Charge(ctx, "k-other", 10, "RUB"); !errors.Is(err, resilience.ErrOpen) {
		t.Fatalf("second call during the probe: got %v, want ErrOpen", err)
	}
	close(g.release)
	if err := <-probe; err != nil {
		t.Fatalf("probe: %v", err)
	}
	if got := policy.Breaker.State(); got != resilience.StateHalfOpen {
		t.Fatalf("after 1 of 2 successes: breaker %v, want half_open", got)
	}
	if _, err := p.Charge(ctx, "k-2", 10, "RUB"); err != nil {
		t.Fatal(err)
	}
	if got := policy.Breaker.State(); got != resilience.StateClosed {
		t.Fatalf("after 2 successes: breaker %v, want closed", got)
	}
	if n := sim.Counters().Requests; n != 2 {
		t.Errorf("provider saw %d requests in half-open, want 2", n)
	}
	// Declines are answers, not failures: they never open the breaker.
	for i := 0; i < 5; i++ {
		if _, err := p.Charge(ctx, "big", 5_000_000, "RUB"); !apperr.Is(err, apperr.Rejected) {
			t.Fatalf("decline: %v", err)
		}
	}
	if got := policy.Breaker.State(); got != resilience.StateClosed {
		t.Fatalf("after declines: breaker %v, want closed", got)
	}
}

func TestFailedProbeReopens(t *testing.T) {
	ctx := context.Background()
	clk := fakeclock.New(time.Unix(0, 0))
	sim := newSim(t, paymentsim.Config{FailureRate: 1})
	p, policy := guard(t, serve(t, sim.Handler()), clk, policyOpts{threshold: 1, toClose: 1, attempts: 1, concurrent: 8})
	_, _ = p.Charge(ctx, "k", 10, "RUB")
	clk.Advance(31 * time.Second)
	if _, err := p.Charge(ctx, "k", 10, "RUB"); errors.Is(err, resilience.ErrOpen) || err == nil {
		t.Fatalf("probe: got %v, want the provider's failure", err)
	}
	if got := policy.Breaker.State(); got != resilience.StateOpen {
		t.Fatalf("after a failed probe: breaker %v, want open", got)
	}
}

func TestBulkheadRejectsWhenFull(t *testing.T) {
	ctx := context.Background()
	g := newGate()
	sim := newSim(t, paymentsim.Config{Latency: time.Millisecond, Sleep: g.Sleep})
	p, policy := guard(t, serve(t, sim.Handler()), fakeclock.New(time.Unix(0, 0)), policyOpts{threshold: 5, toClose: 1, attempts: 1, concurrent: 2})
	done := make(chan error, 2)
	for _, k := range []string{"a", "b"} {
		go func(k string) { _, err := p.Charge(ctx, k, 10, "RUB"); done <- err }(k)
	}
	<-g.entered
	<-g.entered
	if _, err := p.Charge(ctx, "c", 10, "RUB"); !errors.Is(err, resilience.ErrBulkheadFull) || !apperr.Is(err, apperr.Transient) {
		t.Fatalf("third concurrent call: got %v, want Transient ErrBulkheadFull", err)
	}
	close(g.release)
	for i := 0; i < 2; i++ {
		if err := <-done; err != nil {
			t.Fatalf("admitted call: %v", err)
		}
	}
	if _, err := p.Charge(ctx, "c", 10, "RUB"); err != nil {
		t.Fatalf("after slots freed: %v", err)
	}
	if got := policy.Breaker.State(); got != resilience.StateClosed {
		t.Errorf("bulkhead rejections must not trip the breaker: %v", got)
	}
}

// TestRetryInsideBreaker: the breaker sees one outcome per call, however
// many attempts the retry loop made, and waits are full-jitter.
func TestRetryInsideBreaker(t *testing.T) {
	ctx := context.Background()
	sim := newSim(t, paymentsim.Config{})
	var n atomic.Int32
	flakyHandler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) <= 2 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		sim.Handler().ServeHTTP(w, r)
	})
	var sleeps []time.Duration
	var events []resilience.AttemptEvent
	p, policy := guard(t, serve(t, flakyHandler), fakeclock.New(time.Unix(0, 0)),
		policyOpts{threshold: 1, toClose: 1, attempts: 3, concurrent: 4, sleeps: &sleeps, events: &events})

	if _, err := p.Charge(ctx, "k", 10, "RUB"); err != nil {
		t.Fatalf("charge with 2 transient failures and 3 attempts: %v", err)
	}
	if got := policy.Breaker.State(); got != resilience.StateClosed {
		t.Fatalf("breaker %v after a call that succeeded on retry (threshold 1), want closed", got)
	}
	if len(sleeps) != 2 {
		t.Fatalf("got %d waits, want 2", len(sleeps))
	}
	for i, d := range sleeps {
		if ceil := (resilience.Backoff{Base: 100 * time.Millisecond, Cap: time.Second}).Ceiling(i); d < 0 || d >= ceil {
			t.Errorf("wait %d = %v, want in [0, %v)", i, d, ceil)
		}
	}
	if len(events) != 3 || events[2].Result != resilience.ResultSuccessAfterRetry {
		t.Errorf("attempt events: %+v", events)
	}

	// Exhausted retries count as ONE breaker failure, which opens it here.
	n.Store(-100)
	if _, err := p.Charge(ctx, "k2", 10, "RUB"); !apperr.Is(err, apperr.Transient) {
		t.Fatalf("exhausted: got %v, want Transient", err)
	}
	if got := n.Load(); got != -97 {
		t.Errorf("provider saw %d attempts, want 3", got+100)
	}
	if got := policy.Breaker.State(); got != resilience.StateOpen {
		t.Errorf("breaker %v after one exhausted call (threshold 1), want open", got)
	}
}
