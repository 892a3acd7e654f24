// Package orchestrator runs CreateOrderSaga: the Advancer carries a saga one
// step (or one compensation) further per saga.advance message, and Recovery
// resends stuck sagas, releases abandoned idempotency keys, expires inbox
// entries and reconciles orders with their finished sagas.
//
// Every saga.advance message carries a token — the saga's epoch, phase
// (forward or compensate), step index and attempt count when the message was
// written; a dead-letter redrive starts a new epoch.
// The advancer acts on a message only if the saga's current token equals the
// message's, and every transition changes the token, so a duplicate, a
// reordered message or a recovery resend can never run a step twice or
// fork a second chain of messages: a message whose token no longer matches
// is stale and is acknowledged. The saga's lease keeps two advancers off the
// same step at the same time; the participants are idempotent by saga id, so
// re-running a step whose save was lost (a crash) is harmless.
package orchestrator
