// Package stock is the inventory participant of CreateOrderSaga: it reserves
// and releases stock over the store port, one local transaction per call.
//
// A reservation is keyed by the saga id, so every operation is idempotent:
// a repeated Reserve returns the recorded outcome, a repeated Release changes
// nothing, and a Release that arrives before (or instead of) the Reserve
// leaves a Released marker so a late Reserve is refused rather than
// reserving stock after the saga was compensated. Available stock never goes
// negative: a reservation either takes every line or none. Confirming the
// order settles the reservation (Settle, inside the confirm transaction):
// its units move from Reserved to Sold, so Reserved means "held by orders in
// flight" and available + reserved + sold changes only by operator action.
//
// A hot SKU can be spread over stock sub-rows (SetShards; shards.go): a
// reservation then writes the sub-row its saga id hashes to instead of the
// SKU's one stock row, and records the sub-rows it took from, so its
// release or settlement goes back to them.
package stock

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/google/uuid"

	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/inventory"
	"ordersaga/shared/domain/store"
	"ordersaga/shared/kit/config"
	"ordersaga/shared/kit/validate"
)

// Config configures a Service (New).
type Config struct {
	Store store.Store // required
	// Now is the clock (default time.Now); the Service reads it in UTC.
	Now func() time.Time
	// NewID names audit records of operator changes (default a random UUID).
	NewID func() string
}

// Service is the stock participant. It is built once by New and safe for
// concurrent use (the store serialises conflicting transactions and each
// call re-reads what it decides on).
type Service struct {
	cfg Config
}

// New returns a Service with cfg's nil fields set to their defaults. It
// fails (apperr.Invalid, naming the field; see Config.Validate) without a
// store.
func New(cfg Config) (*Service, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg.setDefaults()
	return &Service{cfg: cfg}, nil
}

// Validate reports what New would refuse: a Config without a Store. Errors
// are apperr.Invalid and name the field.
func (c Config) Validate() error {
	var p validate.Problems
	p.Require(c.Store != nil, "Store")
	return p.Err("stock.New")
}

// setDefaults gives each zero field of c its documented default.
func (c *Config) setDefaults() {
	c.Now = config.UTCClock(c.Now)
	if c.NewID == nil {
		c.NewID = uuid.NewString
	}
}

// maxConflictRetries bounds re-runs after a concurrent insert of the same
// reservation (the second run reads the winner's row and returns its outcome).
const maxConflictRetries = 3

// Reserve reserves lines for the saga sagaID in one transaction.
//
// If a reservation for sagaID exists its outcome is returned again: Reserved
// or Settled → nil; Rejected → Rejected with the recorded reason; Released → Rejected
// ("already released"). Otherwise every SKU's stock is checked (a missing SKU
// has no stock): if all suffice, Available is decremented and Reserved
// incremented (on the sub-rows a sharded SKU's units are taken from, named
// in the reservation's Takes), and a Reserved reservation is stored; if any
// falls short, a
// Rejected reservation ("out of stock: <sku>") is stored and Rejected is
// returned, and no stock changes.
//
// Errors: Invalid (empty saga id or lines, a quantity < 1), Rejected,
// Transient and Internal from the store. Idempotent; safe for concurrent use.
func (s *Service) Reserve(ctx context.Context, sagaID, orderID string, lines []inventory.Line) error {
	need, err := aggregate(sagaID, lines)
	if err != nil {
		return err
	}
	var outcome error
	err = s.retryConflict(ctx, func(ctx context.Context, tx store.Tx) error {
		_, o, err := reserve(ctx, tx, sagaID, orderID, need, s.cfg.Now())
		outcome = o
		return err
	})
	if err != nil {
		return err
	}
	return outcome
}

// ReserveIn is Reserve inside the caller's transaction tx (the saga step's
// save transaction: the reservation commits, or rolls back, with the saga's
// new state), with the same outcomes, recorded per saga id. It returns the
// reservation as stored in tx (when there is one), its outcome as outcome
// (nil, Rejected, Invalid) and a store failure as err (the caller's
// transaction fails).
func (s *Service) ReserveIn(ctx context.Context, tx store.Tx, sagaID, orderID string, lines []inventory.Line, now time.Time) (r inventory.Reservation, outcome, err error) {
	need, err := aggregate(sagaID, lines)
	if err != nil {
		return inventory.Reservation{}, err, nil
	}
	return reserve(ctx, tx, sagaID, orderID, need, now.UTC())
}

// reserve is Reserve's transaction body (see Reserve and ReserveIn).
func reserve(ctx context.Context, tx store.Tx, sagaID, orderID string, need map[string]int64, now time.Time) (inventory.Reservation, error, error) {
	r, err := tx.GetReservation(ctx, sagaID)
	if err == nil {
		return r, reservationOutcome(r), nil
	}
	if !apperr.Is(err, apperr.NotFound) {
		return r, nil, err
	}
	plan, short, err := planAll(ctx, tx, sagaID, need)
	if err != nil {
		return r, nil, err
	}
	r = inventory.Reservation{ID: sagaID, OrderID: orderID, Lines: normalized(need),
		Status: inventory.Reserved, CreatedAt: now, UpdatedAt: now, Version: 1}
	if short != "" {
		r.Status, r.Reason = inventory.Rejected, "out of stock: "+short
		return r, apperr.New(apperr.Rejected, "%s", r.Reason), tx.InsertReservation(ctx, r)
	}
	if r.Takes, err = applyReserve(ctx, tx, plan, now); err != nil {
		return r, nil, err
	}
	return r, nil, tx.InsertReservation(ctx, r)
}

// Release gives back the stock reserved for sagaID and reports whether the
// saga had stock reserved (so a repeat after a lost answer reports the same).
// A Reserved reservation is released (its stock returned, status Released);
// a Released one is left alone (true); a Rejected one is left alone (false);
// a missing one is recorded as Released with no lines (false), so a Reserve
// arriving later is refused.
//
// Errors: Invalid (empty saga id), Transient and Internal from the store.
// Idempotent; safe for concurrent use.
func (s *Service) Release(ctx context.Context, sagaID string) (bool, error) {
	if sagaID == "" {
		return false, apperr.New(apperr.Invalid, "stock: saga id is required")
	}
	var released bool
	err := s.retryConflict(ctx, func(ctx context.Context, tx store.Tx) error {
		released = false
		now := s.cfg.Now()
		r, err := tx.GetReservation(ctx, sagaID)
		if apperr.Is(err, apperr.NotFound) {
			return tx.InsertReservation(ctx, inventory.Reservation{ID: sagaID, Status: inventory.Released,
				Reason: "released before any reservation", CreatedAt: now, UpdatedAt: now, Version: 1})
		}
		if err != nil {
			return err
		}
		if r.Status != inventory.Reserved {
			// Released earlier by this saga (a repeat after a lost answer)
			// still counts as released; the marker and a rejection do not.
			// Settled (sold to a confirmed order) is never given back.
			released = r.Status == inventory.Released && len(r.Lines) > 0
			return nil
		}
		for _, l := range r.Lines {
			takes, onRow, err := lineSplit(r, l)
			if err != nil {
				return err
			}
			if err := releaseTakes(ctx, tx, r, takes, now); err != nil {
				return err
			}
			if onRow == 0 {
				continue
			}
			st, err := tx.GetStock(ctx, l.SKU)
			if err != nil {
				// The reservation took this stock: its row must exist.
				return fmt.Errorf("stock: release %s: %w", l.SKU, err)
			}
			prev := st.Version
			st.Available += onRow
			st.Reserved = max(st.Reserved-onRow, 0)
			st.UpdatedAt, st.Version = now, prev+1
			if err := tx.PutStock(ctx, st, prev); err != nil {
				return err
			}
		}
		prev := r.Version
		r.Status, r.UpdatedAt, r.Version = inventory.Released, now, prev+1
		if err := tx.UpdateReservation(ctx, r, prev); err != nil {
			return err
		}
		released = true
		return nil
	})
	return released, err
}

// Settle moves the units reserved for sagaID from Reserved to Sold, inside
// the caller's transaction tx (the confirm step's: the order is confirmed
// and its stock sold atomically). A Settled reservation is left alone (a
// repeat); a missing one has nothing to settle. A Released or Rejected
// reservation cannot be sold: Invalid. A stock row whose Reserved is short
// of the reservation would go negative, so it is refused (Internal) and
// the transaction fails rather than count units twice.
func Settle(ctx context.Context, tx store.Tx, sagaID string, now time.Time) error {
	r, err := tx.GetReservation(ctx, sagaID)
	if apperr.Is(err, apperr.NotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	return SettleKnown(ctx, tx, r, now)
}

// SettleIn is Settle as the saga's inventory port: with known (the
// reservation an earlier transaction stored for sagaID) it is SettleKnown,
// without it Settle.
func (s *Service) SettleIn(ctx context.Context, tx store.Tx, sagaID string, known *inventory.Reservation, now time.Time) error {
	if known != nil && known.ID == sagaID {
		return SettleKnown(ctx, tx, *known, now)
	}
	return Settle(ctx, tx, sagaID, now)
}

// SettleKnown is Settle for a reservation r the caller already has (as an
// earlier committed transaction of ReserveIn stored it), so it is not read
// again: its update expects r.Version, so if the reservation changed since,
// the update fails with Conflict and tx with it.
func SettleKnown(ctx context.Context, tx store.Tx, r inventory.Reservation, now time.Time) error {
	sagaID := r.ID
	switch r.Status {
	case inventory.Settled:
		return nil
	case inventory.Reserved:
	default:
		return apperr.New(apperr.Invalid, "stock: reservation %s is %s; it cannot be sold", sagaID, r.Status)
	}
	for _, l := range r.Lines {
		takes, onRow, err := lineSplit(r, l)
		if err != nil {
			return err
		}
		if err := settleTakes(ctx, tx, r, takes, now); err != nil {
			return err
		}
		if onRow == 0 {
			continue
		}
		st, err := tx.GetStock(ctx, l.SKU)
		if err != nil {
			return fmt.Errorf("stock: settle %s: %w", l.SKU, err)
		}
		if st.Reserved < onRow {
			return apperr.New(apperr.Internal, "stock: %s has %d reserved, fewer than the %d reservation %s holds",
				l.SKU, st.Reserved, onRow, sagaID)
		}
		prev := st.Version
		st.Reserved -= onRow
		st.Sold += onRow
		st.UpdatedAt, st.Version = now, prev+1
		if err := tx.PutStock(ctx, st, prev); err != nil {
			return err
		}
	}
	prev := r.Version
	r.Status, r.UpdatedAt, r.Version = inventory.Settled, now, prev+1
	return tx.UpdateReservation(ctx, r, prev)
}

// Seed sets the available stock of each SKU that has no stock row yet and
// leaves existing rows alone (demo data; idempotent). Quantities must be >= 0.
func (s *Service) Seed(ctx context.Context, stock map[string]int64) error {
	skus := make([]string, 0, len(stock))
	for sku, q := range stock {
		if sku == "" || q < 0 {
			return apperr.New(apperr.Invalid, "stock: bad seed entry %q=%d", sku, q)
		}
		skus = append(skus, sku)
	}
	sort.Strings(skus)
	return s.retryConflict(ctx, func(ctx context.Context, tx store.Tx) error {
		now := s.cfg.Now()
		for _, sku := range skus {
			_, err := tx.GetStock(ctx, sku)
			if err == nil {
				continue
			}
			if !apperr.Is(err, apperr.NotFound) {
				return err
			}
			if err := tx.PutStock(ctx, inventory.Stock{SKU: sku, Available: stock[sku], UpdatedAt: now, Version: 1}, 0); err != nil {
				return err
			}
		}
		return nil
	})
}

// Get returns one SKU's stock, its sub-rows summed (zero stock for an
// unknown SKU).
func (s *Service) Get(ctx context.Context, sku string) (inventory.Stock, error) {
	var st inventory.Stock
	err := s.cfg.Store.View(ctx, func(ctx context.Context, tx store.Tx) error {
		var err error
		st, err = ViewIn(ctx, tx, sku)
		if apperr.Is(err, apperr.NotFound) {
			st, err = inventory.Stock{SKU: sku}, nil
		}
		return err
	})
	return st, err
}

// retryConflict runs fn in a transaction and re-runs it when a concurrent
// writer inserted the same row first (Conflict): the re-run reads that row.
func (s *Service) retryConflict(ctx context.Context, fn func(ctx context.Context, tx store.Tx) error) error {
	var err error
	for i := 0; i < maxConflictRetries; i++ {
		err = s.cfg.Store.InTx(ctx, fn)
		if !apperr.Is(err, apperr.Conflict) {
			return err
		}
	}
	return apperr.Wrap(apperr.Transient, err, "stock: concurrent updates")
}
