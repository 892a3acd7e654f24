package app

import (
	"net/http"
	"time"

	"ordersaga/shared/adapters/paymentsim"
	"ordersaga/shared/app/orchestrator"
	"ordersaga/shared/app/payments"
	"ordersaga/shared/app/redrive"
	"ordersaga/shared/app/relay"
	"ordersaga/shared/app/stock"
	"ordersaga/shared/domain/outbox"
	"ordersaga/shared/kit/config"
	"ordersaga/shared/kit/resilience"
)

// wireRelay builds the outbox relay (also the dispatcher of every use case
// that writes outbox rows).
func (a *App) wireRelay(cfg config.Config, owner string, opt Options) error {
	rc := relay.Config{
		Store: a.store, Queue: a.queue, Owner: owner,
		URLs: map[string]string{
			outbox.DestSagaCommands: cfg.QueueURLs.SagaCommands,
			outbox.DestOrderEvents:  cfg.QueueURLs.OrderEvents,
		},
		Shards: cfg.Relay.Shards, BatchSize: cfg.Relay.BatchSize, SendConcurrency: cfg.Relay.SendConcurrency, MaxAttempts: cfg.Relay.MaxAttempts, Lease: cfg.Relay.Lease,
		Backoff:   resilience.Backoff{Base: cfg.Relay.BackoffBase, Cap: cfg.Relay.BackoffCap},
		LoopLimit: cfg.Redrive.LoopLimit, Now: a.Now, NewID: a.NewID, Log: a.Log, Hooks: a.hooks.relayHooks(),
	}
	if opt.Relay != nil {
		opt.Relay(&rc)
	}
	var err error
	a.Commands.Relay, err = relay.New(rc)
	return err
}

// wireSaga builds the participants, the advancer and the recovery job.
func (a *App) wireSaga(cfg config.Config, owner string, opt Options) error {
	c := &a.Commands
	var err error
	if c.Stock, err = stock.New(stock.Config{Store: a.store, Now: a.Now, NewID: a.NewID}); err != nil {
		return err
	}
	if err := a.wirePayments(cfg, opt); err != nil {
		return err
	}
	ac := orchestrator.AdvancerConfig{
		Store: a.store, Inventory: c.Stock, Payments: c.Payments, Dispatcher: c.Relay,
		Now: a.Now, NewID: a.NewID,
		Backoff:     resilience.Backoff{Base: cfg.Saga.BackoffBase, Cap: cfg.Saga.BackoffCap},
		OutageBound: cfg.Saga.OutageBound,
		Lease:       cfg.Saga.Lease, InboxTTL: cfg.Saga.InboxTTL, Shards: cfg.Relay.Shards, Owner: owner, Log: a.Log,
		Hooks: a.hooks.sagaHooks(), LoopLimit: cfg.Redrive.LoopLimit, Steps: orchestrator.CreateOrderSaga,
	}
	if opt.Advancer != nil {
		opt.Advancer(&ac)
	}
	if c.Advancer, err = orchestrator.NewAdvancer(ac); err != nil {
		return err
	}
	wait := time.Duration(0)
	if cfg.Queue == config.QueueYMQ {
		wait = time.Second // YMQ short polls may miss messages
	}
	c.Redrive, err = redrive.New(redrive.Config{
		Store: a.store, Queue: a.queue,
		QueueURLs: map[string]string{
			outbox.DestSagaCommands: cfg.QueueURLs.SagaCommands, "saga-commands-dlq": cfg.QueueURLs.SagaCommandsDLQ,
			outbox.DestOrderEvents: cfg.QueueURLs.OrderEvents,
		},
		DLQs:   map[string]string{"saga-commands-dlq": outbox.DestSagaCommands},
		Shards: cfg.Relay.Shards, LoopLimit: cfg.Redrive.LoopLimit, MaxPerCall: cfg.Redrive.MaxPerCall,
		MaxRate: float64(cfg.Redrive.MaxRate), ReceiveWait: wait, Now: a.Now, NewID: a.NewID, Log: a.Log,
		OnIngested: a.hooks.ingested, Steps: orchestrator.CreateOrderSaga.Table(),
	})
	if err != nil {
		return err
	}
	rc := orchestrator.RecoveryConfig{
		Store: a.store, Now: a.Now, NewID: a.NewID, StuckAfter: cfg.Recovery.StuckAfter, BatchSize: cfg.Recovery.BatchSize,
		MaxResends: cfg.Recovery.MaxResends, MaxWait: cfg.Recovery.MaxWait, LoopLimit: cfg.Redrive.LoopLimit,
		Dispatcher: c.Relay, Shards: cfg.Relay.Shards, Owner: owner, Log: a.Log, Steps: orchestrator.CreateOrderSaga,
	}
	if opt.Recovery != nil {
		opt.Recovery(&rc)
	}
	c.Recovery, err = orchestrator.NewRecovery(rc)
	return err
}

// wirePayments builds the payment participant: the configured provider (or
// the built-in simulated one) behind the resilience policy.
func (a *App) wirePayments(cfg config.Config, opt Options) error {
	c := &a.Commands
	var err error
	var provider payments.Provider
	if cfg.Payment.ProviderURL != "" {
		if provider, err = payments.NewHTTPProvider(payments.HTTPConfig{BaseURL: cfg.Payment.ProviderURL, Client: &http.Client{}, Now: a.Now}); err != nil {
			return err
		}
	} else {
		// No external provider configured: the built-in simulated provider
		// (local runs and demos), behind the same resilience policy.
		if a.sim, err = paymentsim.New(paymentsim.Config{
			DeclineAbove: cfg.Payment.DeclineAbove, FailureRate: cfg.Payment.FailureRate, Latency: cfg.Payment.Latency,
		}); err != nil {
			return err
		}
		provider = a.sim
	}
	guarded, err := payments.NewGuarded(payments.GuardedConfig{Provider: provider, Policy: payments.PolicyConfig{
		Name: "payment", MaxConcurrent: cfg.Payment.MaxConcurrent, AttemptTimeout: cfg.Payment.Timeout,
		Breaker: resilience.BreakerConfig{FailureThreshold: cfg.Payment.BreakerThreshold, OpenTimeout: cfg.Payment.BreakerOpenFor,
			OnStateChange: a.hooks.breakerChanged, OnInit: a.hooks.breakerInit, Log: a.Log},
		OnAttempt: a.hooks.retryAttempt, OnReject: a.hooks.bulkheadRejected,
	}})
	if err != nil {
		return err
	}
	pc := payments.Config{Store: a.store, Provider: guarded, Now: a.Now}
	if opt.Payments != nil {
		opt.Payments(&pc)
	}
	c.Payments, err = payments.New(pc)
	return err
}

// PaymentSimulator returns the built-in payment provider when no external
// one is configured (PAYMENT_PROVIDER_URL empty), else nil. The local runner
// uses it to change the simulated failure rate at run time (/_faults).
func (a *App) PaymentSimulator() *paymentsim.Sim { return a.sim }
