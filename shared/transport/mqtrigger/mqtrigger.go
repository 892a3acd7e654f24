// Package mqtrigger plays a Yandex Message Queue trigger on one machine: it
// receives batches from a queue port, invokes a function with the trigger's
// envelope, deletes the batch when the invocation succeeds and leaves it for
// redelivery (after the visibility timeout, and after the queue's
// max_receive_count into its dead-letter queue) when it fails.
//
// Like the platform, it runs invocations concurrently: the real trigger
// invokes a new function instance for a batch while earlier ones are still
// running, up to the function's instance limits (platform-notes §1.6: the
// default quota is 10 instances and 10 concurrent calls per zone; §2.4, §2.5
// for batching and failure semantics). A trigger here keeps at most
// Concurrency invocations in flight and receives a batch only when a slot is
// free, so no message sits invisible waiting for an instance.
//
// The local runner (scripts/localcloud) and the benchmark (scripts/bench)
// both use it, so what the benchmark measures is what the runner does.
//
// Known difference from the platform: a batch is what one receive returns
// (up to BatchSize); the trigger's batch_cutoff wait to fill a batch is not
// played, so a lone message is delivered at once rather than after the
// cutoff.
package mqtrigger

import (
	"cmp"
	"context"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"ordersaga/shared/domain/queue"
	"ordersaga/shared/kit/validate"
	"ordersaga/shared/transport/yc"
)

// DefaultConcurrency is the number of invocations in flight when
// Config.Concurrency is not set: the platform's default quota of 10
// function instances (and 10 concurrent calls) per availability zone, with
// no zone_instances_limit set on the function (terraform/functions.tf sets
// none).
const DefaultConcurrency = 10

// DefaultWait is the long-poll wait of one receive when Config.Wait is not
// set.
const DefaultWait = time.Second

// deleteTimeout bounds the deletes after a successful invocation.
const deleteTimeout = 10 * time.Second

// Invoke calls the function with the trigger's raw event. A nil error is
// success (the batch is deleted); an error returns the whole batch.
type Invoke func(ctx context.Context, raw []byte) error

// Config configures a Trigger (New). Queue, URL, QueueID, BatchSize,
// VisibilityTimeout and Invoke are required; the other fields' zero values
// take the defaults named, and negative ones are refused.
type Config struct {
	Queue queue.Queue
	// URL is the queue's URL for the port.
	URL string
	// QueueID is details.queue_id of the envelope, e.g.
	// "yrn:yc:ymq:ru-central1:local:saga-commands".
	QueueID string
	// BatchSize is the most messages per invocation (triggers.yaml
	// batch_size).
	BatchSize int
	// VisibilityTimeout is the trigger's visibility timeout; an invocation
	// also gets it as its deadline, so a batch is not redelivered to a second
	// instance while the first still runs.
	VisibilityTimeout time.Duration
	// Concurrency bounds the invocations in flight (default
	// DefaultConcurrency). 1 gives the serial loop.
	Concurrency int
	// Wait is the long-poll wait of one receive (default DefaultWait).
	Wait time.Duration
	// Invoke runs the function.
	Invoke Invoke
	// Log receives failures (receive, invocation, delete); default: discarded.
	Log *slog.Logger
	// Name names the trigger in log lines.
	Name string
}

// Trigger is one queue → function binding, built by New. Run it once.
type Trigger struct{ cfg Config }

// New returns the trigger cfg describes, its zero optional fields set to
// their defaults. It fails (apperr.Invalid, naming the fields; see
// Config.Validate) on a missing required field or a negative setting.
func New(cfg Config) (*Trigger, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg.setDefaults()
	return &Trigger{cfg: cfg}, nil
}

// Validate reports what New would refuse: a missing Queue, URL, QueueID,
// BatchSize, VisibilityTimeout or Invoke, or a negative BatchSize,
// VisibilityTimeout, Concurrency or Wait. Errors are apperr.Invalid and
// name the fields.
func (c Config) Validate() error {
	var p validate.Problems
	p.Require(c.Queue != nil, "Queue")
	p.Require(c.URL != "", "URL")
	p.Require(c.QueueID != "", "QueueID")
	p.Require(c.Invoke != nil, "Invoke")
	if c.BatchSize == 0 {
		p.Require(false, "BatchSize")
	}
	if c.VisibilityTimeout == 0 {
		p.Require(false, "VisibilityTimeout")
	}
	validate.NotNegative(&p, "BatchSize", c.BatchSize)
	validate.NotNegative(&p, "VisibilityTimeout", c.VisibilityTimeout)
	validate.NotNegative(&p, "Concurrency", c.Concurrency)
	validate.NotNegative(&p, "Wait", c.Wait)
	return p.Err("mqtrigger.New")
}

// setDefaults gives each zero optional field of c its documented default.
func (c *Config) setDefaults() {
	c.Concurrency = cmp.Or(c.Concurrency, DefaultConcurrency)
	c.Wait = cmp.Or(c.Wait, DefaultWait)
	if c.Log == nil {
		c.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
}

// Run receives and invokes until ctx ends, then waits for the invocations in
// flight to return (their contexts end with ctx).
func (tr *Trigger) Run(ctx context.Context) {
	t, log, wait := tr.cfg, tr.cfg.Log, tr.cfg.Wait
	slots := make(chan struct{}, t.Concurrency)
	var wg sync.WaitGroup
	defer wg.Wait()
	for ctx.Err() == nil {
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			return
		}
		msgs, err := t.Queue.Receive(ctx, t.URL, queue.ReceiveOptions{Max: t.BatchSize, Wait: wait, VisibilityTimeout: t.VisibilityTimeout})
		if err != nil || len(msgs) == 0 {
			<-slots
			if err != nil && ctx.Err() == nil {
				log.Warn("queue receive failed", "trigger", t.Name, "error", err)
				sleep(ctx, time.Second)
			}
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			tr.deliver(ctx, log, msgs)
		}()
	}
}

// deliver invokes the function with one batch and deletes it on success.
func (tr *Trigger) deliver(ctx context.Context, log *slog.Logger, msgs []queue.Message) {
	t := tr.cfg
	raw, err := yc.EncodeQueue(t.QueueID, Envelope(msgs))
	if err != nil {
		log.Error("cannot encode trigger envelope", "trigger", t.Name, "error", err)
		return
	}
	ictx, cancel := context.WithTimeout(ctx, t.VisibilityTimeout)
	err = t.Invoke(ictx, raw)
	cancel()
	if err != nil {
		if ctx.Err() == nil {
			log.Warn("queue trigger invocation failed; the batch returns after the visibility timeout",
				"trigger", t.Name, "messages", len(msgs), "error", err)
		}
		return
	}
	// The invocation succeeded: acknowledge it even when the trigger is
	// stopping, as the platform would (an unacknowledged success would only
	// run again after the visibility timeout).
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), deleteTimeout)
	defer cancel()
	if bd, ok := t.Queue.(BatchDeleter); ok {
		handles := make([]string, len(msgs))
		for i, m := range msgs {
			handles[i] = m.ReceiptHandle
		}
		err := bd.DeleteBatch(dctx, t.URL, handles)
		if err == nil {
			return
		}
		log.Warn("queue batch delete failed; deleting one by one", "trigger", t.Name, "messages", len(msgs), "error", err)
	}
	for _, m := range msgs {
		if err := t.Queue.Delete(dctx, t.URL, m.ReceiptHandle); err != nil {
			log.Warn("queue delete failed", "trigger", t.Name, "message_id", m.MessageID, "error", err)
		}
	}
}

// BatchDeleter is a queue that deletes a received batch in one call (the
// embedded queue: sqlitequeue.Queue.DeleteBatch). The trigger uses it when
// the queue has it, and deletes one message at a time otherwise.
type BatchDeleter interface {
	DeleteBatch(ctx context.Context, queueURL string, receiptHandles []string) error
}

// Envelope turns received messages into the trigger event's messages, with
// the system attributes the platform sets (SentTimestamp in milliseconds,
// ApproximateReceiveCount).
func Envelope(msgs []queue.Message) []yc.QueueMessage {
	out := make([]yc.QueueMessage, len(msgs))
	for i, m := range msgs {
		out[i] = yc.QueueMessage{
			EventID: m.MessageID, MessageID: m.MessageID, Body: m.Body, MD5OfBody: yc.BodyMD5(m.Body),
			CreatedAt: m.SentAt, MessageAttributes: m.Attributes,
			Attributes: map[string]string{
				"SentTimestamp":           strconv.FormatInt(m.SentAt.UnixMilli(), 10),
				"ApproximateReceiveCount": strconv.Itoa(m.ReceiveCount),
			},
		}
	}
	return out
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
