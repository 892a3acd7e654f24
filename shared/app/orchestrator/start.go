package orchestrator

import (
	"context"

	"ordersaga/shared/domain/order"
	"ordersaga/shared/domain/outbox"
	"ordersaga/shared/domain/saga"
	"ordersaga/shared/domain/store"
)

// Start runs a new saga's leading steps inside the transaction that
// creates it (the new order's): the steps whose action runs inside a save
// transaction (create_order, reserve_inventory; on a rejection the
// compensations that do too, cancel_order) run there, folded exactly as
// the advancer folds chained steps (saveIn), up to the first step that
// calls a participant, whose command is what the transaction writes
// instead of the saga's first one. No external call lies between the
// order's insert and those steps, so committing in between protects
// nothing. The saga log, step outcomes, order events and dead letters are
// those a delivered first command would produce; the metric hooks and the
// dispatch of the rows follow the commit (Committed).
//
// A Start is made by NewStart for one new saga, before its transaction:
// the ids its rows take are drawn once, so every run of the transaction
// (the store may run it again) writes the same ones. It is not safe for
// concurrent use.
type Start struct {
	a  *Advancer
	id ids
	m  Message
	s  *saved // what the last run of InTx recorded
}

// NewStart prepares the start of one new saga (see Start).
func (a *Advancer) NewStart() *Start { return &Start{a: a, id: a.ids()} }

// InTx stores inst, a new saga at its first step that tx has not stored,
// in tx, the transaction that inserted its order o, after running its
// leading in-transaction steps (see Start). first is the saga's first
// command row: it is not written; its id names the first step in the saga
// log and its metadata is the chain of every row written. The rows go
// through the advancer's outbox writer (in tx, or inserted for the relay).
//
// ok is false, with nothing written, when no step runs here: the step
// table's first step calls a participant, or MaxChainSteps allows one step
// per message. The caller then stores inst and first itself. err is a
// store failure (tx fails); a step's own failure is its outcome, as in
// Handle. Faults injected into the step table (InjectFaults) act here as
// in Handle: a crash injected after a step is a crash of tx (it rolls
// back, and the new order with it).
func (st *Start) InTx(ctx context.Context, tx store.Tx, inst saga.Instance, o order.Order, first outbox.Event) (ok bool, err error) {
	a := st.a
	st.s = nil
	if a.c.MaxChainSteps <= 1 || !a.folds(inst) {
		return false, nil
	}
	st.m = Message{EventID: first.ID, Body: first.Payload, Attributes: first.Attributes()}
	run := st.id.run(ctx, a, -1, inst)
	carry := func(k int) bool { return k+1 < a.c.MaxChainSteps }
	s, err := a.saveIn(ctx, tx, saveReq{cur: inst, known: Known{order: &o}, run: run, m: st.m, carry: carry, id: st.id, now: a.now(), fresh: true})
	if err != nil {
		return false, err
	}
	st.s = &s
	return true, nil
}

// Committed observes the steps the last run of InTx saved (log lines and
// the metric hooks, as for a handled message) and returns the rows it
// wrote for the caller to dispatch after commit (with its own, in one
// dispatch). Call it once, after that run's transaction committed.
func (st *Start) Committed() []outbox.Event {
	if st.s == nil {
		return nil
	}
	s := *st.s
	st.s = nil
	st.a.observeSaved(s, st.m)
	return s.events
}
