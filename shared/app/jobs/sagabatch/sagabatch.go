// Package sagabatch advances the saga commands of one queue trigger batch:
// each delivery's saga by one step, different sagas concurrently (up to a
// bound), one saga's messages one after another in the batch's order.
package sagabatch

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"ordersaga/shared/app/orchestrator"
	"ordersaga/shared/domain/saga"
	"ordersaga/shared/kit/config"
	"ordersaga/shared/kit/validate"
)

// Advancer advances one saga by one step (orchestrator.Advancer). Handle
// must be safe for concurrent use on different sagas; it returns an error
// only for what a redelivery can fix (store errors, injected crashes).
type Advancer interface {
	Handle(ctx context.Context, m orchestrator.Message) (orchestrator.Result, error)
}

var _ Advancer = (*orchestrator.Advancer)(nil)

// Config configures a Job (New). Zero fields take the defaults named;
// negative ones are refused.
type Config struct {
	Advancer Advancer // required
	// Concurrency bounds the sagas of one batch advanced at once (default
	// config.DefaultSagaBatchConcurrency, SAGA_BATCH_CONCURRENCY).
	Concurrency int
	// OnReceived, optional, counts the messages of each batch by queue
	// (queue_receives_total).
	OnReceived func(queue string, n int)
}

// Job advances batches. It is built once by New and safe for concurrent use.
type Job struct {
	cfg Config
}

// New returns a Job with cfg's zero fields set to their defaults. It fails
// (apperr.Invalid) without an advancer or with a negative concurrency.
func New(cfg Config) (*Job, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg.setDefaults()
	return &Job{cfg: cfg}, nil
}

// Validate reports what New would refuse: a missing Advancer or a negative
// Concurrency. Errors are apperr.Invalid and name the fields.
func (c Config) Validate() error {
	var p validate.Problems
	p.Require(c.Advancer != nil, "Advancer")
	validate.NotNegative(&p, "Concurrency", c.Concurrency)
	return p.Err("sagabatch.New")
}

// setDefaults gives each zero field of c its documented default.
func (c *Config) setDefaults() {
	if c.Concurrency == 0 {
		c.Concurrency = config.DefaultSagaBatchConcurrency
	}
	if c.OnReceived == nil {
		c.OnReceived = func(string, int) {}
	}
}

// Report is the result of one batch of saga commands.
type Report struct {
	Messages int                   `json:"messages"`
	Results  []orchestrator.Result `json:"results"`
	Failed   int                   `json:"failed"`
}

// Delivery is one saga command as the queue delivered it.
type Delivery struct {
	MessageID string // the queue's message id (named in errors)
	orchestrator.Message
}

// Run advances each delivery's saga by one step. It returns the joined
// errors of the messages that failed (store errors, injected crashes: what
// a redelivery can fix); every other outcome is in the report, in the
// batch's order. A panic while a message is handled is re-raised on the
// caller's goroutine once the batch is done.
func (j *Job) Run(ctx context.Context, queueName string, msgs []Delivery) (Report, error) {
	rep := Report{Messages: len(msgs), Results: make([]orchestrator.Result, len(msgs))}
	j.cfg.OnReceived(queueName, len(msgs))
	errs := make([]error, len(msgs))
	groups := sagaGroups(msgs)
	limit := max(1, min(j.cfg.Concurrency, len(groups)))
	sem := make(chan struct{}, limit)
	var wg sync.WaitGroup
	// A panic while a message is handled is re-raised on the caller's
	// goroutine once the batch is done, as when the batch ran one message
	// after another: the function hosts recover a panicking invocation
	// (scripts/localcloud/runner), which a goroutine of ours would kill.
	var panicOnce sync.Once
	var panicked any
	for _, g := range groups {
		sem <- struct{}{}
		wg.Add(1)
		go func(g []int) {
			defer func() { <-sem; wg.Done() }()
			defer func() {
				if p := recover(); p != nil {
					panicOnce.Do(func() { panicked = p })
				}
			}()
			for _, i := range g {
				res, err := j.cfg.Advancer.Handle(ctx, msgs[i].Message)
				if err != nil {
					errs[i] = fmt.Errorf("message %s: %w", msgs[i].MessageID, err)
				}
				rep.Results[i] = res
			}
		}(g)
	}
	wg.Wait()
	if panicked != nil {
		panic(panicked)
	}
	for _, err := range errs {
		if err != nil {
			rep.Failed++
		}
	}
	return rep, errors.Join(errs...)
}

// sagaGroups splits a batch by saga, keeping the batch's order within each
// group: messages of one saga run one after another (as one advancer would
// take them), different sagas concurrently. A body that does not decode is
// a group of its own (Handle acknowledges it as malformed).
func sagaGroups(msgs []Delivery) [][]int {
	var groups [][]int
	bySaga := map[string]int{}
	for i, m := range msgs {
		id := ""
		if cmd, err := saga.DecodeCommand(m.Body); err == nil {
			id = cmd.SagaID
		}
		if id == "" {
			groups = append(groups, []int{i})
			continue
		}
		if g, ok := bySaga[id]; ok {
			groups[g] = append(groups[g], i)
			continue
		}
		bySaga[id] = len(groups)
		groups = append(groups, []int{i})
	}
	return groups
}
