package orchestrator_test

import (
	"encoding/hex"
	"strings"
	"testing"
	"time"

	"ordersaga/shared/app/orchestrator"
	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/saga"
	"ordersaga/shared/kit/config"
	"ordersaga/shared/kit/resilience"
)

// TestDefaultsAreConfigDefaults: an advancer or recovery built without a
// setting behaves as one built from config.Default(), so the two can never
// disagree again (they did: saga lease 1 min vs 30 s, backoff 1 s vs 500 ms).
func TestDefaultsAreConfigDefaults(t *testing.T) {
	e := newEnv(t, envOpts{})
	def := config.Default()
	adv, err := orchestrator.NewAdvancer(orchestrator.AdvancerConfig{Store: e.store, Inventory: e.stock, Payments: e.pay})
	if err != nil {
		t.Fatal(err)
	}
	c := adv.Config()
	for _, d := range []struct {
		name      string
		got, want any
	}{
		{"SAGA_LEASE", c.Lease, def.Saga.Lease},
		{"SAGA_BACKOFF_BASE", c.Backoff.Base, def.Saga.BackoffBase},
		{"SAGA_BACKOFF_CAP", c.Backoff.Cap, def.Saga.BackoffCap},
		{"INBOX_TTL", c.InboxTTL, def.Saga.InboxTTL},
		{"OUTBOX_SHARDS", c.Shards, def.Relay.Shards},
		{"REDRIVE_LOOP_LIMIT", c.LoopLimit, def.Redrive.LoopLimit},
		{"dispatch lease without a dispatcher", c.DispatchLease, time.Duration(0)},
	} {
		if d.got != d.want {
			t.Errorf("advancer %s default %v, config.Default() %v", d.name, d.got, d.want)
		}
	}
	rec, err := orchestrator.NewRecovery(orchestrator.RecoveryConfig{Store: e.store})
	if err != nil {
		t.Fatal(err)
	}
	r := rec.Config()
	for _, d := range []struct {
		name      string
		got, want any
	}{
		{"RECOVERY_STUCK_AFTER", r.StuckAfter, def.Recovery.StuckAfter},
		{"RECOVERY_MAX_RESENDS", r.MaxResends, def.Recovery.MaxResends},
		{"RECOVERY_MAX_WAIT", r.MaxWait, def.Recovery.MaxWait},
		{"RECOVERY_BATCH_SIZE", r.BatchSize, def.Recovery.BatchSize},
		{"reconcile batch", r.ReconcileBatch, def.Recovery.BatchSize},
		{"OUTBOX_SHARDS", r.Shards, def.Relay.Shards},
		{"REDRIVE_LOOP_LIMIT", r.LoopLimit, def.Redrive.LoopLimit},
	} {
		if d.got != d.want {
			t.Errorf("recovery %s default %v, config.Default() %v", d.name, d.got, d.want)
		}
	}
	// The one NewID default: 128 random bits, never a counter.
	for _, newID := range []func() string{c.NewID, r.NewID} {
		a, b := newID(), newID()
		if raw, err := hex.DecodeString(a); err != nil || len(raw) != 16 || a == b {
			t.Errorf("default ids %q, %q: want distinct 128-bit hex", a, b)
		}
	}
	with := orchestrator.AdvancerConfig{Store: e.store, Inventory: e.stock, Payments: e.pay, Dispatcher: e.disp}
	if a, err := orchestrator.NewAdvancer(with); err != nil || a.Config().DispatchLease != orchestrator.DefaultDispatchLease {
		t.Errorf("dispatch lease with a dispatcher: %v %v", a, err)
	}
}

// TestConstructorsRefuseBadConfig: a configuration that cannot work fails
// construction with Invalid, not the first message, and the error names
// every bad field of the Config.
func TestConstructorsRefuseBadConfig(t *testing.T) {
	e := newEnv(t, envOpts{})
	broken := append(orchestrator.Steps{}, orchestrator.CreateOrderSaga...)
	broken[1].Do = orchestrator.Action{}
	withPolicy := func(change func(*saga.RetryPolicy)) orchestrator.Steps {
		s := append(orchestrator.Steps{}, orchestrator.CreateOrderSaga...)
		change(&s[2].RetryPolicy)
		return s
	}
	step := orchestrator.CreateOrderSaga[2].Name
	for _, tc := range []struct {
		name string
		cfg  orchestrator.AdvancerConfig
		want []string // each must appear in the error
	}{
		{"step without attempts", orchestrator.AdvancerConfig{Store: e.store, Inventory: e.stock, Payments: e.pay,
			Steps: withPolicy(func(p *saga.RetryPolicy) { p.MaxAttempts = 0 })}, []string{step, "attempt"}},
		{"compensation without attempts", orchestrator.AdvancerConfig{Store: e.store, Inventory: e.stock, Payments: e.pay,
			Steps: withPolicy(func(p *saga.RetryPolicy) { p.MaxCompensationAttempts = 0 })}, []string{step, "attempt"}},
		{"negative step backoff", orchestrator.AdvancerConfig{Store: e.store, Inventory: e.stock, Payments: e.pay,
			Steps: withPolicy(func(p *saga.RetryPolicy) { p.BackoffBase = -time.Second })}, []string{step, "negative"}},
		{"negative step outage bound", orchestrator.AdvancerConfig{Store: e.store, Inventory: e.stock, Payments: e.pay,
			Steps: withPolicy(func(p *saga.RetryPolicy) { p.OutageBound = -time.Minute })}, []string{step, "negative"}},
		{"step cap below its base", orchestrator.AdvancerConfig{Store: e.store, Inventory: e.stock, Payments: e.pay,
			Steps: withPolicy(func(p *saga.RetryPolicy) { p.BackoffBase, p.BackoffCap = time.Minute, time.Second })}, []string{step, "below its base"}},
		{"no store", orchestrator.AdvancerConfig{Inventory: e.stock, Payments: e.pay}, []string{"Store is required"}},
		{"no inventory", orchestrator.AdvancerConfig{Store: e.store, Payments: e.pay}, []string{"Inventory is required"}},
		{"no payments", orchestrator.AdvancerConfig{Store: e.store, Inventory: e.stock}, []string{"Payments is required"}},
		{"no ports", orchestrator.AdvancerConfig{}, []string{"Store is required", "Inventory is required", "Payments is required"}},
		{"cap below base", orchestrator.AdvancerConfig{Store: e.store, Inventory: e.stock, Payments: e.pay,
			Backoff: resilience.Backoff{Base: time.Minute, Cap: time.Second}}, []string{"Backoff.Cap must be at least Backoff.Base (1m0s) (got 1s)"}},
		{"negative lease", orchestrator.AdvancerConfig{Store: e.store, Inventory: e.stock, Payments: e.pay, Lease: -time.Second},
			[]string{"Lease must not be negative (got -1s)"}},
		{"lease not above the longest step timeout", orchestrator.AdvancerConfig{Store: e.store, Inventory: e.stock, Payments: e.pay,
			Lease: 10 * time.Second}, []string{"SAGA_LEASE"}},
		{"negative chain steps", orchestrator.AdvancerConfig{Store: e.store, Inventory: e.stock, Payments: e.pay, MaxChainSteps: -1},
			[]string{"MaxChainSteps must not be negative (got -1)"}},
		{"negative outage bound", orchestrator.AdvancerConfig{Store: e.store, Inventory: e.stock, Payments: e.pay, OutageBound: -time.Minute},
			[]string{"OutageBound must not be negative (got -1m0s)"}},
		{"negative dispatch timeout", orchestrator.AdvancerConfig{Store: e.store, Inventory: e.stock, Payments: e.pay,
			DispatchTimeout: -time.Second}, []string{"DispatchTimeout must not be negative (got -1s)"}},
		{"negative dispatch lease without a dispatcher", orchestrator.AdvancerConfig{Store: e.store, Inventory: e.stock, Payments: e.pay,
			DispatchLease: -time.Second}, []string{"DispatchLease must not be negative (got -1s)"}},
		{"every negative setting at once", orchestrator.AdvancerConfig{Store: e.store, Inventory: e.stock, Payments: e.pay,
			Backoff: resilience.Backoff{Base: -1, Cap: -2}, OutageBound: -3, Lease: -4, InboxTTL: -5, DispatchLease: -6,
			DispatchTimeout: -7, ChainBudget: -8, Shards: -1, LoopLimit: -2, MaxChainSteps: -3},
			[]string{"orchestrator.NewAdvancer", "Backoff.Base must not be negative (got -1ns)", "Backoff.Cap must not be negative (got -2ns)",
				"OutageBound must not be negative (got -3ns)", "Lease must not be negative (got -4ns)",
				"InboxTTL must not be negative (got -5ns)", "DispatchLease must not be negative (got -6ns)",
				"DispatchTimeout must not be negative (got -7ns)", "ChainBudget must not be negative (got -8ns)",
				"Shards must not be negative (got -1)", "LoopLimit must not be negative (got -2)", "MaxChainSteps must not be negative (got -3)"}},
		{"step without do", orchestrator.AdvancerConfig{Store: e.store, Inventory: e.stock, Payments: e.pay, Steps: broken},
			[]string{broken[1].Name, "action"}},
	} {
		_, err := orchestrator.NewAdvancer(tc.cfg)
		if !apperr.Is(err, apperr.Invalid) {
			t.Errorf("%s: %v, want Invalid", tc.name, err)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: err = %q, want it to contain %q", tc.name, err, w)
			}
		}
	}
	for _, tc := range []struct {
		name string
		cfg  orchestrator.RecoveryConfig
		want []string
	}{
		{"no store", orchestrator.RecoveryConfig{}, []string{"Store is required"}},
		{"negative stuck after", orchestrator.RecoveryConfig{Store: e.store, StuckAfter: -time.Second},
			[]string{"StuckAfter must not be negative (got -1s)"}},
		{"negative max wait", orchestrator.RecoveryConfig{Store: e.store, MaxWait: -time.Hour},
			[]string{"MaxWait must not be negative (got -1h0m0s)"}},
		{"negative batch", orchestrator.RecoveryConfig{Store: e.store, BatchSize: -1}, []string{"BatchSize must not be negative (got -1)"}},
		{"negative resends", orchestrator.RecoveryConfig{Store: e.store, MaxResends: -1}, []string{"MaxResends must not be negative (got -1)"}},
		{"negative dispatch lease without a dispatcher", orchestrator.RecoveryConfig{Store: e.store, DispatchLease: -time.Second},
			[]string{"DispatchLease must not be negative (got -1s)"}},
		{"every bad field at once", orchestrator.RecoveryConfig{StuckAfter: -1, MaxWait: -2, DispatchLease: -3, DispatchTimeout: -4,
			MaxResends: -1, LoopLimit: -2, BatchSize: -3, ReconcileBatch: -4, Shards: -5},
			[]string{"orchestrator.NewRecovery", "Store is required", "StuckAfter must not be negative (got -1ns)",
				"MaxWait must not be negative (got -2ns)", "DispatchLease must not be negative (got -3ns)",
				"DispatchTimeout must not be negative (got -4ns)", "MaxResends must not be negative (got -1)",
				"LoopLimit must not be negative (got -2)", "BatchSize must not be negative (got -3)",
				"ReconcileBatch must not be negative (got -4)", "Shards must not be negative (got -5)"}},
	} {
		_, err := orchestrator.NewRecovery(tc.cfg)
		if !apperr.Is(err, apperr.Invalid) {
			t.Errorf("recovery, %s: %v, want Invalid", tc.name, err)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("recovery, %s: err = %q, want it to contain %q", tc.name, err, w)
			}
		}
	}
}
