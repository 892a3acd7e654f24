package saga

import (
	"encoding/json"

	"ordersaga/shared/domain/apperr"
)

// Command is the body of a saga.advance message, the one type every writer
// (the order API, the advancer, recovery, a redrive) and the advancer's
// decoder share. It carries the saga's token when it was written — epoch,
// phase, step, attempt — and the advancer acts on it only if the token is
// the saga's current one. A body with only saga_id and reason is the first
// command of a new saga (state pending, step 0, attempt 0, epoch 0).
type Command struct {
	SagaID string `json:"saga_id"`
	// Reason says why the command was written (created, next, retry,
	// compensate, recovery, redrive); informational only.
	Reason string `json:"reason,omitempty"`
	// State, Step and Attempt are the saga's token when the command was written.
	State   State `json:"state,omitempty"`
	Step    int   `json:"step"`
	Attempt int   `json:"attempt"`
	// Epoch is the token's generation (Data.Epoch): a dead-letter redrive
	// bumps it, which makes every older message stale even where state,
	// step and attempt repeat. Absent means 0.
	Epoch int `json:"epoch,omitempty"`
}

// Command reasons.
const (
	ReasonCreated    = "created"
	ReasonNext       = "next"
	ReasonRetry      = "retry"
	ReasonCompensate = "compensate"
	ReasonRecovery   = "recovery"
	ReasonRedrive    = "redrive"
)

// FirstCommand is the command the order API writes with a new saga.
func FirstCommand(sagaID string) Command { return Command{SagaID: sagaID, Reason: ReasonCreated} }

// CommandFor returns the command that carries inst's current token.
func CommandFor(inst Instance, reason string) Command {
	return Command{SagaID: inst.ID, Reason: reason, State: inst.State, Step: inst.Step, Attempt: inst.Attempts, Epoch: inst.Data.Epoch}
}

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
		c.State = StatePending
	}
	if PhaseOf(c.State) == "" || c.Step < 0 || c.Attempt < 0 || c.Epoch < 0 {
		return Command{}, apperr.New(apperr.Invalid, "saga command has an impossible token %s/%d/%d epoch %d", c.State, c.Step, c.Attempt, c.Epoch)
	}
	return c, nil
}

// Encode returns the command's JSON body. A first command (no state, step
// 0, attempt 0, epoch 0) is written in its short form, saga_id and reason
// only, as the order API always wrote it.
func (c Command) Encode() []byte {
	var v any = c
	if c.State == "" && c.Step == 0 && c.Attempt == 0 && c.Epoch == 0 {
		v = struct {
			SagaID string `json:"saga_id"`
			Reason string `json:"reason"`
		}{c.SagaID, c.Reason}
	}
	b, err := json.Marshal(v)
	if err != nil { // a struct of strings and ints always encodes
		panic(err)
	}
	return b
}

// PhaseOf maps a saga state to its token phase: forward while pending or
// running, compensate while compensating, "" when finished.
func PhaseOf(st State) Direction {
	switch st {
	case StatePending, StateRunning:
		return Forward
	case StateCompensating:
		return Compensate
	}
	return ""
}

// Matches reports whether the command's token is inst's current one.
func (c Command) Matches(inst Instance) bool {
	p := PhaseOf(inst.State)
	return p != "" && p == PhaseOf(c.State) && c.Step == inst.Step && c.Attempt == inst.Attempts && c.Epoch == inst.Data.Epoch
}
