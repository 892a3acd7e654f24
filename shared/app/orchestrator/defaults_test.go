package orchestrator_test

import (
	"encoding/hex"
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
// construction with Invalid, not the first message.
func TestConstructorsRefuseBadConfig(t *testing.T) {
	e := newEnv(t, envOpts{})
	broken := append(orchestrator.Steps{}, orchestrator.CreateOrderSaga...)
	broken[1].Do = orchestrator.Action{}
	withPolicy := func(change func(*saga.RetryPolicy)) orchestrator.Steps {
		s := append(orchestrator.Steps{}, orchestrator.CreateOrderSaga...)
		change(&s[2].RetryPolicy)
		return s
	}
	for name, cfg := range map[string]orchestrator.AdvancerConfig{
		"step without attempts": {Store: e.store, Inventory: e.stock, Payments: e.pay,
			Steps: withPolicy(func(p *saga.RetryPolicy) { p.MaxAttempts = 0 })},
		"compensation without attempts": {Store: e.store, Inventory: e.stock, Payments: e.pay,
			Steps: withPolicy(func(p *saga.RetryPolicy) { p.MaxCompensationAttempts = 0 })},
		"negative step backoff": {Store: e.store, Inventory: e.stock, Payments: e.pay,
			Steps: withPolicy(func(p *saga.RetryPolicy) { p.BackoffBase = -time.Second })},
		"negative step outage bound": {Store: e.store, Inventory: e.stock, Payments: e.pay,
			Steps: withPolicy(func(p *saga.RetryPolicy) { p.OutageBound = -time.Minute })},
		"step cap below its base": {Store: e.store, Inventory: e.stock, Payments: e.pay,
			Steps: withPolicy(func(p *saga.RetryPolicy) { p.BackoffBase, p.BackoffCap = time.Minute, time.Second })},
		"no store":       {Inventory: e.stock, Payments: e.pay},
		"no inventory":   {Store: e.store, Payments: e.pay},
		"no payments":    {Store: e.store, Inventory: e.stock},
		"cap below base": {Store: e.store, Inventory: e.stock, Payments: e.pay, Backoff: resilience.Backoff{Base: time.Minute, Cap: time.Second}},
		"negative lease": {Store: e.store, Inventory: e.stock, Payments: e.pay, Lease: -time.Second},
		"lease not above the longest step timeout": {Store: e.store, Inventory: e.stock, Payments: e.pay, Lease: 10 * time.Second},
		"negative chain steps":                     {Store: e.store, Inventory: e.stock, Payments: e.pay, MaxChainSteps: -1},
		"negative outage bound":                    {Store: e.store, Inventory: e.stock, Payments: e.pay, OutageBound: -time.Minute},
		"negative dispatch timeout":                {Store: e.store, Inventory: e.stock, Payments: e.pay, DispatchTimeout: -time.Second},
		"step without do":                          {Store: e.store, Inventory: e.stock, Payments: e.pay, Steps: broken},
	} {
		if _, err := orchestrator.NewAdvancer(cfg); !apperr.Is(err, apperr.Invalid) {
			t.Errorf("%s: %v, want Invalid", name, err)
		}
	}
	for name, cfg := range map[string]orchestrator.RecoveryConfig{
		"no store":             {},
		"negative stuck after": {Store: e.store, StuckAfter: -time.Second},
		"negative max wait":    {Store: e.store, MaxWait: -time.Hour},
		"negative batch":       {Store: e.store, BatchSize: -1},
		"negative resends":     {Store: e.store, MaxResends: -1},
	} {
		if _, err := orchestrator.NewRecovery(cfg); !apperr.Is(err, apperr.Invalid) {
			t.Errorf("recovery, %s: %v, want Invalid", name, err)
		}
	}
}
