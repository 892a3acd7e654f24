// Package queuesetup creates the queues a deployment names (triggers.yaml)
// on a queue adapter: local runs, tests and benchmarks; in the cloud
// Terraform creates them. A dead-letter queue is created before the queues
// that name it, so their redrive policies can point at its URL.
package queuesetup

import (
	"context"
	"fmt"
	"time"

	"ordersaga/shared/domain/queue"
	"ordersaga/shared/kit/validate"
)

// Queue is one queue to create. DeadLetterQueue names another Queue of the
// same call ("" for none).
type Queue struct {
	Name              string
	VisibilityTimeout time.Duration
	MaxReceiveCount   int
	DeadLetterQueue   string
}

// Config configures a Setup (New).
type Config struct {
	Queue queue.Queue // required
}

// Setup creates queues. It is built once by New and safe for concurrent
// use (Ensure is idempotent on every queue adapter).
type Setup struct {
	cfg Config
}

// New returns a Setup. It fails (apperr.Invalid) without a queue.
func New(cfg Config) (*Setup, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Setup{cfg: cfg}, nil
}

// Validate reports what New would refuse: a missing Queue. Errors are
// apperr.Invalid and name the field.
func (c Config) Validate() error {
	var p validate.Problems
	p.Require(c.Queue != nil, "Queue")
	return p.Err("queuesetup.New")
}

// Ensure creates each queue of qs that does not exist, every dead-letter
// queue before the queues that name it, and returns each queue's URL by
// name. It fails naming the queue whose creation failed, or, when some
// queues name a dead-letter queue that is not in qs (or a cycle of them),
// with how many cannot be created; the queues created before that stay.
func (s *Setup) Ensure(ctx context.Context, qs []Queue) (map[string]string, error) {
	urls := map[string]string{}
	pending := append([]Queue(nil), qs...)
	for len(pending) > 0 {
		progressed := false
		rest := pending[:0]
		for _, q := range pending {
			if q.DeadLetterQueue != "" && urls[q.DeadLetterQueue] == "" {
				rest = append(rest, q)
				continue
			}
			url, err := s.cfg.Queue.Ensure(ctx, queue.QueueSpec{
				Name: q.Name, VisibilityTimeout: q.VisibilityTimeout,
				MaxReceiveCount: q.MaxReceiveCount, DeadLetterQueueURL: urls[q.DeadLetterQueue],
			})
			if err != nil {
				return urls, fmt.Errorf("ensure queue %s: %w", q.Name, err)
			}
			urls[q.Name], progressed = url, true
		}
		if !progressed {
			return urls, fmt.Errorf("queues with unresolvable dead-letter queues: %d", len(rest))
		}
		pending = rest
	}
	return urls, nil
}
