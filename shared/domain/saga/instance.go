// Package saga defines CreateOrderSaga: its persisted instance, its step log,
// and the explicit step table (each forward step names its compensation).
// The orchestrator that runs steps lives in package orchestrator.
package saga

import (
	"encoding/json"
	"time"
)

// State of a saga instance.
type State string

// Saga states: pending → running → completed; running → compensating →
// compensated; compensating → failed when a compensation gives up.
const (
	StatePending      State = "pending"
	StateRunning      State = "running"
	StateCompleted    State = "completed"
	StateCompensating State = "compensating"
	StateCompensated  State = "compensated"
	StateFailed       State = "failed"
)

// Finished reports whether the saga will not move again on its own.
func (s State) Finished() bool {
	return s == StateCompleted || s == StateCompensated || s == StateFailed
}

// TypeCreateOrder is the only saga type today.
const TypeCreateOrder = "create_order"

// Data is the saga's persisted working data: a snapshot of what its steps need,
// so a step never reads a mutable aggregate to decide what to do.
type Data struct {
	OrderID    string     `json:"order_id"`
	CustomerID string     `json:"customer_id"`
	Currency   string     `json:"currency"`
	TotalMinor int64      `json:"total_minor"`
	Items      []DataItem `json:"items"`
	// FailureReason is the permanent error that started compensation.
	FailureReason string `json:"failure_reason,omitempty"`

	// The fields below are the saga's control state, kept in Data (a JSON
	// column) so that no store schema changes for them.

	// Epoch is the generation of the saga's token: a dead-letter redrive
	// bumps it, so every saga.advance message written before is stale.
	Epoch int `json:"epoch,omitempty"`
	// Resends counts recovery resends since the saga last moved whose
	// previous command was consumed (an advancer wrote the saga after it:
	// took its lease, released it); recovery fails the saga at its bound.
	// Every transition resets it (ResetResends), as the fields below.
	Resends int `json:"redrives,omitempty"`
	// ResendVersion is the saga's version as recovery's last resend wrote
	// it: a saga still at this version has not been touched by an advancer
	// since, so that resend's command is still waiting (or lost).
	ResendVersion int64 `json:"redrive_version,omitempty"`
	// UnconsumedResends counts resends in a row whose previous command
	// was not consumed: each doubles the time before the next one (a
	// backlogged queue gets few duplicates). WaitingSinceUnixMilli is when
	// the first command of that row became due: recovery's bound on a lost
	// command is measured from it.
	UnconsumedResends     int   `json:"unconsumed_redrives,omitempty"`
	WaitingSinceUnixMilli int64 `json:"waiting_since_ms,omitempty"`
	// Waits counts the attempts of the current step that met a dependency
	// that is down (refused by its open circuit breaker, or failed with the
	// breaker open after them): they advance the token (Instance.Attempts)
	// but not the step's retry budget.
	Waits int `json:"waits,omitempty"`
	// OutageSince is when the current step's first wait for a dependency
	// that is down began (nil when Waits is 0): a step waits at most the
	// advancer's OutageBound from then before such failures spend attempts.
	OutageSince *time.Time `json:"outage_since,omitempty"`
	// GaveUp is the first compensation of the current epoch that gave up:
	// the compensations of the steps before it run all the same, except the
	// first step's (which would finish the order as cancelled), and then the
	// saga fails at this one (nil: none gave up).
	GaveUp *GaveUp `json:"gave_up,omitempty"`
	// LogSeq is the seq of the saga's last step-log line (0: none, or a
	// saga saved before this field existed, whose log is then read once),
	// so a step appends its line without reading the log.
	LogSeq int `json:"log_seq,omitempty"`
}

// ResetResends starts recovery's counts again: the saga moved, or an
// operator redrove it.
func (d *Data) ResetResends() {
	d.Resends, d.ResendVersion, d.UnconsumedResends, d.WaitingSinceUnixMilli = 0, 0, 0, 0
}

// GaveUp is a compensation that gave up (Data.GaveUp).
type GaveUp struct {
	// Epoch is Data.Epoch when it gave up: a redrive (a new epoch) starts
	// afresh.
	Epoch int `json:"epoch,omitempty"`
	// Step is the step whose compensation gave up.
	Step int `json:"step"`
	// Attempts is the compensation's attempts when it gave up.
	Attempts int `json:"attempts"`
	// Kind is the apperr kind of its last error (the dead letter's
	// error_type).
	Kind string `json:"kind"`
	// Error is its last error's text.
	Error string `json:"error,omitempty"`
}

// DataItem is one order line as the steps see it.
type DataItem struct {
	SKU            string `json:"sku"`
	Quantity       int64  `json:"quantity"`
	UnitPriceMinor int64  `json:"unit_price_minor"`
}

// Instance is one persisted saga.
type Instance struct {
	ID    string
	Type  string
	State State
	Data  Data
	// Step is the index in the step table of the step being run (forward) or
	// compensated (compensating). For completed sagas it equals len(Steps).
	Step int
	// Attempts of the current step or compensation so far.
	Attempts      int
	LeaseOwner    string
	LeaseUntil    time.Time
	NextAttemptAt time.Time
	LastError     string
	// CorrelationID is the idempotency key of the request that created the saga.
	CorrelationID string
	CreatedAt     time.Time
	UpdatedAt     time.Time
	FinishedAt    time.Time
	Version       int64
}

// DataJSON encodes Data for storage.
func (i Instance) DataJSON() ([]byte, error) { return json.Marshal(i.Data) }

// Direction of a step execution.
type Direction string

// Directions.
const (
	Forward    Direction = "forward"
	Compensate Direction = "compensate"
)

// Outcome of one step execution, as recorded in the step log.
type Outcome string

// Outcomes.
const (
	OutcomeSucceeded Outcome = "succeeded"
	OutcomeRetry     Outcome = "retry"   // transient failure, retried later
	OutcomeWaiting   Outcome = "waiting" // the dependency is down (breaker open): asked again later, no attempt spent
	OutcomeFailed    Outcome = "failed"  // permanent failure of a forward step: compensation starts
	OutcomeGaveUp    Outcome = "gave_up" // a compensation exhausted its retries: saga failed
	OutcomeSkipped   Outcome = "skipped" // nothing to do (e.g. compensating a step with no effect)
)

// LogEntry is one line of a saga's step history.
type LogEntry struct {
	SagaID     string    `json:"-"`
	Seq        int       `json:"seq"`
	Step       string    `json:"step"`
	Direction  Direction `json:"direction"`
	Outcome    Outcome   `json:"outcome"`
	Attempt    int       `json:"attempt"`
	Error      string    `json:"error,omitempty"`
	StateAfter State     `json:"state_after"`
	DurationMS int64     `json:"duration_ms"`
	At         time.Time `json:"at"`
	MessageID  string    `json:"message_id,omitempty"`
}
