// Package orders holds the order use cases: create an order exactly once per
// idempotency key (order, saga, outbox rows and the stored response in one
// store transaction) and read an order with its saga history.
package orders

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"time"

	"github.com/google/uuid"

	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/idempotency"
	"ordersaga/shared/domain/order"
	"ordersaga/shared/domain/outbox"
	"ordersaga/shared/domain/outboxwrite"
	"ordersaga/shared/domain/saga"
	"ordersaga/shared/domain/store"
	"ordersaga/shared/kit/config"
	"ordersaga/shared/kit/validate"
	"ordersaga/shared/transport/identity"
)

// Defaults of a Config's zero fields (config's values).
const (
	DefaultDispatchTimeout = config.DefaultDispatchTimeout
	DefaultDispatchLease   = config.DefaultDispatchLease
	DefaultShards          = config.DefaultShards // OUTBOX_SHARDS
)

// Config configures a Service (New). Zero fields take the defaults named;
// negative ones are refused.
type Config struct {
	Store store.Store // required
	// Dispatcher is optional; without it the relay alone publishes.
	Dispatcher outboxwrite.Dispatcher
	// DispatchTimeout bounds the fast path (default DefaultDispatchTimeout).
	DispatchTimeout time.Duration
	// DispatchLease keeps the relay off rows the request is dispatching
	// itself (default DefaultDispatchLease).
	DispatchLease time.Duration
	// Shards is the number of outbox shards (default DefaultShards).
	Shards int
	// Now is the clock (default time.Now); the Service reads it in UTC.
	Now func() time.Time
	// NewID names orders, sagas and outbox rows (default a random UUID).
	NewID func() string
	Log   *slog.Logger // default slog.Default()
	// OnIdempotency observes each outcome: new, replayed, conflict, mismatch.
	OnIdempotency func(outcome string)
	// Steps names the saga's steps in the order view (the advancer's
	// table: orchestrator.CreateOrderSaga.Table()).
	Steps saga.Table
	// Starter, if set, runs the new saga's leading in-transaction steps
	// in the order's transaction (the advancer: wiring adapts it); without
	// it, or when it declines, the transaction writes the saga pending and
	// its first command, and the advancer runs every step.
	Starter SagaStarter
}

// SagaStarter starts a new order's saga inside the order's transaction.
// Safe for concurrent use.
type SagaStarter interface {
	// NewStart prepares the start of one saga: called with each draft of
	// a new order (before its transaction, or in it when the draft is made
	// again), so the start's ids follow the draft's and every run of the
	// transaction with that draft writes the same ones.
	NewStart() SagaStart
}

// SagaStart is the start of one new saga (SagaStarter.NewStart). Not
// safe for concurrent use.
type SagaStart interface {
	// InTx stores inst (new, pending at its first step) in tx, which has
	// inserted its order o and that order's order.created row: the steps
	// that touch only the store run first, as the advancer runs them
	// (create_order, reserve_inventory; on a rejection the compensations
	// that touch only the store), and the command of the first step that
	// calls a participant — or, for a saga they finished, its order's
	// events — is written in tx in place of first, the saga's first
	// command, which is not written. ok false: nothing was written, and
	// the caller stores inst and first. err: a store failure (tx fails).
	InTx(ctx context.Context, tx store.Tx, inst saga.Instance, o order.Order, first outbox.Event) (ok bool, err error)
	// Committed observes the steps of InTx's last run and returns the
	// rows it wrote, for the caller to dispatch; called once, after that
	// run's transaction committed.
	Committed() []outbox.Event
}

// Service implements the order use cases. It is built once by New and safe
// for concurrent use.
type Service struct {
	cfg Config
	out outboxwrite.Writer
}

// New returns a Service with cfg's zero fields set to their defaults. It
// fails (apperr.Invalid, naming every bad field) on what Config.Validate
// refuses.
func New(cfg Config) (*Service, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg.setDefaults()
	out, err := outboxwrite.New(outboxwrite.Config{Dispatcher: cfg.Dispatcher, Timeout: cfg.DispatchTimeout})
	if err != nil {
		return nil, err
	}
	return &Service{cfg: cfg, out: out}, nil
}

// Validate reports what New would refuse: a missing Store, a negative
// DispatchTimeout, DispatchLease or Shards. Errors are apperr.Invalid and
// name the fields.
func (c Config) Validate() error {
	var p validate.Problems
	p.Require(c.Store != nil, "Store")
	validate.NotNegative(&p, "DispatchTimeout", c.DispatchTimeout)
	validate.NotNegative(&p, "DispatchLease", c.DispatchLease)
	validate.NotNegative(&p, "Shards", c.Shards)
	return p.Err("orders.New")
}

// setDefaults gives each zero field of c its documented default.
func (c *Config) setDefaults() {
	c.DispatchTimeout = cmp.Or(c.DispatchTimeout, DefaultDispatchTimeout)
	c.DispatchLease = cmp.Or(c.DispatchLease, DefaultDispatchLease)
	c.Shards = cmp.Or(c.Shards, DefaultShards)
	c.Now = config.UTCClock(c.Now)
	if c.NewID == nil {
		c.NewID = uuid.NewString
	}
	c.Log = cmp.Or(c.Log, slog.Default())
	if c.OnIdempotency == nil {
		c.OnIdempotency = func(string) {}
	}
}

// CreateCommand is one POST /orders.
type CreateCommand struct {
	Caller    identity.Identity
	Key       string
	Request   order.Request
	RequestID string
}

// Response is the HTTP outcome stored with the key and replayed verbatim.
type Response struct {
	Status   int
	Body     []byte
	Location string
	Replayed bool
	OrderID  string
	SagaID   string // set for a new order (not for replays)
}

// routeFingerprint names the operation inside the fingerprint.
const routeFingerprint = "POST /orders"

// Create creates the order described by cmd, or replays the stored outcome of
// an earlier request with the same key. Errors: idempotency.ErrFingerprintMismatch,
// idempotency.ErrInProgress, Transient, Internal.
//
// Cost: one store transaction for a replay; for a new order one transaction
// writes the key (completed, with the response), the order, the saga and the
// outbox rows — with a Starter, after running the saga's leading steps that
// touch only the store (SagaStart.InTx: the stock is reserved, or the order
// cancelled, in this transaction; the stored response is still the order as
// created, PENDING) — and the fast path uses a second one to mark rows
// published, unless the Dispatcher is an outboxwrite.TxPublisher that sent
// them inside the first.
// On a store whose transactions claim keys (store.KeyClaimer: SQLite) the
// key is inserted first and read only when it exists.
func (s *Service) Create(ctx context.Context, cmd CreateCommand) (Response, error) {
	normalized, err := json.Marshal(cmd.Request)
	if err != nil {
		return Response{}, apperr.Wrap(apperr.Internal, err, "encode request")
	}
	fp := idempotency.Fingerprint("POST", routeFingerprint, normalized)

	// The new order is drafted before the transaction: on SQLite every
	// transaction waits for the one writer, and what the closure computes
	// there (ids, JSON, the rows' events) delays every request queued
	// behind it. The closure re-reads the clock and drafts again only when
	// the wait was long enough to matter (draftSlack).
	early, err := s.draft(cmd, fp, s.cfg.Now())
	if err != nil {
		return Response{}, err
	}
	var resp Response
	var events []outbox.Event
	var start SagaStart // the saga's start, when its steps ran in the transaction that committed
	for attempt := 0; ; attempt++ {
		events, start = nil, nil
		err = s.cfg.Store.InTx(ctx, func(ctx context.Context, tx store.Tx) error {
			var err error
			resp, events, start, err = s.createIn(ctx, tx, early, cmd, fp)
			return err
		})
		// A concurrent request claimed the key between our read and our
		// insert (the INSERT is the atomic claim). Read again: it is now a
		// replay (or still in progress). Bounded: the key exists from now on.
		if apperr.Is(err, apperr.Conflict) && !isIdemErr(err) && attempt < 2 {
			continue
		}
		break
	}
	s.observe(resp, err)
	if err != nil {
		return Response{}, err
	}
	if start != nil {
		events = append(events, start.Committed()...)
	}
	s.out.Dispatch(ctx, events)
	return resp, nil
}

// createIn is one run of Create's transaction: it claims the key (or
// decides a replay, a mismatch, a request still in progress, or a takeover
// of an expired key) and writes the new order, returning the response, the
// rows to dispatch after commit and the saga's start, if its steps ran.
func (s *Service) createIn(ctx context.Context, tx store.Tx, early draft, cmd CreateCommand, fp string) (Response, []outbox.Event, SagaStart, error) {
	// Read the clock inside the transaction: a request that waited for
	// the writer must not stamp a lease that has already lapsed.
	now := s.cfg.Now()
	if kc, ok := tx.(store.KeyClaimer); ok {
		// The insert is the claim and the check in one: a new key costs
		// no read. A key that exists is read and decided below.
		d, err := s.fresh(early, cmd, fp, now)
		if err != nil {
			return Response{}, nil, nil, err
		}
		claimed, err := kc.ClaimIdempotencyKey(ctx, d.rec)
		if err != nil {
			return Response{}, nil, nil, err
		}
		if claimed {
			events, start, err := s.writeRest(ctx, tx, d)
			return d.resp, events, start, err
		}
	}
	existing, err := tx.GetIdempotencyKey(ctx, cmd.Caller.Subject, cmd.Key)
	var prev *idempotency.Record
	switch {
	case err == nil:
		switch idempotency.Decide(existing, fp, now) {
		case idempotency.Replay:
			return Response{Status: existing.ResponseStatus, Body: existing.ResponseBody,
				Location: existing.Location, Replayed: true, OrderID: existing.ResourceID}, nil, nil, nil
		case idempotency.Mismatch:
			return Response{}, nil, nil, idempotency.ErrFingerprintMismatch
		case idempotency.InProgress:
			return Response{}, nil, nil, idempotency.ErrInProgress
		}
		prev = &existing // expired or abandoned: take it over conditionally
	case !apperr.Is(err, apperr.NotFound):
		return Response{}, nil, nil, err
	}
	return s.write(ctx, tx, early, cmd, fp, now, prev)
}

func isIdemErr(err error) bool {
	return errors.Is(err, idempotency.ErrFingerprintMismatch) || errors.Is(err, idempotency.ErrInProgress)
}

func (s *Service) observe(resp Response, err error) {
	switch {
	case errors.Is(err, idempotency.ErrFingerprintMismatch):
		s.cfg.OnIdempotency("mismatch")
	case errors.Is(err, idempotency.ErrInProgress):
		s.cfg.OnIdempotency("conflict")
	case err != nil:
	case resp.Replayed:
		s.cfg.OnIdempotency("replayed")
	default:
		s.cfg.OnIdempotency("new")
	}
}

// draft is a new order as its transaction writes it.
type draft struct {
	o      order.Order
	inst   saga.Instance
	cmd    CreateCommand
	rec    idempotency.Record // the completed key, with the response
	resp   Response
	now    time.Time
	events []outbox.Event // the outbox rows, before the in-transaction publish
	// start runs the saga's leading steps in the transaction (Starter);
	// prepared with the draft, so its ids follow the draft's and every run
	// of the transaction with this draft writes the same ones.
	start SagaStart
}

// draftSlack is how old a draft may be when its transaction starts: a
// draft made before a wait for the store longer than this is made again at
// the transaction's time. Its stamps then lag by at most this: the rows'
// dispatch lease (10 s by default) keeps at least nine tenths of its
// length, and the order's created_at is the request's arrival, not later.
const draftSlack = time.Second

// fresh returns early if it was drafted at most draftSlack before now (and
// not after it), otherwise a new draft at now.
func (s *Service) fresh(early draft, cmd CreateCommand, fp string, now time.Time) (draft, error) {
	if age := now.Sub(early.now); age >= 0 && age <= min(draftSlack, s.cfg.DispatchLease/10) {
		return early, nil
	}
	return s.draft(cmd, fp, now)
}

// draft builds the order cmd creates at now, its saga, its completed key
// and its outbox rows.
func (s *Service) draft(cmd CreateCommand, fp string, now time.Time) (draft, error) {
	o := order.New(s.cfg.NewID(), cmd.Caller.Subject, cmd.Key, cmd.Request, now)
	inst := NewSaga(s.cfg.NewID(), o, cmd.Key, now)
	o.SagaID = inst.ID
	body, err := order.EventPayload(o)
	if err != nil {
		return draft{}, err
	}
	resp := Response{Status: 201, Body: body, Location: "/orders/" + o.ID, OrderID: o.ID, SagaID: inst.ID}
	rec := idempotency.Record{
		Scope: cmd.Caller.Subject, Key: cmd.Key, Fingerprint: fp, Status: idempotency.StatusCompleted,
		ResponseStatus: resp.Status, ResponseBody: body, Location: resp.Location, ResourceID: o.ID,
		CreatedAt: now, ExpiresAt: now.Add(idempotency.TTL),
	}
	events, err := s.newEvents(o, inst, cmd, now)
	if err != nil {
		return draft{}, err
	}
	d := draft{o: o, inst: inst, cmd: cmd, rec: rec, resp: resp, now: now, events: events}
	if s.cfg.Starter != nil {
		d.start = s.cfg.Starter.NewStart()
	}
	return d, nil
}

// write stores the new order with its saga, outbox rows and completed key
// (taking over prev, an expired record of the key, when set).
func (s *Service) write(ctx context.Context, tx store.Tx, early draft, cmd CreateCommand, fp string, now time.Time, prev *idempotency.Record) (Response, []outbox.Event, SagaStart, error) {
	d, err := s.fresh(early, cmd, fp, now)
	if err != nil {
		return Response{}, nil, nil, err
	}
	if prev != nil {
		err = tx.ReplaceIdempotencyKey(ctx, d.rec, *prev)
	} else {
		err = tx.InsertIdempotencyKey(ctx, d.rec)
	}
	if err != nil {
		return Response{}, nil, nil, err
	}
	events, start, err := s.writeRest(ctx, tx, d)
	if err != nil {
		return Response{}, nil, nil, err
	}
	return d.resp, events, start, nil
}

// writeRest stores a drafted order whose key is written: the order, its
// saga and its outbox rows — or, for rows the Dispatcher sends in the
// transaction, their queue messages instead. With d.start the saga's
// leading steps run here too and the saga is stored as they leave it
// (start is d.start then: Committed returns the rows it wrote).
func (s *Service) writeRest(ctx context.Context, tx store.Tx, d draft) (events []outbox.Event, start SagaStart, err error) {
	if err := tx.InsertOrder(ctx, d.o); err != nil {
		return nil, nil, err
	}
	advance, rest := d.events[0], d.events[1:]
	if d.start != nil {
		// order.created first: an order event the steps write (a
		// cancellation) then finds it pending and queues behind it.
		if events, err = s.out.WriteNew(ctx, tx, rest); err != nil {
			return nil, nil, err
		}
		ok, err := d.start.InTx(ctx, tx, d.inst, d.o, advance)
		if err != nil {
			return nil, nil, err
		}
		if ok {
			return events, d.start, nil
		}
		if err := tx.InsertSaga(ctx, d.inst); err != nil {
			return nil, nil, err
		}
		more, err := s.out.WriteNew(ctx, tx, []outbox.Event{advance})
		return append(events, more...), nil, err
	}
	if err := tx.InsertSaga(ctx, d.inst); err != nil {
		return nil, nil, err
	}
	// The writer copies the rows: the draft outlives this run of the closure
	// (the store may run it again after a rollback), so nothing may mark them.
	events, err = s.out.WriteNew(ctx, tx, d.events)
	return events, nil, err
}

// NewSaga builds the pending CreateOrderSaga instance for o.
func NewSaga(id string, o order.Order, correlationID string, now time.Time) saga.Instance {
	items := make([]saga.DataItem, len(o.Items))
	for i, it := range o.Items {
		items[i] = saga.DataItem{SKU: it.SKU, Quantity: it.Quantity, UnitPriceMinor: it.UnitPriceMinor}
	}
	return saga.Instance{
		ID: id, Type: saga.TypeCreateOrder, State: saga.StatePending,
		Data:          saga.Data{OrderID: o.ID, CustomerID: o.CustomerID, Currency: o.Currency, TotalMinor: o.TotalMinor, Items: items},
		NextAttemptAt: now, CorrelationID: correlationID, CreatedAt: now, UpdatedAt: now, Version: 1,
	}
}

func (s *Service) newEvents(o order.Order, inst saga.Instance, cmd CreateCommand, now time.Time) ([]outbox.Event, error) {
	meta := outboxwrite.Chain(cmd.RequestID, cmd.Key, cmd.Key, o.ID, inst.ID)
	advance := outbox.SagaAdvance(s.cfg.NewID(), saga.FirstCommand(inst.ID), meta)
	created, err := outbox.OrderEvent(s.cfg.NewID(), outbox.TypeOrderCreated, o, meta)
	if err != nil {
		return nil, err
	}
	if s.out.Dispatches() {
		advance.LeaseOwner, advance.Lease = "api", s.cfg.DispatchLease
		created.LeaseOwner, created.Lease = "api", s.cfg.DispatchLease
	}
	return []outbox.Event{advance.Pending(s.cfg.Shards, now), created.Pending(s.cfg.Shards, now)}, nil
}
