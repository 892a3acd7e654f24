package app

import (
	"net/http"
	"time"

	"ordersaga/shared/config"
	"ordersaga/shared/orchestrator"
	"ordersaga/shared/outbox"
	"ordersaga/shared/payments"
	"ordersaga/shared/paymentsim"
	"ordersaga/shared/redrive"
	"ordersaga/shared/resilience"
	"ordersaga/shared/stock"
)

// wireSaga builds the participants, the advancer and the recovery job.
func (a *App) wireSaga(cfg config.Config, owner string) {
	a.Stock = &stock.Service{Store: a.Store, Now: a.Now, NewID: a.NewID}
	var provider payments.Provider
	if cfg.Payment.ProviderURL != "" {
		provider = &payments.HTTPProvider{BaseURL: cfg.Payment.ProviderURL, Client: &http.Client{}, Now: a.Now}
	} else {
		// No external provider configured: the built-in simulated provider
		// (local runs and demos), behind the same resilience policy.
		a.PaymentSim = paymentsim.New(paymentsim.Config{
			DeclineAbove: cfg.Payment.DeclineAbove, FailureRate: cfg.Payment.FailureRate, Latency: cfg.Payment.Latency,
		})
		provider = a.PaymentSim
	}
	a.PaymentPolicy = payments.NewPolicy(payments.PolicyConfig{
		Name: "payment", MaxConcurrent: cfg.Payment.MaxConcurrent, AttemptTimeout: cfg.Payment.Timeout,
		Breaker: resilience.BreakerConfig{FailureThreshold: cfg.Payment.BreakerThreshold, OpenTimeout: cfg.Payment.BreakerOpenFor,
			OnStateChange: a.hooks.breakerChanged, OnInit: a.hooks.breakerInit, Log: a.Log},
		OnAttempt: a.hooks.retryAttempt, OnReject: a.hooks.bulkheadRejected,
	})
	a.Payments = &payments.Service{Store: a.Store, Provider: payments.NewGuardedProvider(provider, a.PaymentPolicy), Now: a.Now}
	a.Advancer = &orchestrator.Advancer{
		Store: a.Store, Inventory: a.Stock, Payments: a.Payments, Dispatcher: a.Relay,
		Now: a.Now, NewID: a.NewID,
		Backoff: resilience.Backoff{Base: cfg.Saga.BackoffBase, Cap: cfg.Saga.BackoffCap},
		Lease:   cfg.Saga.Lease, InboxTTL: cfg.Saga.InboxTTL, Shards: cfg.Relay.Shards, Owner: owner, Log: a.Log,
		Hooks: a.hooks.sagaHooks(), LoopLimit: cfg.Redrive.LoopLimit,
	}
	a.Relay.LoopLimit = cfg.Redrive.LoopLimit
	wait := time.Duration(0)
	if cfg.Queue == config.QueueYMQ {
		wait = time.Second // YMQ short polls may miss messages
	}
	a.Redrive = &redrive.Service{
		Store: a.Store, Queue: a.Queue,
		QueueURLs: map[string]string{
			outbox.DestSagaCommands: cfg.QueueURLs.SagaCommands, "saga-commands-dlq": cfg.QueueURLs.SagaCommandsDLQ,
			outbox.DestOrderEvents: cfg.QueueURLs.OrderEvents,
		},
		DLQs:   map[string]string{"saga-commands-dlq": outbox.DestSagaCommands},
		Shards: cfg.Relay.Shards, LoopLimit: cfg.Redrive.LoopLimit, MaxPerCall: cfg.Redrive.MaxPerCall,
		MaxRate: float64(cfg.Redrive.MaxRate), ReceiveWait: wait, Now: a.Now, NewID: a.NewID, Log: a.Log,
		OnIngested: a.hooks.ingested,
	}
	a.Recovery = &orchestrator.Recovery{
		Store: a.Store, Now: a.Now, NewID: a.NewID, StuckAfter: cfg.Recovery.StuckAfter, BatchSize: cfg.Recovery.BatchSize,
		MaxRedrives: cfg.Recovery.MaxRedrives, LoopLimit: cfg.Redrive.LoopLimit,
		Dispatcher: a.Relay, Shards: cfg.Relay.Shards, Owner: owner, Log: a.Log,
	}
}
