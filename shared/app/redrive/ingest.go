package redrive

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"

	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/dlq"
	"ordersaga/shared/domain/outbox"
	"ordersaga/shared/domain/queue"
	"ordersaga/shared/domain/store"
)

// Attributes a redriven queue message carries, so that if it dies again its
// ingestion finds the entry it came from (the loop guard counts on it).
const (
	// AttrRedriveOf is the id of the dead letter the message was redriven from.
	AttrRedriveOf = "redrive_of"
	// AttrRedriveCount is the entry's redrive count after the redrive that
	// sent this message (its generation).
	AttrRedriveCount = "redrive_count"
)

// ErrorTypeMaxReceives is the error type of an ingested queue dead letter:
// the queue gave up after maxReceiveCount deliveries (SQS does not say why
// the consumer failed; its logs do, under the message id).
const ErrorTypeMaxReceives = "max_receives_exceeded"

// ingestVisibility hides a message being ingested from other ingesters.
const ingestVisibility = 2 * time.Minute

// Ingest moves up to max messages (default 100) from the dead-letter queues
// in DLQs into the dead-letter store: for each message it records a dead
// letter (dlq.Record, so a redriven message that died again reopens its
// entry) and only then deletes the message from the queue. A crash between
// the two leaves the message in the queue; ingesting it again changes
// nothing (Record is idempotent while the entry is open, and a message of an
// older generation than its entry's redrive count is only deleted). Not
// audited: it is housekeeping, run by a timer or by the console's ingest
// action. Returns how many messages left the dead-letter queues. Errors:
// Internal (a DLQ without URL), those of the store and the queue.
func (s *Service) Ingest(ctx context.Context, max int) (int, error) {
	if max <= 0 {
		max = DefaultMax
	}
	if s.cfg.Queue == nil {
		return 0, nil
	}
	moved := 0
	for _, name := range sortedKeys(s.cfg.DLQs) {
		url := s.cfg.QueueURLs[name]
		if url == "" {
			return moved, apperr.New(apperr.Internal, "no queue URL is configured for dead-letter queue %q", name)
		}
		for moved < max {
			msgs, err := s.cfg.Queue.Receive(ctx, url, queue.ReceiveOptions{
				Max: min(queue.MaxBatch, max-moved), Wait: s.cfg.ReceiveWait, VisibilityTimeout: ingestVisibility})
			if err != nil {
				return moved, fmt.Errorf("receive from %s: %w", name, err)
			}
			if len(msgs) == 0 {
				break
			}
			for _, m := range msgs {
				if err := s.ingestOne(ctx, name, s.cfg.DLQs[name], m); err != nil {
					return moved, fmt.Errorf("ingest message %s from %s: %w", m.MessageID, name, err)
				}
				if err := s.cfg.Queue.Delete(ctx, url, m.ReceiptHandle); err != nil {
					// Recorded but still in the queue: the next ingestion
					// finds it again and changes nothing.
					return moved, fmt.Errorf("delete ingested message %s from %s: %w", m.MessageID, name, err)
				}
				moved++
			}
		}
	}
	return moved, nil
}

// ingestOne records one DLQ message in one transaction.
func (s *Service) ingestOne(ctx context.Context, dlqName, source string, m queue.Message) error {
	id, now := s.cfg.NewID(), s.cfg.Now()
	var recorded *dlq.DeadLetter
	err := s.cfg.Store.InTx(ctx, func(ctx context.Context, tx store.Tx) error {
		recorded = nil
		ref, gen, err := messageRef(ctx, tx, m)
		if err != nil {
			return err
		}
		existing, err := tx.FindDeadLetter(ctx, dlq.SourceQueue, ref)
		switch {
		case err == nil && gen < existing.RedriveCount:
			return nil // an older generation, recorded and redriven already
		case err == nil && (existing.Status == dlq.StatusResolved || existing.Status == dlq.StatusDiscarded):
			// The same generation again after its entry was closed: a copy
			// left behind by a crash between record and delete. Closing
			// stands; the message is only deleted.
			return nil
		case err != nil && !apperr.Is(err, apperr.NotFound):
			return err
		}
		d, err := dlq.Record(ctx, tx, s.queueDeadLetter(id, ref, dlqName, source, m, now), s.cfg.LoopLimit)
		if err == nil && (existing.ID == "" || d.Version != existing.Version) {
			recorded = &d // a new failure (not a repeat)
		}
		return err
	})
	if err != nil {
		return err
	}
	if recorded != nil {
		s.cfg.Log.Warn("dead letter ingested from queue", "dead_letter_id", recorded.ID, "queue", source,
			"message_id", m.MessageID, "order_id", recorded.OrderID, "saga_id", recorded.SagaID,
			"redrive_count", recorded.RedriveCount, "flagged", recorded.Flagged)
		s.cfg.OnIngested(source, ErrorTypeMaxReceives)
	}
	return nil
}

// messageRef returns the source ref of a DLQ message (the id of the message
// that first died; for a redriven message, the ref of the entry named by its
// redrive_of attribute) and its generation.
func messageRef(ctx context.Context, tx store.Tx, m queue.Message) (string, int, error) {
	gen, _ := strconv.Atoi(m.Attributes[AttrRedriveCount])
	of := m.Attributes[AttrRedriveOf]
	if of == "" {
		return m.MessageID, 0, nil
	}
	d, err := tx.GetDeadLetter(ctx, of)
	switch {
	case err == nil && d.Source == dlq.SourceQueue:
		return d.SourceRef, max(gen, 0), nil
	case err == nil || apperr.Is(err, apperr.NotFound):
		return m.MessageID, 0, nil // its entry is gone (purged): a new one
	default:
		return "", 0, err
	}
}

func (s *Service) queueDeadLetter(id, ref, dlqName, source string, m queue.Message, now time.Time) dlq.DeadLetter {
	var attrs map[string]string
	for k, v := range m.Attributes {
		if k == AttrRedriveOf || k == AttrRedriveCount {
			continue
		}
		if attrs == nil {
			attrs = map[string]string{}
		}
		attrs[k] = v
	}
	// RetryCount is the receive count the dead-letter queue reports for this
	// delivery (the embedded queue restarts it at 1 on the move; SQS's
	// behaviour is not documented for YMQ).
	text := fmt.Sprintf("message %s was not acknowledged within the receive limit of queue %s and was moved to %s",
		m.MessageID, source, dlqName)
	return dlq.DeadLetter{
		ID: id, Source: dlq.SourceQueue, SourceRef: ref, Queue: source, Payload: []byte(m.Body), Attrs: attrs,
		ErrorType: ErrorTypeMaxReceives, Error: text, RetryCount: m.ReceiveCount,
		FirstFailedAt: now, LastFailedAt: now, Status: dlq.StatusOpen,
		IdempotencyKey: attrs[outbox.AttrIdempotencyKey], OrderID: attrs[outbox.AttrOrderID],
		OutboxEventID: attrs[outbox.AttrEventID], SagaID: attrs[outbox.AttrSagaID],
		CreatedAt: now, UpdatedAt: now, Version: 1,
	}
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
