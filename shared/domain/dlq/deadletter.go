// Package dlq defines dead letters (work that failed past its retries and
// waits for an operator), their filters, and the audit records of every
// operator action. The redrive use cases live in package redrive.
package dlq

import "time"

// Source of a dead letter.
type Source string

// Sources.
const (
	SourceQueue  Source = "queue"  // a message moved to a YMQ dead-letter queue
	SourceOutbox Source = "outbox" // an outbox row that exhausted its publish attempts
	SourceSaga   Source = "saga"   // a saga whose compensation gave up
)

// Status of a dead letter.
type Status string

// Statuses. Nothing is ever deleted without a trace: discarded entries stay
// until purged by an explicit, audited purge of old discarded entries.
const (
	StatusOpen      Status = "open"
	StatusRedriven  Status = "redriven"
	StatusResolved  Status = "resolved"
	StatusDiscarded Status = "discarded"
)

// Failure is one recorded failure of the dead-lettered work.
type Failure struct {
	At        time.Time `json:"at"`
	ErrorType string    `json:"error_type"`
	Error     string    `json:"error"`
}

// DeadLetter is one entry of the dead-letter store.
type DeadLetter struct {
	ID        string
	Source    Source
	SourceRef string // queue message id, outbox event id or saga id
	Queue     string // source queue name (queue entries) or destination (outbox entries)
	Payload   []byte
	Attrs     map[string]string
	ErrorType string
	Error     string
	// RetryCount is how many times the work was attempted before it died.
	RetryCount     int
	FirstFailedAt  time.Time
	LastFailedAt   time.Time
	History        []Failure
	Status         Status
	RedriveCount   int
	Flagged        bool // redriven too often and failed again: no automatic redrive
	ResolvedAt     time.Time
	ResolvedBy     string
	IdempotencyKey string
	OrderID        string
	OutboxEventID  string
	SagaID         string
	CreatedAt      time.Time
	UpdatedAt      time.Time
	Version        int64
}

// Filter selects dead letters. Zero fields do not filter.
type Filter struct {
	Source    Source
	Status    Status
	ErrorType string
	OrderID   string
	SagaID    string
	From, To  time.Time // on LastFailedAt, [From, To)
	Flagged   *bool
}

// Page is a keyset page: entries after (AfterTime, AfterID) in the order of
// (LastFailedAt desc, ID desc).
type Page struct {
	Limit  int
	Cursor string
}

// AuditRecord is one operator action, kept for audit.
type AuditRecord struct {
	ID      string
	At      time.Time
	Actor   string
	Action  string
	Params  []byte // the command, as JSON
	Count   int
	Outcome string
	Detail  []byte // JSON report
}
