package orchestrator_test

import (
	"context"
	"testing"
	"time"

	"ordersaga/shared/app/orchestrator"
	"ordersaga/shared/app/payments"
	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/order"
	"ordersaga/shared/domain/saga"
	"ordersaga/shared/kit/config"
	"ordersaga/shared/kit/resilience"
)

// outageProvider fails every call while down() holds, like a provider that
// is briefly unavailable, and otherwise passes through.
type outageProvider struct {
	payments.Provider
	down func() bool
}

func (p outageProvider) Charge(ctx context.Context, key string, amount int64, cur string) (string, error) {
	if p.down() {
		return "", apperr.New(apperr.Transient, "provider unavailable")
	}
	return p.Provider.Charge(ctx, key, amount, cur)
}

// TestShortOutageNeverCancelsAnOrder: with the default settings (payment
// breaker threshold 5, open 10 s; saga backoff 500 ms doubling, 5 attempts)
// a one-second provider outage opens the breaker, and the provider is
// healthy again long before the breaker lets calls through. The orders that
// met the outage and one placed while the breaker is open all wait for the
// breaker and are CONFIRMED: a refusal by the breaker spends no attempt.
func TestShortOutageNeverCancelsAnOrder(t *testing.T) {
	e := newEnv(t, envOpts{stock: map[string]int64{"sku-1": 100}})
	def := config.Default()
	outageEnd := e.clock.Now().Add(time.Second)
	opened := 0
	guarded := must(payments.NewGuarded(payments.GuardedConfig{
		Provider: outageProvider{Provider: e.sim, down: func() bool { return e.clock.Now().Before(outageEnd) }},
		Policy: payments.PolicyConfig{
			MaxConcurrent: def.Payment.MaxConcurrent, AttemptTimeout: def.Payment.Timeout,
			Breaker: resilience.BreakerConfig{FailureThreshold: def.Payment.BreakerThreshold, OpenTimeout: def.Payment.BreakerOpenFor,
				Now: e.clock.Now, OnStateChange: func(_ string, _, to resilience.State) {
					if to == resilience.StateOpen {
						opened++
					}
				}},
			Sleep: func(context.Context, time.Duration) error { return nil },
		},
	}))(t)
	policy := guarded.Policy
	e.payVia.Provider = guarded
	e.advWith(func(c *orchestrator.AdvancerConfig) {
		c.Backoff = resilience.Backoff{Base: def.Saga.BackoffBase, Cap: def.Saga.BackoffCap, Rand: resilience.NewRand(7)}
	})

	var ids []string
	for i := 0; i < def.Payment.BreakerThreshold; i++ {
		id, _ := e.place(item("sku-1", 1, 100))
		ids = append(ids, id)
	}
	// Run every saga up to its first charge, which fails: the breaker opens.
	for n := len(e.queue) * 3; n > 0 && len(e.queue) > 0; n-- {
		d := e.queue[0]
		e.queue = e.queue[1:]
		if _, err := e.adv.Handle(context.Background(), d.msg); err != nil {
			t.Fatal(err)
		}
		e.pump()
	}
	if opened != 1 || policy.Breaker.State() != resilience.StateOpen {
		t.Fatalf("setup: the breaker should be open (opened %d times, %s)", opened, policy.Breaker.State())
	}
	late, _ := e.place(item("sku-1", 1, 100)) // placed while the breaker is open
	ids = append(ids, late)
	e.settle(chaos{})
	for _, id := range ids {
		if o := e.order(id); o.Status != order.StatusConfirmed {
			t.Errorf("order %s is %s (%s), want CONFIRMED: the provider was down for one second", id, o.Status, o.StatusReason)
		}
	}
	if w := e.steps[saga.StepProcessPayment+"/forward/waiting"]; w <= len(ids) {
		t.Errorf("the sagas waited %d times for the breaker: the test did not exercise it", w)
	}
	e.checkInvariants()
}
