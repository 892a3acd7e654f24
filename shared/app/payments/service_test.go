package payments_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"ordersaga/shared/adapters/paymentsim"
	"ordersaga/shared/adapters/sqlitestore"
	"ordersaga/shared/app/payments"
	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/payment"
	"ordersaga/shared/domain/store"
	"ordersaga/shared/kit/config"
	"ordersaga/shared/kit/resilience"
)

var t0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

// ledger is a payment service with the store under it.
type ledger struct {
	*payments.Service
	store store.Store
}

func newLedger(t *testing.T, p payments.Provider) ledger {
	t.Helper()
	st, err := sqlitestore.Open(context.Background(), filepath.Join(t.TempDir(), "pay.db"), sqlitestore.Config{})
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { st.Close() })
	s, err := payments.New(payments.Config{Store: st, Provider: p, Now: func() time.Time { return t0 }})
	if err != nil {
		t.Fatal(err)
	}
	return ledger{s, st}
}

func entry(t *testing.T, s ledger, id string) (payment.Entry, bool) {
	t.Helper()
	var e payment.Entry
	err := s.store.View(context.Background(), func(ctx context.Context, tx store.Tx) error {
		var err error
		e, err = tx.GetPayment(ctx, id)
		return err
	})
	if apperr.Is(err, apperr.NotFound) {
		return e, false
	}
	if err != nil {
		t.Fatalf("get payment %s: %v", id, err)
	}
	return e, true
}

func wantTotals(t *testing.T, s ledger, charged, refunded int64) {
	t.Helper()
	c, r, err := s.Totals(context.Background())
	if err != nil || c != charged || r != refunded {
		t.Errorf("ledger totals: got %d/%d (%v), want %d/%d", c, r, err, charged, refunded)
	}
}

// flaky fails the next n provider calls with a Transient error before
// passing them to the simulator.
type flaky struct {
	*paymentsim.Sim
	fail int
}

func (f *flaky) Charge(ctx context.Context, key string, amount int64, cur string) (string, error) {
	if f.fail > 0 {
		f.fail--
		return "", apperr.New(apperr.Transient, "provider down")
	}
	return f.Sim.Charge(ctx, key, amount, cur)
}

var _ payments.Provider = (*flaky)(nil)

func TestLedgerCharge(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name        string
		sim         paymentsim.Config
		fail        int
		amount      int64
		calls       int
		wantKind    apperr.Kind // of the last call; 0 = success
		wantErr     bool
		wantStatus  payment.Status // "" = no entry
		wantCharges int            // provider-side charges
		wantReqs    int            // provider requests in total
	}{
		{name: "charged once however often asked", amount: 500, calls: 3,
			wantStatus: payment.Succeeded, wantCharges: 1, wantReqs: 1},
		{name: "decline is recorded and repeated without the provider", amount: 2_000_000, calls: 3,
			wantErr: true, wantKind: apperr.Rejected, wantStatus: payment.Declined, wantReqs: 1},
		{name: "transient failure records nothing", amount: 500, calls: 1, fail: 1,
			wantErr: true, wantKind: apperr.Transient},
		{name: "retry after a transient failure charges once", amount: 500, calls: 2, fail: 1,
			wantStatus: payment.Succeeded, wantCharges: 1, wantReqs: 1},
		{name: "lost answer then retry: one charge", amount: 500, calls: 2, sim: paymentsim.Config{LostAnswerRate: 1},
			wantErr: true, wantKind: apperr.Transient, wantCharges: 1, wantReqs: 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sim := newSim(t, tc.sim)
			s := newLedger(t, &flaky{Sim: sim, fail: tc.fail})
			var err error
			for i := 0; i < tc.calls; i++ {
				err = s.Charge(ctx, "saga-1", "o-1", tc.amount, "RUB")
			}
			if (err != nil) != tc.wantErr || (tc.wantErr && apperr.KindOf(err) != tc.wantKind) {
				t.Fatalf("got %v, want error=%v kind=%v", err, tc.wantErr, tc.wantKind)
			}
			e, ok := entry(t, s, payment.EntryID("saga-1", payment.Charge))
			if (tc.wantStatus == "") == ok || (ok && e.Status != tc.wantStatus) {
				t.Errorf("ledger entry: got %+v (exists=%v), want status %q", e, ok, tc.wantStatus)
			}
			c := sim.Counters()
			if c.Charges != tc.wantCharges || c.Requests != tc.wantReqs {
				t.Errorf("provider: got %d charges / %d requests, want %d / %d", c.Charges, c.Requests, tc.wantCharges, tc.wantReqs)
			}
		})
	}
}

func TestLedgerRefund(t *testing.T) {
	ctx := context.Background()
	t.Run("refund of a charge happens once", func(t *testing.T) {
		sim := newSim(t, paymentsim.Config{})
		s := newLedger(t, sim)
		if err := s.Charge(ctx, "saga-1", "o-1", 700, "RUB"); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 3; i++ {
			got, err := s.Refund(ctx, "saga-1", "o-1", 700, "RUB")
			if err != nil || !got {
				t.Fatalf("refund #%d: got %v, %v; want true", i, got, err)
			}
		}
		wantTotals(t, s, 700, 700)
		if c := sim.Counters(); c.Refunds != 1 || c.RefundedMinor != 700 {
			t.Errorf("provider refunds: %+v", c)
		}
	})
	t.Run("refund of a declined charge does nothing", func(t *testing.T) {
		sim := newSim(t, paymentsim.Config{DeclineAbove: 100})
		s := newLedger(t, sim)
		if err := s.Charge(ctx, "saga-1", "o-1", 700, "RUB"); !apperr.Is(err, apperr.Rejected) {
			t.Fatalf("charge: got %v, want Rejected", err)
		}
		reqs := sim.Counters().Requests
		if got, err := s.Refund(ctx, "saga-1", "o-1", 700, "RUB"); err != nil || got {
			t.Fatalf("refund: got %v, %v; want false, nil", got, err)
		}
		if sim.Counters().Requests != reqs {
			t.Error("refund of a declined charge called the provider")
		}
		wantTotals(t, s, 0, 0)
	})
	t.Run("unknown charge outcome: provider had charged, both are recorded", func(t *testing.T) {
		sim := newSim(t, paymentsim.Config{LostAnswerRate: 1})
		s := newLedger(t, sim)
		if err := s.Charge(ctx, "saga-1", "o-1", 700, "RUB"); !apperr.Is(err, apperr.Transient) {
			t.Fatalf("charge: got %v, want Transient", err)
		}
		sim.SetFaults(0, 0, 0)
		got, err := s.Refund(ctx, "saga-1", "o-1", 700, "RUB")
		if err != nil || !got {
			t.Fatalf("refund: got %v, %v; want true", got, err)
		}
		wantTotals(t, s, 700, 700)
		c := sim.Counters()
		if c.ChargedMinor-c.RefundedMinor != 0 {
			t.Errorf("provider keeps money: %+v", c)
		}
	})
	t.Run("unknown charge outcome: nothing charged, the key is voided", func(t *testing.T) {
		sim := newSim(t, paymentsim.Config{})
		s := newLedger(t, sim)
		got, err := s.Refund(ctx, "saga-1", "o-1", 700, "RUB")
		if err != nil || got {
			t.Fatalf("refund: got %v, %v; want false, nil", got, err)
		}
		if err := s.Charge(ctx, "saga-1", "o-1", 700, "RUB"); !apperr.Is(err, apperr.Rejected) {
			t.Fatalf("late charge: got %v, want Rejected", err)
		}
		// Even a caller that bypasses the ledger cannot charge the voided key.
		if _, err := sim.Charge(ctx, payment.EntryID("saga-1", payment.Charge), 700, "RUB"); !apperr.Is(err, apperr.Rejected) {
			t.Fatalf("provider charge of a voided key: got %v, want Rejected", err)
		}
		wantTotals(t, s, 0, 0)
		if c := sim.Counters(); c.Charges != 0 || c.Voids != 1 {
			t.Errorf("provider: %+v", c)
		}
	})
	t.Run("invalid input", func(t *testing.T) {
		s := newLedger(t, newSim(t, paymentsim.Config{}))
		if err := s.Charge(ctx, "saga-1", "o", 0, "RUB"); !apperr.Is(err, apperr.Invalid) {
			t.Errorf("zero amount: got %v, want Invalid", err)
		}
		if _, err := s.Refund(ctx, "", "o", 1, "RUB"); !apperr.Is(err, apperr.Invalid) {
			t.Errorf("no saga: got %v, want Invalid", err)
		}
	})
}

// busyProvider answers every charge like a provider still processing the key (409).
type busyProvider struct{ *paymentsim.Sim }

func (busyProvider) Charge(ctx context.Context, key string, amount int64, cur string) (string, error) {
	return "", apperr.New(apperr.Conflict, "provider still processing this key")
}

// A provider still processing the key is an unknown outcome: the ledger
// service reports it as Transient (the saga asks again later), never as a
// refusal, and records nothing.
func TestChargeInProgressAtProviderIsTransientAndUnrecorded(t *testing.T) {
	s := newLedger(t, busyProvider{newSim(t, paymentsim.Config{})})
	err := s.Charge(context.Background(), "saga-409", "order-409", 100, "RUB")
	if !apperr.Is(err, apperr.Transient) {
		t.Fatalf("err = %v (kind %v), want Transient", err, apperr.KindOf(err))
	}
	if _, ok := entry(t, s, payment.EntryID("saga-409", payment.Charge)); ok {
		t.Error("a ledger entry was written for an unknown outcome")
	}
}

// The policy's zero fields take config.Default()'s values (the attempt
// timeout is PAYMENT_TIMEOUT's 2 s).
func TestPolicyDefaultsAreConfigDefaults(t *testing.T) {
	p := mustGuarded(t, payments.PolicyConfig{}).Policy
	if got, want := p.AttemptTimeout, config.Default().Payment.Timeout; got != want {
		t.Errorf("AttemptTimeout = %v, want PAYMENT_TIMEOUT's default %v", got, want)
	}
	// The breaker opens after PAYMENT_BREAKER_THRESHOLD's default failures
	// and stays open PAYMENT_BREAKER_OPEN_FOR's default (not the breaker's own 30 s).
	p = mustGuarded(t, payments.PolicyConfig{Breaker: resilience.BreakerConfig{Now: func() time.Time { return t0 }}}).Policy
	fail := func(context.Context) error { return apperr.New(apperr.Transient, "down") }
	for i := 0; i < config.Default().Payment.BreakerThreshold; i++ {
		if p.Breaker.State() != resilience.StateClosed {
			t.Fatalf("open after %d failures", i)
		}
		_ = p.Breaker.Execute(context.Background(), fail)
	}
	var open *resilience.OpenError
	if err := p.Breaker.Execute(context.Background(), fail); !errors.As(err, &open) {
		t.Fatalf("after the threshold: %v, want an open breaker", err)
	}
	if got, want := open.RetryIn, config.Default().Payment.BreakerOpenFor; got != want {
		t.Errorf("open for %v, want %v", got, want)
	}
}

// newSim returns newSim(t, cfg) or fails t.
func newSim(t *testing.T, cfg paymentsim.Config) *paymentsim.Sim {
	t.Helper()
	sim, err := paymentsim.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return sim
}

// mustGuarded returns a simulator behind NewGuarded(cfg) or fails t.
func mustGuarded(t *testing.T, cfg payments.PolicyConfig) *payments.Guarded {
	t.Helper()
	g, err := payments.NewGuarded(payments.GuardedConfig{Provider: newSim(t, paymentsim.Config{}), Policy: cfg})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// Zero settings take the defaults (above); a missing port or a negative
// setting is refused with an error naming the field.
func TestConstructorsRefuseBadConfig(t *testing.T) {
	sim := newSim(t, paymentsim.Config{})
	guarded := func(pc payments.PolicyConfig) error {
		_, err := payments.NewGuarded(payments.GuardedConfig{Provider: sim, Policy: pc})
		return err
	}
	cases := []struct {
		name string
		err  error
		want string
	}{
		{"New without a store", func() error { _, err := payments.New(payments.Config{Provider: sim}); return err }(), "Store is required"},
		{"New without a provider", func() error {
			_, err := payments.New(payments.Config{Store: newLedger(t, sim).store})
			return err
		}(), "Provider is required"},
		{"NewHTTPProvider without a base URL", func() error { _, err := payments.NewHTTPProvider(payments.HTTPConfig{}); return err }(),
			"BaseURL is required"},
		{"NewGuarded without a provider", func() error { _, err := payments.NewGuarded(payments.GuardedConfig{}); return err }(),
			"Provider is required"},
		{"negative MaxConcurrent", guarded(payments.PolicyConfig{MaxConcurrent: -1}), "MaxConcurrent must not be negative (got -1)"},
		{"negative MaxAttempts", guarded(payments.PolicyConfig{MaxAttempts: -1}), "MaxAttempts must not be negative (got -1)"},
		{"negative AttemptTimeout", guarded(payments.PolicyConfig{AttemptTimeout: -time.Second}), "AttemptTimeout must not be negative (got -1s)"},
		{"negative Backoff.Base", guarded(payments.PolicyConfig{Backoff: resilience.Backoff{Base: -1}}), "Backoff.Base must not be negative"},
		{"negative breaker threshold", guarded(payments.PolicyConfig{Breaker: resilience.BreakerConfig{FailureThreshold: -1}}),
			"Breaker.FailureThreshold must not be negative (got -1)"},
		{"negative breaker open time", guarded(payments.PolicyConfig{Breaker: resilience.BreakerConfig{OpenTimeout: -time.Second}}),
			"Breaker.OpenTimeout must not be negative (got -1s)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if !apperr.Is(tc.err, apperr.Invalid) || !strings.Contains(tc.err.Error(), tc.want) {
				t.Errorf("err = %v; want Invalid containing %q", tc.err, tc.want)
			}
		})
	}
}
