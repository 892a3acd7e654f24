package redrive

import (
	"context"
	"encoding/json"
	"time"

	"ordersaga/shared/domain/dlq"
	"ordersaga/shared/domain/saga"
	"ordersaga/shared/domain/store"
)

// Correlation is the chain that ties a dead letter to the request that
// caused it.
type Correlation struct {
	IdempotencyKey string `json:"idempotency_key,omitempty"`
	OrderID        string `json:"order_id,omitempty"`
	OutboxEventID  string `json:"outbox_event_id,omitempty"`
	SagaID         string `json:"saga_id,omitempty"`
}

// Entry is the JSON view of a dead letter in lists.
type Entry struct {
	ID            string      `json:"id"`
	Source        dlq.Source  `json:"source"`
	SourceRef     string      `json:"source_ref"`
	Queue         string      `json:"queue,omitempty"`
	ErrorType     string      `json:"error_type"`
	Error         string      `json:"error"`
	RetryCount    int         `json:"retry_count"`
	FirstFailedAt time.Time   `json:"first_failed_at"`
	LastFailedAt  time.Time   `json:"last_failed_at"`
	Status        dlq.Status  `json:"status"`
	RedriveCount  int         `json:"redrive_count"`
	Flagged       bool        `json:"flagged"`
	ResolvedAt    *time.Time  `json:"resolved_at,omitempty"`
	ResolvedBy    string      `json:"resolved_by,omitempty"`
	Correlation   Correlation `json:"correlation"`
	CreatedAt     time.Time   `json:"created_at"`
	UpdatedAt     time.Time   `json:"updated_at"`
	Version       int64       `json:"version"`
}

// NewEntry returns the list view of d.
func NewEntry(d dlq.DeadLetter) Entry {
	e := Entry{
		ID: d.ID, Source: d.Source, SourceRef: d.SourceRef, Queue: d.Queue, ErrorType: d.ErrorType,
		Error: d.Error, RetryCount: d.RetryCount, FirstFailedAt: d.FirstFailedAt, LastFailedAt: d.LastFailedAt,
		Status: d.Status, RedriveCount: d.RedriveCount, Flagged: d.Flagged, ResolvedBy: d.ResolvedBy,
		Correlation: Correlation{IdempotencyKey: d.IdempotencyKey, OrderID: d.OrderID,
			OutboxEventID: d.OutboxEventID, SagaID: d.SagaID},
		CreatedAt: d.CreatedAt, UpdatedAt: d.UpdatedAt, Version: d.Version,
	}
	if !d.ResolvedAt.IsZero() {
		at := d.ResolvedAt
		e.ResolvedAt = &at
	}
	return e
}

// ListResult is one page of entries.
type ListResult struct {
	Entries []Entry `json:"entries"`
	// NextCursor fetches the next page; empty on the last page.
	NextCursor string `json:"next_cursor,omitempty"`
}

// Detail is the JSON view of one dead letter with everything an operator
// needs to find out why it failed.
type Detail struct {
	Entry
	// Payload is the dead work's body: embedded as JSON when it is JSON,
	// else as a string.
	Payload    json.RawMessage   `json:"payload"`
	Attributes map[string]string `json:"attributes,omitempty"`
	History    []dlq.Failure     `json:"history"`
	// Saga is the current state of the saga in the correlation chain, and
	// SagaLog its step history, when there is one.
	Saga    *SagaView       `json:"saga,omitempty"`
	SagaLog []saga.LogEntry `json:"saga_log,omitempty"`
	// Outbox is the current state of the outbox row of an outbox entry.
	Outbox *OutboxView `json:"outbox,omitempty"`
	// Held is what the saga of a saga entry holds now (dlq.HeldBy): its
	// reserved units and a charge not refunded; absent when nothing. The
	// attribute "held" is what it held when it was dead-lettered.
	Held *dlq.Held `json:"held,omitempty"`
	// Audit lists the recent operator actions that touched this entry, newest first.
	Audit []Audit `json:"audit"`
}

// SagaView is the part of a saga instance an operator needs.
type SagaView struct {
	ID        string     `json:"id"`
	State     saga.State `json:"state"`
	Step      int        `json:"step"`
	StepName  string     `json:"step_name,omitempty"`
	Attempts  int        `json:"attempts"`
	LastError string     `json:"last_error,omitempty"`
	UpdatedAt time.Time  `json:"updated_at"`
}

// OutboxView is the part of an outbox row an operator needs.
type OutboxView struct {
	ID          string    `json:"id"`
	EventType   string    `json:"event_type"`
	Destination string    `json:"destination"`
	Status      string    `json:"status"`
	Attempts    int       `json:"attempts"`
	LastError   string    `json:"last_error,omitempty"`
	CreatedAt   time.Time `json:"created_at"`
}

// What a redrive or discard does to what a saga entry's saga holds (its
// reserved units, a charge not refunded): the held_effect of a report item.
const (
	// HeldReleased: the redrive resumed the saga's compensations, which
	// release the units and refund the charge as they succeed (a
	// compensation that gives up again dead-letters the saga again, with
	// what it still holds).
	HeldReleased = "released by the resumed compensations"
	// HeldWouldRelease: a dry run's HeldReleased.
	HeldWouldRelease = "would be released by the resumed compensations"
	// HeldKept: nothing releases them — the entry was discarded (the saga
	// stays failed), or the redrive did not happen. Units stay reserved and
	// the charge stays taken until an operator redrives the entry or
	// settles them by hand (docs/dead-letters.md).
	HeldKept = "kept: nothing releases the units or refunds the charge"
)

// heldOf reads what the saga of entry d holds now; nil for entries of
// other sources and sagas that hold nothing.
func heldOf(ctx context.Context, tx store.Tx, d dlq.DeadLetter) (*dlq.Held, error) {
	if d.Source != dlq.SourceSaga {
		return nil, nil
	}
	h, err := dlq.HeldBy(ctx, tx, d.SourceRef)
	if err != nil || h.Empty() {
		return nil, err
	}
	return &h, nil
}

// Audit is the JSON view of an audit record.
type Audit struct {
	ID      string          `json:"id"`
	At      time.Time       `json:"at"`
	Actor   string          `json:"actor"`
	Action  string          `json:"action"`
	Params  json.RawMessage `json:"params"`
	Count   int             `json:"count"`
	Outcome string          `json:"outcome"`
	Detail  json.RawMessage `json:"detail"`
}

// NewAudit returns the JSON view of a.
func NewAudit(a dlq.AuditRecord) Audit {
	return Audit{ID: a.ID, At: a.At, Actor: a.Actor, Action: a.Action, Params: rawJSON(a.Params),
		Count: a.Count, Outcome: a.Outcome, Detail: rawJSON(a.Detail)}
}

// rawJSON returns b when it is valid JSON, else b as a JSON string (and
// null for nothing).
func rawJSON(b []byte) json.RawMessage {
	if len(b) == 0 {
		return json.RawMessage("null")
	}
	if json.Valid(b) {
		return json.RawMessage(b)
	}
	s, _ := json.Marshal(string(b))
	return s
}

// Stats counts dead letters.
type Stats struct {
	Total       int            `json:"total"`
	BySource    map[string]int `json:"by_source"`
	ByStatus    map[string]int `json:"by_status"`
	ByErrorType map[string]int `json:"by_error_type"`
	// OpenBySource counts open entries (waiting for an operator) per source.
	OpenBySource map[string]int `json:"open_by_source"`
	Flagged      int            `json:"flagged"`
	// Truncated is true when the table held more entries than Stats reads.
	Truncated bool `json:"truncated,omitempty"`
	// NotIngested counts messages still in each dead-letter queue (not yet
	// ingested into the store); absent when the queue could not be asked.
	NotIngested map[string]int `json:"not_ingested,omitempty"`
}
