// Package orchestrator runs CreateOrderSaga: the Advancer carries a saga one
// step (or one compensation) further per saga.advance message, and Recovery
// re-drives stuck sagas, releases abandoned idempotency keys, expires inbox
// entries and reconciles orders with their finished sagas.
//
// Every saga.advance message carries a token — the saga's epoch, phase
// (forward or compensate), step index and attempt count when the message was
// written; a dead-letter redrive starts a new epoch.
// The advancer acts on a message only if the saga's current token equals the
// message's, and every transition changes the token, so a duplicate, a
// reordered message or a recovery re-drive can never run a step twice or
// fork a second chain of messages: a message whose token no longer matches
// is stale and is acknowledged. The saga's lease keeps two advancers off the
// same step at the same time; the participants are idempotent by saga id, so
// re-running a step whose save was lost (a crash) is harmless.
package orchestrator

import (
	"encoding/json"

	"ordersaga/shared/apperr"
	"ordersaga/shared/saga"
)

// Command is the JSON body of a saga.advance message. It is a superset of
// orders.AdvancePayload: a body with only saga_id and reason is the first
// command of a new saga (state pending, step 0, attempt 0).
type Command struct {
	SagaID string `json:"saga_id"`
	// Reason says why the command was written (created, next, retry,
	// compensate, recovery); informational only.
	Reason string `json:"reason,omitempty"`
	// State, Step and Attempt are the saga's token when the command was written.
	State   saga.State `json:"state,omitempty"`
	Step    int        `json:"step"`
	Attempt int        `json:"attempt"`
	// Epoch is the token's generation (saga.Data.Epoch): a dead-letter
	// redrive bumps it, which makes every older message stale even where
	// state, step and attempt repeat. Absent means 0.
	Epoch int `json:"epoch,omitempty"`
}

// Command reasons.
const (
	ReasonNext       = "next"
	ReasonRetry      = "retry"
	ReasonCompensate = "compensate"
	ReasonRecovery   = "recovery"
)

// DecodeCommand parses a saga.advance body. Errors: Invalid when the body is
// not a JSON object with a saga_id, or its token is impossible.
func DecodeCommand(body []byte) (Command, error) {
	var c Command
	if err := json.Unmarshal(body, &c); err != nil {
		return Command{}, apperr.Wrap(apperr.Invalid, err, "saga command is not valid JSON")
	}
	if c.SagaID == "" {
		return Command{}, apperr.New(apperr.Invalid, "saga command has no saga_id")
	}
	if c.State == "" {
		c.State = saga.StatePending
	}
	if phaseOf(c.State) == "" || c.Step < 0 || c.Attempt < 0 || c.Epoch < 0 {
		return Command{}, apperr.New(apperr.Invalid, "saga command has an impossible token %s/%d/%d epoch %d", c.State, c.Step, c.Attempt, c.Epoch)
	}
	return c, nil
}

// Encode returns the command's JSON body.
func (c Command) Encode() []byte {
	b, err := json.Marshal(c)
	if err != nil { // a struct of strings and ints always encodes
		panic(err)
	}
	return b
}

// commandFor returns the command that carries inst's current token.
func commandFor(inst saga.Instance, reason string) Command {
	return Command{SagaID: inst.ID, Reason: reason, State: inst.State, Step: inst.Step, Attempt: inst.Attempts, Epoch: inst.Data.Epoch}
}

// phaseOf maps a saga state to its token phase: forward while pending or
// running, compensate while compensating, "" when finished.
func phaseOf(st saga.State) saga.Direction {
	switch st {
	case saga.StatePending, saga.StateRunning:
		return saga.Forward
	case saga.StateCompensating:
		return saga.Compensate
	}
	return ""
}

// matches reports whether the command's token is the saga's current one.
func (c Command) matches(inst saga.Instance) bool {
	p := phaseOf(inst.State)
	return p != "" && p == phaseOf(c.State) && c.Step == inst.Step && c.Attempt == inst.Attempts && c.Epoch == inst.Data.Epoch
}
