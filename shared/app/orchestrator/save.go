package orchestrator

import (
	"context"
	"fmt"
	"time"

	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/order"
	"ordersaga/shared/domain/outbox"
	"ordersaga/shared/domain/saga"
	"ordersaga/shared/domain/store"
	"ordersaga/shared/kit/text"
)

// saved is what a step's save transaction recorded.
type saved struct {
	cur    saga.Instance // the saga the (last) step ran on
	res    Result
	run    stepRun // with an InTx action's outcome (only known in the transaction)
	d      decision
	events []outbox.Event // rows to dispatch after commit
	next   *chainNext     // the step left leased to this advancer (chaining)
	// folded are the steps saved in this transaction before the last one
	// (see saveIn), in order.
	folded []foldedStep
}

// foldedStep is a step saved in the transaction of the step after it.
type foldedStep struct {
	cur saga.Instance
	run stepRun
	d   decision
}

// save records one step outcome of inst (the saga as this advancer last
// wrote it: its lease, or the previous chained step's save) in one
// transaction (saveIn). A concurrent writer of the saga fails it with
// errLostLease.
func (a *Advancer) save(ctx context.Context, inst saga.Instance, known Known, run stepRun, m Message, consumed *outbox.Event, carry func(int) bool) (saved, error) {
	now := a.now()
	id := a.ids()
	var s saved
	err := a.c.Store.InTx(ctx, func(ctx context.Context, tx store.Tx) error {
		var err error
		s, err = a.saveIn(ctx, tx, saveReq{cur: inst, known: known, run: run, m: m, consumed: consumed, carry: carry, id: id, now: now})
		return err
	})
	if apperr.Is(err, apperr.Conflict) && a.moved(ctx, inst) {
		// Another write conflicted first (an order the new lease holder
		// changed): the cause is still the lost lease.
		err = errLostLease
	}
	if err != nil {
		return saved{cur: inst, res: Result{SagaID: inst.ID, Step: run.name, Direction: run.dir}, run: run}, err
	}
	return s, nil
}

// ids are generated before the save transaction, which may run more than
// once: every run of it writes the same ids. extra holds the ids of
// folded steps and of their order events, made on first use; runs holds
// the runs of folded steps (Advancer.run), prepared on
// first use, so every run of the transaction folds the same steps.
type ids struct {
	advance, orderEvent, deadLetter string
	extra                           *[]string
	newID                           func() string
	runs                            map[string]stepRun
}

func (a *Advancer) ids() ids {
	return ids{advance: a.c.NewID(), orderEvent: a.c.NewID(), deadLetter: a.c.NewID(), extra: new([]string), newID: a.c.NewID,
		runs: map[string]stepRun{}}
}

// run is a.run(ctx, inst) for the k-th folded step, prepared once.
func (i ids) run(ctx context.Context, a *Advancer, k int, inst saga.Instance) stepRun {
	key := fmt.Sprintf("%d/%s/%d/%d", k, inst.State, inst.Step, inst.Attempts)
	r, ok := i.runs[key]
	if !ok {
		r = a.run(ctx, inst)
		i.runs[key] = r
	}
	return r
}

// nth is the k-th extra id (0-based), the same on every run of the transaction.
func (i ids) nth(k int) string {
	for len(*i.extra) <= k {
		*i.extra = append(*i.extra, i.newID())
	}
	return (*i.extra)[k]
}

// folds reports whether the step next (a saga left leased to this
// advancer, due now) is saved in the transaction of the step before it:
// its action runs inside a save transaction (it touches only the store),
// so no external call lies between the two saves.
func (a *Advancer) folds(next saga.Instance) bool {
	if next.Step < 0 || next.Step >= len(a.c.Steps) {
		return false
	}
	dir := saga.Forward
	if next.State == saga.StateCompensating {
		dir = saga.Compensate
	}
	return a.c.Steps.action(next.Step, dir).InTx != nil
}

// saveReq is what saveIn records: the saga as last seen (cur), the rows
// earlier chained steps committed (known), the prepared step run, the
// message it ran for (m) and the command row consumed in place (consumed),
// the chaining budget (carry), the ids and time of every run of the
// transaction (id, now), and whether cur is a new saga (fresh). See saveIn.
type saveReq struct {
	cur      saga.Instance
	known    Known
	run      stepRun
	m        Message
	consumed *outbox.Event
	carry    func(int) bool
	id       ids
	now      time.Time
	fresh    bool
}

// saveIn records one step outcome in tx: it runs an InTx action, applies
// the transition, claims a delivered message in the inbox, appends the step log,
// writes the next command and any order event, and on give-up fails the
// order and writes a dead letter.
//
// cur is the saga as this transaction or this invocation last saw it: it
// is not read again. The version guard of UpdateSaga detects any other
// writer (errLostLease) and rolls everything back. known holds the rows
// earlier chained steps committed (see Known); the rows this step leaves
// go to the next step with s.next.
//
// consumed, when set, is the command row the step ran for in place (step
// chaining: m was never delivered): it is marked published here, in the
// step's own transaction, unless the relay already published it, and it
// takes no inbox entry (the token this save moves makes any copy stale).
// With carry(k) true (the invocation may run k more steps after this one), a
// saga whose next step is due at once keeps its lease. When that next step
// runs inside a save transaction too (folds), it runs here, in the same
// transaction, and so on: the saga row, the inbox entry and the next
// command are written once, for the last step, with one step-log line per
// step (a folded step's line names the id of the command it stood for,
// which is never written) and each step's order event. Otherwise the next
// command is written leased to this advancer and not dispatched: next is
// returned, and the caller runs that step in place. If the caller dies,
// the row is published when its lease lapses, so the saga resumes.
//
// fresh: cur is a new saga that tx has not stored (Start.InTx, the
// transaction of its order). Steps fold as above (folds), but the
// saga keeps no lease: after the last folded step the saga is inserted,
// and the next command is written for the queue like any unchained one.
// No message was delivered, so there is no inbox entry; m is the saga's
// first command, never written, which the first step's log line names.
func (a *Advancer) saveIn(ctx context.Context, tx store.Tx, q saveReq) (saved, error) {
	f, err := a.fold(ctx, tx, q)
	if err != nil {
		return f.s, err
	}
	return a.record(ctx, tx, q, f)
}

// folding is where fold left a save: the steps run (s, with the last one's
// saga, run and decision d), the order changes they made, whether the last
// one keeps the lease for a chained step, and its step-log sequence.
type folding struct {
	s       saved
	d       decision
	changes []*orderChange
	known   Known
	logMsg  Message // the message the last step's log line names
	chained bool
	seq     int
}

// fold runs the step of q (its InTx action in tx) and decides its outcome;
// while the next step is chained and runs inside a save transaction too
// (folds), it logs the step and runs the next one here, in tx (see
// saveIn). Every step's order change and dead letter is written as it is
// decided; the saga row, the inbox entry, the last log line and the
// commands are left to record.
func (a *Advancer) fold(ctx context.Context, tx store.Tx, q saveReq) (folding, error) {
	f := folding{s: saved{cur: q.cur, run: q.run}, known: q.known, logMsg: q.m} // afresh on every run of the transaction
	now := q.now
	for k := 0; ; k++ {
		r := &f.s.run
		var change *orderChange
		var err error
		if r.inTx != nil {
			if change, err = runInTx(ctx, tx, a.participants(), &f.known, f.s.cur, r, now); err != nil {
				return f, err
			}
		}
		d := decide(f.s.cur, a.c.Steps.Table(), *r, now, retryPolicy{backoff: a.c.Backoff, outage: a.c.OutageBound})
		f.chained = q.carry(k) && d.cmd != nil && !d.next.NextAttemptAt.After(now) &&
			(!q.fresh || (!d.gaveUp && a.folds(d.next)))
		if f.chained {
			// The save keeps the lease for the next step: no lease
			// transaction per chained step.
			d.next.KeepLease(a.c.Owner, now.Add(a.c.Lease))
		}
		if d.gaveUp {
			if change, err = failOrder(ctx, tx, d.next, "compensation failed: "+d.next.LastError, now); err != nil {
				return f, err
			}
			f.known.order = nil
			if err := deadLetter(ctx, tx, d.next, d.kind, chain(f.s.cur, q.m.Attributes), q.id.deadLetter, a.c.LoopLimit, now); err != nil {
				return f, err
			}
		}
		if f.seq, err = logSeq(ctx, tx, f.s.cur); err != nil {
			return f, err
		}
		d.next.Data.LogSeq = f.seq
		f.d = d
		if change != nil {
			f.changes = append(f.changes, change)
		}
		if !f.chained || d.gaveUp || !a.folds(d.next) {
			return f, nil
		}
		if err := appendLog(ctx, tx, f.s.cur, *r, d, f.logMsg, f.seq, now); err != nil {
			return f, err
		}
		f.s.folded = append(f.s.folded, foldedStep{cur: f.s.cur, run: *r, d: d})
		f.logMsg = Message{EventID: q.id.nth(k)}
		f.s.cur, f.s.run = d.next, q.id.run(ctx, a, k, d.next)
	}
}

// record writes what fold decided for the last step: the saga row
// (inserted for a fresh saga, else updated against the version it was
// read at), the inbox entry of a delivered message, the step-log line, the
// next command and the order events (through the outbox writer), and the
// consumed command row; it leaves the chained step in s.next.
func (a *Advancer) record(ctx context.Context, tx store.Tx, q saveReq, f folding) (saved, error) {
	s, d, now := f.s, f.d, q.now
	cur, r := s.cur, &s.run
	meta := chain(cur, q.m.Attributes)
	s.d = d
	if q.fresh {
		if err := tx.InsertSaga(ctx, d.next); err != nil {
			return s, err
		}
	} else if err := tx.UpdateSaga(ctx, d.next, q.cur.Version); err != nil {
		if apperr.Is(err, apperr.Conflict) || apperr.Is(err, apperr.NotFound) {
			return s, errLostLease
		}
		return s, err
	}
	if q.consumed == nil && !q.fresh {
		// A delivered message is claimed in the inbox. A command row run in
		// place needs no entry: the save moves the saga's token, so a copy
		// of that row the relay sends later is stale (and one handled
		// before this save commits moves the version this save expects).
		if err := tx.InsertInbox(ctx, InboxConsumer, q.m.EventID, now, now.Add(a.c.InboxTTL)); err != nil {
			if apperr.Is(err, apperr.Conflict) {
				return s, errDuplicate
			}
			return s, err
		}
	}
	if err := appendLog(ctx, tx, cur, *r, d, f.logMsg, f.seq, now); err != nil {
		return s, err
	}
	events, cmdRow, err := a.rows(q, f, meta)
	if err != nil {
		return s, err
	}
	carried := ""
	if f.chained {
		carried = cmdRow.ID
	}
	if events, err = a.out.Write(ctx, tx, events, carried); err != nil {
		return s, err
	}
	if q.consumed != nil {
		// Last, after the reads of the outbox (Write), so the
		// deferred write goes with the commit.
		if err := markConsumed(ctx, tx, *q.consumed, now); err != nil {
			return s, err
		}
	}
	if f.chained {
		events = without(events, cmdRow.ID)
		s.next = &chainNext{inst: d.next, row: cmdRow, known: f.known, folded: len(s.folded)}
	}
	s.events = events
	s.res = Result{Status: StatusProcessed, SagaID: cur.ID, Step: r.name, Direction: r.dir, Outcome: d.outcome, State: d.next.State}
	return s, nil
}

// rows builds the outbox rows of a save: the next command, if any
// (leased to this advancer and not dispatched when chained: it is
// published only if this advancer dies), and one event per order change.
func (a *Advancer) rows(q saveReq, f folding, meta map[string]string) ([]outbox.Event, outbox.Event, error) {
	var events []outbox.Event
	var cmdRow outbox.Event
	d := f.d
	if d.cmd != nil {
		lease := a.c.DispatchLease
		if f.chained {
			lease = a.c.Lease
		}
		cmdRow = newAdvanceEvent(q.id.advance, a.c.Shards, *d.cmd, meta, d.next.NextAttemptAt, q.now, a.c.Owner, lease)
		events = append(events, cmdRow)
	}
	for i, change := range f.changes {
		eid := q.id.orderEvent
		if i > 0 {
			eid = q.id.nth(len(f.s.folded) + i - 1)
		}
		e, err := newOrderEvent(eid, a.c.Shards, change.eventType, change.order, meta, q.now, a.c.Owner, a.c.DispatchLease)
		if err != nil {
			return nil, outbox.Event{}, err
		}
		events = append(events, e)
	}
	return events, cmdRow, nil
}

// chainNext is the step a save left leased to this advancer: the saga as
// saved, the command row written for it, and the rows known so far.
type chainNext struct {
	inst  saga.Instance
	row   outbox.Event
	known Known // rows the saved steps committed (see Known)
	// folded is the number of steps saved with the last one (saveIn).
	folded int
}

// markConsumed marks a command row that was consumed in place as published.
// row is the row as this advancer wrote it, so the update needs no read: its
// version guard finds a row the relay took meanwhile (then its delivery
// finds the token moved and is acknowledged as stale or duplicate), and
// that row is left as it is.
func markConsumed(ctx context.Context, tx store.Tx, row outbox.Event, now time.Time) error {
	e := row
	e.Status, e.PublishedAt, e.LeaseOwner, e.LeaseUntil, e.Version = outbox.StatusPublished, now, "", time.Time{}, row.Version+1
	err := tx.UpdateOutbox(ctx, e, row.Version)
	if apperr.Is(err, apperr.Conflict) || apperr.Is(err, apperr.NotFound) {
		return nil
	}
	return err
}

// moved reports whether the saga's version is no longer inst's (read in a
// transaction of its own; false when it cannot tell).
func (a *Advancer) moved(ctx context.Context, inst saga.Instance) bool {
	var v int64
	err := a.c.Store.View(ctx, func(ctx context.Context, tx store.Tx) error {
		cur, err := tx.GetSaga(ctx, inst.ID)
		v = cur.Version
		return err
	})
	return err == nil && v != inst.Version
}

func without(events []outbox.Event, id string) []outbox.Event {
	out := events[:0:0]
	for _, e := range events {
		if e.ID != id {
			out = append(out, e)
		}
	}
	return out
}

// logSeq is the seq of cur's next step-log line. It is kept in the saga
// row (Data.LogSeq), so the log is not read; a saga that has not run a step
// yet (forward, step 0, attempt 0) has none. Only a saga saved before
// LogSeq existed has its log read, once.
func logSeq(ctx context.Context, tx store.Tx, cur saga.Instance) (int, error) {
	if cur.Data.LogSeq > 0 || (saga.PhaseOf(cur.State) == saga.Forward && cur.Step == 0 && cur.Attempts == 0) {
		return cur.Data.LogSeq + 1, nil
	}
	prior, err := tx.ListSagaLog(ctx, cur.ID)
	if err != nil {
		return 0, err
	}
	return len(prior) + 1, nil
}

// appendLog writes the step-log line seq of this execution.
func appendLog(ctx context.Context, tx store.Tx, cur saga.Instance, r stepRun, d decision, m Message, seq int, now time.Time) error {
	e := saga.LogEntry{SagaID: cur.ID, Seq: seq, Step: r.name, Direction: r.dir, Outcome: d.outcome,
		Attempt: cur.Attempts + 1, StateAfter: d.next.State, DurationMS: r.duration.Milliseconds(), At: now, MessageID: m.EventID}
	if r.err != nil {
		e.Error = text.Cut(r.err.Error(), maxErrorText)
	}
	return tx.AppendSagaLog(ctx, e)
}

// failOrder marks the order FAILED after its saga gave up (a compensation
// failed for good, or recovery could not make the saga advance).
func failOrder(ctx context.Context, tx store.Tx, inst saga.Instance, reason string, now time.Time) (*orderChange, error) {
	o, err := tx.GetOrder(ctx, inst.Data.OrderID)
	if apperr.Is(err, apperr.NotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	prev := o.Version
	if !o.Transition(order.StatusFailed, reason, now) {
		return nil, nil
	}
	if err := tx.UpdateOrder(ctx, o, prev); err != nil {
		return nil, err
	}
	return &orderChange{order: o, eventType: outbox.TypeOrderFailed}, nil
}
