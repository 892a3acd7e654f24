package orchestrator

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/dlq"
	"ordersaga/shared/domain/outbox"
	"ordersaga/shared/domain/outboxwrite"
	"ordersaga/shared/domain/saga"
	"ordersaga/shared/domain/store"
	"ordersaga/shared/kit/config"
	"ordersaga/shared/kit/resilience"
	"ordersaga/shared/kit/validate"
)

// InboxConsumer is the advancer's consumer name in the inbox table.
const InboxConsumer = "sagaadvancer"

// Advancer carries sagas forward one step per saga.advance message (or
// several, chained). It is built once by NewAdvancer and is safe for
// concurrent use; nothing of its configuration changes after construction.
type Advancer struct {
	c   AdvancerConfig
	out outboxwrite.Writer
}

// AdvancerConfig configures an Advancer. Store, Inventory and Payments are
// required; every other zero field takes its default (the Default*
// constants; those that have a setting are config.Default()'s).
type AdvancerConfig struct {
	Store     store.Store
	Inventory Inventory
	Payments  Payments
	// Dispatcher, if set, publishes the rows each step writes right after
	// commit; without it the relay alone publishes them.
	Dispatcher outboxwrite.Dispatcher
	// Now is the clock (default time.Now).
	Now func() time.Time
	// NewID makes outbox and dead-letter ids (default: random 128-bit hex).
	NewID func() string
	// Backoff spaces a step's retries (full jitter; default
	// DefaultBackoffBase doubling to DefaultBackoffCap).
	Backoff resilience.Backoff
	// OutageBound is how long one step (or compensation) waits for a
	// dependency that is down — its call refused by the open circuit
	// breaker (or a full bulkhead), or failed with the breaker open after
	// it — without spending its attempts, counted from the step's first
	// such wait; each wait lasts the breaker's RetryIn. A participant
	// call's transient failure that would spend the step's last attempt
	// waits too, a backoff cap at a time, within the same bound
	// (SAGA_OUTAGE_BOUND, default DefaultOutageBound).
	OutageBound time.Duration
	// Lease keeps other advancers off a saga while one step runs; it must
	// exceed the longest step timeout (default DefaultLease; CheckLease).
	Lease time.Duration
	// InboxTTL is how long processed message ids are remembered (default
	// DefaultInboxTTL; keep it above the queue's retention).
	InboxTTL time.Duration
	// DispatchLease keeps the relay off rows being dispatched (default
	// DefaultDispatchLease; 0 without a Dispatcher).
	DispatchLease time.Duration
	// DispatchTimeout bounds the fast path (default DefaultDispatchTimeout).
	DispatchTimeout time.Duration
	// Shards is the number of outbox shards (default DefaultShards).
	Shards int
	// Owner names this advancer in leases (e.g. the function instance;
	// default InboxConsumer).
	Owner string
	// Steps is the executable step table (default CreateOrderSaga).
	Steps Steps
	// LoopLimit is the number of redrives after which a saga that fails
	// again is flagged for manual handling (dlq.Record; default
	// dlq.DefaultLoopLimit).
	LoopLimit int
	// Log is the logger (default slog.Default()).
	Log   *slog.Logger
	Hooks Hooks
	// MaxChainSteps bounds the steps one delivered message runs in place
	// (step chaining, see Handle; default DefaultMaxChainSteps; 1: one
	// step per message, no chaining).
	MaxChainSteps int
	// ChainBudget bounds the time one message keeps running chained steps
	// (default DefaultChainBudget); the context's deadline bounds it too.
	ChainBudget time.Duration
}

// Defaults of AdvancerConfig. Those with a setting are config.Default()'s.
const (
	DefaultLease           = config.DefaultSagaLease       // SAGA_LEASE
	DefaultBackoffBase     = config.DefaultSagaBackoffBase // SAGA_BACKOFF_BASE
	DefaultBackoffCap      = config.DefaultSagaBackoffCap  // SAGA_BACKOFF_CAP
	DefaultInboxTTL        = config.DefaultInboxTTL        // INBOX_TTL
	DefaultDispatchLease   = config.DefaultDispatchLease
	DefaultDispatchTimeout = config.DefaultDispatchTimeout
	DefaultShards          = config.DefaultShards // OUTBOX_SHARDS
	// DefaultMaxChainSteps bounds the steps one message runs (forward and
	// compensation of CreateOrderSaga together are 8).
	DefaultMaxChainSteps = 16
	// DefaultChainBudget is how long one message may keep running chained steps.
	DefaultChainBudget = 10 * time.Second
)

// NewAdvancer builds an Advancer from cfg with its defaults applied.
// Errors: Invalid when a required port is missing, a setting is negative
// or the backoff's cap is below its base (naming every such field), the
// lease does not exceed the longest step timeout, or a step of the table
// lacks an action.
func NewAdvancer(cfg AdvancerConfig) (*Advancer, error) {
	cfg.setDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	out, err := outboxwrite.New(outboxwrite.Config{Dispatcher: cfg.Dispatcher, Timeout: cfg.DispatchTimeout})
	if err != nil {
		return nil, err
	}
	return &Advancer{c: cfg, out: out}, nil
}

// Config returns the advancer's configuration with its defaults applied
// (to build another advancer like it).
func (a *Advancer) Config() AdvancerConfig { return a.c }

func (c *AdvancerConfig) setDefaults() {
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.NewID == nil {
		c.NewID = randomID
	}
	setDuration(&c.Backoff.Base, DefaultBackoffBase)
	setDuration(&c.Backoff.Cap, DefaultBackoffCap)
	setDuration(&c.OutageBound, DefaultOutageBound)
	setDuration(&c.Lease, DefaultLease)
	setDuration(&c.InboxTTL, DefaultInboxTTL)
	setDuration(&c.DispatchLease, DefaultDispatchLease)
	if c.Dispatcher == nil && c.DispatchLease > 0 {
		c.DispatchLease = 0 // nobody dispatches: the relay may take every row at once
	}
	setDuration(&c.DispatchTimeout, DefaultDispatchTimeout)
	if c.Shards == 0 {
		c.Shards = DefaultShards
	}
	if c.Owner == "" {
		c.Owner = InboxConsumer
	}
	if len(c.Steps) == 0 {
		c.Steps = CreateOrderSaga
	}
	if c.LoopLimit == 0 {
		c.LoopLimit = dlq.DefaultLoopLimit
	}
	if c.Log == nil {
		c.Log = slog.Default()
	}
	if c.MaxChainSteps == 0 {
		c.MaxChainSteps = DefaultMaxChainSteps
	}
	setDuration(&c.ChainBudget, DefaultChainBudget)
}

// validate refuses a configuration without its ports, with a negative
// setting or a backoff cap below its base (one apperr.Invalid naming every
// such field), then a lease that does not exceed the longest step timeout
// (CheckLease) or a bad step table. It runs on c with its defaults applied,
// which only fill zero fields.
func (c *AdvancerConfig) validate() error {
	var p validate.Problems
	p.Require(c.Store != nil, "Store")
	p.Require(c.Inventory != nil, "Inventory")
	p.Require(c.Payments != nil, "Payments")
	for _, d := range []struct {
		field string
		v     time.Duration
	}{{"Backoff.Base", c.Backoff.Base}, {"Backoff.Cap", c.Backoff.Cap}, {"OutageBound", c.OutageBound},
		{"Lease", c.Lease}, {"InboxTTL", c.InboxTTL}, {"DispatchLease", c.DispatchLease},
		{"DispatchTimeout", c.DispatchTimeout}, {"ChainBudget", c.ChainBudget}} {
		validate.NotNegative(&p, d.field, d.v)
	}
	validate.NotNegative(&p, "Shards", c.Shards)
	validate.NotNegative(&p, "LoopLimit", c.LoopLimit)
	validate.NotNegative(&p, "MaxChainSteps", c.MaxChainSteps)
	if c.Backoff.Base >= 0 && c.Backoff.Cap >= 0 && c.Backoff.Cap < c.Backoff.Base {
		p.Add("Backoff.Cap", "must be at least Backoff.Base (%s) (got %s)", c.Backoff.Base, c.Backoff.Cap)
	}
	if err := p.Err("orchestrator.NewAdvancer"); err != nil {
		return err
	}
	if err := CheckLease(c.Lease, c.Steps); err != nil {
		return err
	}
	return c.Steps.validate()
}

// validate refuses a step table with a step or compensation that has no
// action, or both kinds of action, and a retry policy with no attempts, a
// negative duration or a backoff cap below its base.
func (s Steps) validate() error {
	for _, st := range s {
		for _, act := range []Action{st.Do, st.Undo} {
			if (act.Call == nil) == (act.InTx == nil) {
				return apperr.New(apperr.Invalid, "orchestrator: step %q needs exactly one action (Call or InTx) each way", st.Name)
			}
		}
		rp := st.RetryPolicy
		switch {
		case rp.MaxAttempts < 1 || rp.MaxCompensationAttempts < 1:
			return apperr.New(apperr.Invalid, "orchestrator: step %q needs at least one attempt each way (MaxAttempts %d, MaxCompensationAttempts %d)", st.Name, rp.MaxAttempts, rp.MaxCompensationAttempts)
		case st.Timeout < 0 || rp.BackoffBase < 0 || rp.BackoffCap < 0 || rp.OutageBound < 0:
			return apperr.New(apperr.Invalid, "orchestrator: step %q has a negative timeout, backoff or outage bound", st.Name)
		case rp.BackoffBase > 0 && rp.BackoffCap > 0 && rp.BackoffCap < rp.BackoffBase:
			return apperr.New(apperr.Invalid, "orchestrator: step %q backoff cap %s is below its base %s", st.Name, rp.BackoffCap, rp.BackoffBase)
		}
	}
	return nil
}

// setDuration sets *d to def when it is zero (a negative one is left for
// validate to refuse).
func setDuration(d *time.Duration, def time.Duration) {
	if *d == 0 {
		*d = def
	}
}

// errLostLease and errDuplicate roll the save transaction back.
var (
	errLostLease = errors.New("orchestrator: saga lease lost")
	errDuplicate = errors.New("orchestrator: message already processed")
)

// Handle processes one saga.advance message: it takes the saga's lease, runs
// one step or compensation, and saves the result, the step log line, the
// inbox entry and the next command in one transaction; then it dispatches
// the new rows.
//
// Step chaining: when the next step is due at once (no backoff, no breaker
// wait) and the invocation's budget allows (MaxChainSteps, ChainBudget, the
// context's deadline), the saga keeps its lease and Handle runs the next
// step in place. A next step that touches only the store (an InTx action)
// is saved in the same transaction as the step before it (saveIn: no
// external call lies between the two saves, so nothing is lost by not
// committing in between); any other runs in its own transaction as above,
// with the command row the previous save wrote standing in for the message
// (its id goes into the step log, and the row is marked published in that
// step's transaction). That row is written leased to this advancer for one
// lease and not dispatched, so it reaches the queue only if the advancer
// dies: a crash between or during chained steps is resumed about one lease
// later, from the last saved step.
//
// A nil error means the message may be acknowledged, whatever the Status. An
// error (Transient or Internal: the store failed, or a simulated crash)
// means it must not be: the queue delivers it again after its visibility
// timeout and the step is re-run idempotently. Safe for concurrent use.
func (a *Advancer) Handle(ctx context.Context, m Message) (Result, error) {
	cmd, err := saga.DecodeCommand(m.Body)
	if err != nil {
		a.c.Log.Error("malformed saga command acknowledged", "outbox_event_id", m.EventID, "error", err)
		return a.done(Result{Status: StatusMalformed}), nil
	}
	start := time.Now()
	n := 1
	// carry(k): the invocation may run step n+k of this Handle in place.
	carry := func(k int) bool { return a.mayChain(ctx, start, n+k) }
	b, err := a.begin(ctx, cmd, m, carry)
	if err != nil {
		return b.res, err
	}
	inst, res, next := b.leased, b.res, b.saved.next
	switch {
	case res.Status == "":
		// Leased: the step calls a participant; it runs below.
	case res.Status == StatusProcessed && next != nil:
		n += 1 + next.folded
	default:
		return a.ack(res, cmd, m), nil
	}
	var consumed *outbox.Event
	var known Known
	for ; ; n++ {
		if next != nil {
			row := next.row
			inst, consumed, known = next.inst, &row, next.known
			m = Message{EventID: row.ID, Body: row.Payload, Attributes: row.Attributes()}
		}
		res, next, err = a.step(ctx, inst, known, m, consumed, carry)
		if err != nil || next == nil {
			if err != nil && consumed != nil && !errors.Is(err, ErrCrash) {
				// The delivered message was saved long ago; the row of the
				// failed chained step is released to the relay.
				a.c.Log.Warn("chained saga step failed; the relay resumes it", "saga_id", inst.ID, "error", err)
				return a.done(res), nil
			}
			if err != nil {
				return res, err
			}
			return a.done(res), nil
		}
		n += next.folded
	}
}

// ack logs a message acknowledged without work (res.Status other than
// processed) and counts it.
func (a *Advancer) ack(res Result, cmd saga.Command, m Message) Result {
	if res.Status != StatusProcessed {
		a.c.Log.Debug("saga command acknowledged", "saga_id", cmd.SagaID, "status", res.Status,
			"token", fmt.Sprintf("%s/%d/%d", cmd.State, cmd.Step, cmd.Attempt), "event_id", m.EventID)
	}
	return a.done(res)
}

// ErrCrash marks an error that stands for the death of the process (a
// crash a test or the chaos harness injects through a decorated step
// table, see InjectFaults): an action's Effect.Err or an InTx action's
// error wrapping it makes Handle return it at once, with nothing saved and
// nothing released (a lease taken stays taken until it expires).
var ErrCrash = errors.New("orchestrator: process crashed")

// step runs and saves one step of inst (the saga as leased by this
// advancer) for message m; see Handle.
func (a *Advancer) step(ctx context.Context, inst saga.Instance, known Known, m Message, consumed *outbox.Event, carry func(int) bool) (Result, *chainNext, error) {
	run := a.run(ctx, inst)
	if errors.Is(run.err, ErrCrash) {
		return Result{SagaID: inst.ID, Step: run.name, Direction: run.dir}, nil, run.err
	}
	s, err := a.save(ctx, inst, known, run, m, consumed, carry)
	switch {
	case errors.Is(err, ErrCrash):
		return s.res, nil, err
	case errors.Is(err, errLostLease):
		s.res.Status = StatusLostLease
		a.c.Log.Warn("saga lease lost before save; another advancer owns the step", "saga_id", inst.ID, "step", run.name)
		return s.res, nil, nil
	case errors.Is(err, errDuplicate):
		s.res.Status = StatusDuplicate
		a.releaseLease(ctx, inst, consumed)
		return s.res, nil, nil
	case err != nil:
		a.releaseLease(ctx, inst, consumed)
		return s.res, nil, err
	}
	a.saved(ctx, s, m)
	return s.res, s.next, nil
}

// saved observes a committed step and dispatches the rows it wrote.
func (a *Advancer) saved(ctx context.Context, s saved, m Message) {
	a.observeSaved(s, m)
	a.out.Dispatch(ctx, s.events)
}

// observeSaved observes the steps of a committed save, in order.
func (a *Advancer) observeSaved(s saved, m Message) {
	for _, f := range s.folded {
		a.observe(f.cur, f.run, f.d, m)
	}
	a.observe(s.cur, s.run, s.d, m)
}

// inTxRun prepares the step cmd names when its action runs inside the save
// transaction (create_order, reserve_inventory, confirm_order, cancel_order
// and confirm_order's compensation): such a step has no effect outside the
// store, so nothing of it runs before the transaction. ok is false for a
// step that calls a participant (begin leases the saga for it) and for an
// impossible step.
func (a *Advancer) inTxRun(ctx context.Context, cmd saga.Command) (stepRun, bool) {
	steps := a.c.Steps
	dir := saga.PhaseOf(cmd.State)
	if cmd.Step >= len(steps) || steps.action(cmd.Step, dir).InTx == nil {
		return stepRun{}, false
	}
	return a.run(ctx, saga.Instance{ID: cmd.SagaID, State: cmd.State, Step: cmd.Step}), true
}

// begun is how a message's first transaction (begin) left the saga: res
// says why the message is acknowledged without work (its Status), or, with
// Status processed, that its step ran and was saved (saved, with the step
// it left leased for chaining in saved.next); an empty Status means the
// saga was leased for a step that calls a participant (leased).
type begun struct {
	res    Result
	saved  saved
	leased saga.Instance
}

// begin is a message's first transaction. It checks the command's token
// against the saga (check) and then, in the same transaction, either
// runs and saves the step (saveIn), when its action runs inside a save
// transaction, or takes the saga's lease for a step that calls a
// participant, which step then runs and saves. A step saved here takes no
// lease transaction of its own, and cannot run twice: the lease is checked
// in the same serializable transaction that writes the step's outcome and
// the new token, so of two such transactions only one commits; the other
// fails, re-runs, and finds the token moved (stale) or the lease taken
// (busy). With carry the save takes the lease for the next step
// (chaining), exactly as a leased step's save.
func (a *Advancer) begin(ctx context.Context, cmd saga.Command, m Message, carry func(int) bool) (begun, error) {
	run, inTx := a.inTxRun(ctx, cmd)
	var now time.Time
	var id ids
	if inTx {
		now, id = a.now(), a.ids() // every run of the transaction saves the same step
	}
	var b begun
	err := a.c.Store.InTx(ctx, func(ctx context.Context, tx store.Tx) error {
		b = begun{}
		if !inTx {
			now = a.now() // the lease starts when this run of the transaction does
		}
		cur, res, err := a.check(ctx, tx, cmd, now)
		b.res = res
		if err != nil || res.Status != "" {
			return err
		}
		if inTx {
			b.saved, err = a.saveIn(ctx, tx, saveReq{cur: cur, run: run, m: m, carry: carry, id: id, now: now})
			b.res = b.saved.res
			return err
		}
		prev := cur.Version
		cur.Lease(a.c.Owner, now.Add(a.c.Lease), now)
		b.leased = cur
		return tx.UpdateSaga(ctx, cur, prev)
	})
	switch {
	case errors.Is(err, errDuplicate):
		return begun{res: Result{Status: StatusDuplicate, SagaID: cmd.SagaID}}, nil
	case errors.Is(err, errLostLease) || apperr.Is(err, apperr.Conflict):
		// Another advancer wrote the saga between our read and write.
		return begun{res: Result{Status: StatusBusy, SagaID: cmd.SagaID}}, nil
	case err != nil:
		return begun{res: Result{SagaID: cmd.SagaID, Step: run.name, Direction: run.dir}}, err
	}
	if b.res.Status == StatusProcessed {
		a.saved(ctx, b.saved, m)
	}
	return b, nil
}

// mayChain reports whether the invocation may run step n (1-based) of this
// Handle in place: within MaxChainSteps and ChainBudget, and with time left
// before the context's deadline for the longest step and its save.
func (a *Advancer) mayChain(ctx context.Context, start time.Time, n int) bool {
	if n >= a.c.MaxChainSteps || time.Since(start) >= a.c.ChainBudget {
		return false
	}
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) < a.c.Steps.Table().LongestTimeout()+2*time.Second {
		return false
	}
	return true
}

// check reads the saga cmd is for and reports, in res.Status, why the
// message is to be acknowledged without work: no such saga, finished,
// stale token, or leased by another advancer. An empty Status means cur
// may run its step.
func (a *Advancer) check(ctx context.Context, tx store.Tx, cmd saga.Command, now time.Time) (saga.Instance, Result, error) {
	res := Result{SagaID: cmd.SagaID}
	cur, err := tx.GetSaga(ctx, cmd.SagaID)
	switch {
	case apperr.Is(err, apperr.NotFound):
		res.Status = StatusUnknown
	case err != nil:
		return cur, res, err
	case cur.State.Finished():
		res.Status, res.State = StatusFinished, cur.State
	case !cmd.Matches(cur):
		res.Status, res.State = StatusStale, cur.State
	case cur.LeaseUntil.After(now):
		res.Status, res.State = StatusBusy, cur.State
	case cur.Step < 0 || cur.Step >= len(a.c.Steps):
		return cur, res, apperr.New(apperr.Internal, "saga %s is at step %d of %d", cur.ID, cur.Step, len(a.c.Steps))
	}
	return cur, res, nil
}

// releaseLease frees a lease we hold after a failed save (best effort), so
// the redelivered message need not wait for the lease to lapse. For a
// chained step it also frees the lease on the command row that stood in for
// the message, so the relay publishes it at once.
func (a *Advancer) releaseLease(ctx context.Context, inst saga.Instance, consumed *outbox.Event) {
	err := a.c.Store.InTx(ctx, func(ctx context.Context, tx store.Tx) error {
		cur, err := tx.GetSaga(ctx, inst.ID)
		if err != nil || cur.Version != inst.Version {
			return err
		}
		prev := cur.Version
		cur.ReleaseLease()
		if err := tx.UpdateSaga(ctx, cur, prev); err != nil {
			return err
		}
		if consumed == nil {
			return nil
		}
		e, err := tx.GetOutbox(ctx, consumed.ID)
		if err != nil || e.Status != outbox.StatusPending || e.LeaseOwner != a.c.Owner {
			return err
		}
		ev := e.Version
		e.LeaseOwner, e.LeaseUntil, e.Version = "", time.Time{}, ev+1
		return tx.UpdateOutbox(ctx, e, ev)
	})
	if err != nil {
		a.c.Log.Warn("could not release saga lease; it lapses on its own", "saga_id", inst.ID, "error", err)
	}
}

// observe logs a saved step and feeds the metric hooks.
func (a *Advancer) observe(inst saga.Instance, run stepRun, d decision, m Message) {
	h := a.c.Hooks
	if h.OnStep != nil {
		h.OnStep(run.name, run.dir, d.outcome)
	}
	if run.dir == saga.Compensate && h.OnCompensation != nil {
		h.OnCompensation(run.name, d.outcome)
	}
	if d.gaveUp && h.OnDeadLetter != nil {
		h.OnDeadLetter(d.kind)
	}
	if d.next.State.Finished() && h.OnFinished != nil {
		h.OnFinished(d.next.Type, d.next.State, d.next.FinishedAt.Sub(d.next.CreatedAt))
	}
	lvl := slog.LevelInfo
	if d.gaveUp || d.outcome == saga.OutcomeGaveUp {
		lvl = slog.LevelError
	} else if run.err != nil {
		lvl = slog.LevelWarn
	}
	attrs := []any{"saga_id", inst.ID, "order_id", inst.Data.OrderID, "idempotency_key", inst.CorrelationID,
		"step", run.name, "direction", run.dir, "outcome", d.outcome, "attempt", inst.Attempts + 1,
		"state", d.next.State, "duration_ms", run.duration.Milliseconds(), "outbox_event_id", m.EventID,
		"receive_count", m.ReceiveCount}
	if run.err != nil {
		attrs = append(attrs, "error", run.err)
	}
	a.c.Log.Log(context.Background(), lvl, "saga step", attrs...)
}

func (a *Advancer) done(r Result) Result {
	if a.c.Hooks.OnMessage != nil {
		a.c.Hooks.OnMessage(r.Status)
	}
	return r
}

func (a *Advancer) participants() Participants {
	return Participants{Inventory: a.c.Inventory, Payments: a.c.Payments}
}

func (a *Advancer) now() time.Time { return a.c.Now().UTC() }

// randomID returns 128 random bits in hex: the one NewID default.
func randomID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on supported platforms
	return hex.EncodeToString(b[:])
}
