package app

import (
	"ordersaga/shared/app/breakerboard"
	"ordersaga/shared/app/jobs/dlqoperator"
	"ordersaga/shared/app/jobs/maintenance"
	"ordersaga/shared/app/jobs/outboxdrain"
	"ordersaga/shared/app/jobs/sagabatch"
	"ordersaga/shared/app/orchestrator"
	"ordersaga/shared/app/orders"
	"ordersaga/shared/app/payments"
	"ordersaga/shared/app/queuesetup"
	"ordersaga/shared/app/redrive"
	"ordersaga/shared/app/relay"
	"ordersaga/shared/app/selfcheck"
	"ordersaga/shared/app/stock"
	"ordersaga/shared/kit/config"
)

// Commands are the use cases a caller changes state through. A service
// here may also answer reads of its own data (orders.Service.Get,
// stock.Service.Get, redrive's list and show); Queries holds the use cases
// that only read. Each function body calls one job: the HTTP API calls
// Orders, Stock and Redrive through App.HTTP. New builds them once, in
// dependency order (the jobs and the order service hold the use cases
// built before them), and nothing replaces them after: a caller that needs
// a use case built otherwise adjusts its configuration through Options.
type Commands struct {
	Orders   *orders.Service
	Stock    *stock.Service
	Payments *payments.Service
	Relay    *relay.Relay
	Advancer *orchestrator.Advancer
	Recovery *orchestrator.Recovery
	Redrive  *redrive.Service
	// Queues creates the deployment's queues (App.EnsureQueues).
	Queues *queuesetup.Setup

	// AdvanceSagas advances a saga-commands trigger batch (sagaadvancer).
	AdvanceSagas *sagabatch.Job
	// RelayOutbox drains the outbox within a budget (outboxrelay).
	RelayOutbox *outboxdrain.Job
	// Recover is the recovery timer's maintenance run (sagarecovery).
	Recover *maintenance.Job
	// OperateDeadLetters runs one operator command (dlqredrive).
	OperateDeadLetters *dlqoperator.Job
}

// Queries are the use cases that only read.
type Queries struct {
	// SelfCheck answers the self-check event of every function.
	SelfCheck *selfcheck.Checker
	// Breakers lists the circuit breakers this instance guards.
	Breakers *breakerboard.Board
}

// wireJobs builds the jobs and the self-check on the use cases wired
// before them.
func (a *App) wireJobs(cfg config.Config) error {
	c := &a.Commands
	var err error
	if c.Queues, err = queuesetup.New(queuesetup.Config{Queue: a.queue}); err != nil {
		return err
	}
	if c.AdvanceSagas, err = sagabatch.New(sagabatch.Config{
		Advancer: c.Advancer, Concurrency: cfg.Saga.BatchConcurrency, OnReceived: a.hooks.received,
	}); err != nil {
		return err
	}
	if c.RelayOutbox, err = outboxdrain.New(outboxdrain.Config{Relay: c.Relay, OnBacklog: a.hooks.backlog}); err != nil {
		return err
	}
	if c.Recover, err = maintenance.New(maintenance.Config{
		Recovery: c.Recovery, DeadLetters: c.Redrive, Store: a.store,
		Queue: a.queue, SagaDLQURL: cfg.QueueURLs.SagaCommandsDLQ, Retention: cfg.Relay.Retention,
		Now: a.Now, Log: a.Log, OnRecovery: a.hooks.recovery, OnDeadLetterSize: a.hooks.deadLetterSize,
	}); err != nil {
		return err
	}
	if c.OperateDeadLetters, err = dlqoperator.New(dlqoperator.Config{
		DeadLetters: c.Redrive, Log: a.Log, OnAction: a.hooks.redriveAction,
	}); err != nil {
		return err
	}
	a.Queries.SelfCheck, err = selfcheck.New(selfcheck.Config{
		Config: cfg, Store: a.store, Queue: a.queue, Database: a.probe, Now: a.Now,
	})
	return err
}
