// Package queue is ordersaga's message-queue port: the small slice of the SQS
// API (Yandex Message Queue speaks it) that the outbox relay, the saga
// advancer and the DLQ redrive need.
//
// Two adapters implement it: ymq (aws-sdk-go-v2 against YMQ or an SQS
// emulator) and sqlitequeue (embedded, for local runs). Both pass the
// conformance suite in package queuetest, and both validate their input with
// the helpers in this package, so an invalid batch is rejected the same way
// everywhere.
//
// Semantics are those of an SQS standard queue: at-least-once delivery, no
// ordering guarantee, a received message stays invisible for its visibility
// timeout and is then delivered again with its receive count incremented,
// and a queue with a redrive policy moves a message to its dead-letter queue
// (keeping its message id, body and attributes) instead of delivering it once
// its receive count would exceed MaxReceiveCount.
package queue

import (
	"context"
	"time"
)

// Limits shared by every adapter (SQS / YMQ limits).
const (
	// MaxBatch is the maximum number of entries in one SendBatch call and the
	// maximum Max of one Receive.
	MaxBatch = 10
	// MaxAttributes is the maximum number of message attributes per message.
	MaxAttributes = 10
	// MaxMessageBytes is the maximum size of one message (body plus attribute
	// names, types and values) and of one whole batch.
	MaxMessageBytes = 256 * 1024
	// MaxWait is the longest long poll of one Receive.
	MaxWait = 20 * time.Second
	// MaxVisibilityTimeout is the longest visibility timeout.
	MaxVisibilityTimeout = 12 * time.Hour
	// MaxDelay is the longest delivery delay of a sent message.
	MaxDelay = 15 * time.Minute
	// MaxReceiveCountLimit is the largest accepted QueueSpec.MaxReceiveCount.
	MaxReceiveCountLimit = 1000
	// DefaultVisibilityTimeout is the visibility timeout of a queue whose
	// spec leaves it zero.
	DefaultVisibilityTimeout = 30 * time.Second
)

// OutMessage is one entry of a SendBatch call.
type OutMessage struct {
	// ID identifies the entry within its batch: [A-Za-z0-9_-]{1,80}, unique
	// in the batch. It is not the message id (the queue assigns that).
	ID string
	// Body is the message body: 1 byte .. 256 KiB of text in the characters
	// SQS accepts (#x9 #xA #xD #x20-#xD7FF #xE000-#xFFFD #x10000-#x10FFFF).
	Body string
	// Attributes are at most 10 string message attributes. Names follow the
	// SQS rules ([A-Za-z0-9_.-], ≤256 chars, no leading/trailing or double
	// dot, no "AWS."/"Amazon." prefix); values are non-empty.
	Attributes map[string]string
	// Delay postpones the first delivery (0..15 min): the message is never
	// received before Delay has passed since the send call began. Adapters
	// over SQS round it up to whole seconds (DelayUnit), never down; use
	// DelayUntil to turn a due time into a delay.
	Delay time.Duration
}

// SendResult is the outcome of one SendBatch entry.
type SendResult struct {
	// ID is the entry id (OutMessage.ID).
	ID string
	// MessageID is the id the queue assigned; empty when Err is non-nil.
	MessageID string
	// Err is nil on success; otherwise of apperr kind Invalid (this entry
	// will never be accepted as it is) or Transient (retry it).
	Err error
}

// Message is a received message.
type Message struct {
	// MessageID is the id assigned on send; it survives redelivery and the
	// move to a dead-letter queue.
	MessageID string
	// ReceiptHandle identifies this delivery; Delete and ChangeVisibility
	// take it. Each delivery has a new one.
	ReceiptHandle string
	// Body is the message body as sent.
	Body string
	// Attributes are the message attributes as sent (nil when none).
	Attributes map[string]string
	// ReceiveCount counts deliveries of the message from this queue,
	// including this one (so the first delivery has 1).
	ReceiveCount int
	// SentAt is when the message was first sent (millisecond precision).
	SentAt time.Time
}

// ReceiveOptions tune one Receive call.
type ReceiveOptions struct {
	// Max is the maximum number of messages to return: 1..10; 0 means 1.
	Max int
	// Wait is the long-poll duration (0..20 s): Receive returns as soon as a
	// message is available, or empty after Wait. 0 returns at once.
	// Adapters over SQS round it up to whole seconds.
	Wait time.Duration
	// VisibilityTimeout overrides the queue's for the returned messages
	// (0..12 h); 0 uses the queue's default. Adapters over SQS round it up to
	// whole seconds.
	VisibilityTimeout time.Duration
}

// QueueSpec describes a queue for Ensure.
type QueueSpec struct {
	// Name is the queue name: [A-Za-z0-9_-]{1,80} (standard queues only).
	Name string
	// VisibilityTimeout is the queue's default visibility timeout (0..12 h);
	// 0 means DefaultVisibilityTimeout.
	VisibilityTimeout time.Duration
	// MaxReceiveCount enables the redrive policy (1..1000): a message that
	// would be delivered for the (MaxReceiveCount+1)-th time moves to the
	// dead-letter queue instead. 0 means no dead-letter queue.
	MaxReceiveCount int
	// DeadLetterQueueURL is the URL (as returned by Ensure) of the
	// dead-letter queue; required when MaxReceiveCount > 0.
	DeadLetterQueueURL string
}

// Queue is the message-queue port. Implementations are safe for concurrent
// use by multiple goroutines. Every method returns apperr kinds: Invalid for
// arguments that break the contract, NotFound when the queue URL names no
// queue, Transient for failures worth retrying (network, throttling, 5xx,
// lock contention, context deadline), Internal otherwise.
type Queue interface {
	// Ensure creates the queue if it is missing and returns its URL; it also
	// sets the visibility timeout and the redrive policy from spec.
	// Idempotent: calling it again with the same spec returns the same URL.
	// Whether MaxReceiveCount 0 removes an existing queue's redrive policy is
	// adapter-defined (sqlitequeue removes it; ymq leaves it in place).
	// Errors: Invalid (bad spec), NotFound (the dead-letter queue does not
	// exist), Transient.
	Ensure(ctx context.Context, spec QueueSpec) (url string, err error)

	// SendBatch sends up to 10 messages to the queue and returns one result
	// per entry, in input order. A batch that is invalid as a whole (no
	// entries, more than 10, a bad or duplicate entry id, more than 256 KiB
	// together) fails the whole call with Invalid, and nothing is sent; so
	// does a call that failed as a whole (NotFound, Transient). Otherwise the
	// error is nil and each entry's outcome is in its result: an entry whose
	// own content is invalid gets an Invalid Err and is not sent, while the
	// others are. Not idempotent: resending creates duplicates (consumers
	// dedupe by message content, not by MessageID).
	SendBatch(ctx context.Context, queueURL string, msgs []OutMessage) ([]SendResult, error)

	// Receive returns up to opts.Max visible messages, making each invisible
	// for the visibility timeout and incrementing its receive count; with
	// opts.Wait > 0 it long-polls. An empty result with a nil error means no
	// message arrived in time. Two concurrent receivers never get the same
	// message within its visibility window. Messages that exceed the queue's
	// MaxReceiveCount are moved to the dead-letter queue instead of being
	// returned. Errors: Invalid (bad opts), NotFound, Transient.
	Receive(ctx context.Context, queueURL string, opts ReceiveOptions) ([]Message, error)

	// Delete removes the message delivered with receiptHandle. Idempotent:
	// deleting an already deleted message, or using the handle of an earlier
	// delivery of a message delivered again since, succeeds (in the latter
	// case, as in SQS, the message may stay). Errors: Invalid (empty handle),
	// NotFound (queue), Transient.
	Delete(ctx context.Context, queueURL, receiptHandle string) error

	// ChangeVisibility makes the message delivered with receiptHandle
	// invisible for d from now (0..12 h); d = 0 makes it visible at once.
	// Errors: Invalid (bad d or handle), NotFound (the queue does not exist,
	// or the message is no longer in flight under this handle: deleted,
	// delivered again or moved to the dead-letter queue), Transient.
	ChangeVisibility(ctx context.Context, queueURL, receiptHandle string, d time.Duration) error

	// Depth returns approximate counts of the queue's messages: visible
	// (available to Receive now) and in flight (received, neither deleted nor
	// visible again). Delayed messages count in neither. For metrics and the
	// dlq_size gauge; not for correctness decisions. Errors: NotFound,
	// Transient.
	Depth(ctx context.Context, queueURL string) (visible, inFlight int, err error)
}
