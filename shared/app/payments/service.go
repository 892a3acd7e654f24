package payments

import (
	"context"
	"time"

	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/payment"
	"ordersaga/shared/domain/store"
	"ordersaga/shared/kit/config"
	"ordersaga/shared/kit/validate"
)

// Config configures a Service (New).
type Config struct {
	Store    store.Store // required
	Provider Provider    // required (NewGuarded in production)
	// Now is the clock (default time.Now); the Service reads it in UTC.
	Now func() time.Time
}

// Service is the payment participant: the ledger in front of the provider.
// It is built once by New and safe for concurrent use.
type Service struct {
	cfg Config
}

// New returns a Service over cfg's store and provider. It fails
// (apperr.Invalid, naming the fields; see Config.Validate) without either.
func New(cfg Config) (*Service, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg.setDefaults()
	return &Service{cfg: cfg}, nil
}

// Validate reports what New would refuse: a Config without a Store or a
// Provider. Errors are apperr.Invalid and name the fields.
func (c Config) Validate() error {
	var p validate.Problems
	p.Require(c.Store != nil, "Store")
	p.Require(c.Provider != nil, "Provider")
	return p.Err("payments.New")
}

// setDefaults gives each zero field of c its documented default.
func (c *Config) setDefaults() { c.Now = config.UTCClock(c.Now) }

// voidReason marks the ledger's charge entry written when a refund found no
// recorded charge and the provider confirmed none was made.
const voidReason = "voided: compensated before any charge was made"

// Charge charges the saga's order once. If the ledger has the saga's charge
// entry its outcome is returned (Succeeded → nil, Declined → Rejected).
// Otherwise the provider is called outside any transaction with the entry id
// as idempotency key, and its answer is recorded: success → Succeeded entry;
// decline → Declined entry and Rejected. Transient provider failures record
// nothing and are returned as Transient (repeat the call: same key).
//
// Errors: Rejected, Invalid (bad input or a refused request; permanent),
// Transient, Internal. Idempotent; safe for concurrent use.
func (s *Service) Charge(ctx context.Context, sagaID, orderID string, amountMinor int64, currency string) error {
	if sagaID == "" || amountMinor <= 0 || currency == "" {
		return apperr.New(apperr.Invalid, "payments: charge needs a saga id, a positive amount and a currency")
	}
	id := payment.EntryID(sagaID, payment.Charge)
	if e, ok, err := s.get(ctx, id); err != nil || ok {
		if err != nil {
			return err
		}
		return chargeOutcome(e)
	}
	ref, perr := s.cfg.Provider.Charge(ctx, id, amountMinor, currency)
	e := payment.Entry{ID: id, SagaID: sagaID, OrderID: orderID, Kind: payment.Charge,
		AmountMinor: amountMinor, Currency: currency, Status: payment.Succeeded, ProviderRef: ref, CreatedAt: s.cfg.Now()}
	switch {
	case perr == nil:
	case apperr.Is(perr, apperr.Rejected):
		e.Status, e.Reason = payment.Declined, apperr.Message(perr)
	default:
		return unknownOutcome(perr, "payments: charge")
	}
	err := s.cfg.Store.InTx(ctx, func(ctx context.Context, tx store.Tx) error { return tx.InsertPayment(ctx, e) })
	if apperr.Is(err, apperr.Conflict) {
		// A concurrent run recorded it first (the provider gave it the same answer).
		stored, ok, gerr := s.get(ctx, id)
		if gerr != nil || !ok {
			return apperr.Wrap(apperr.Transient, err, "payments: re-read charge")
		}
		return chargeOutcome(stored)
	}
	if err != nil {
		return err
	}
	return chargeOutcome(e)
}

// Refund undoes the saga's charge and reports whether money was returned.
// A refund entry already recorded → its outcome. A Declined (or voided)
// charge → nothing to do (false). A Succeeded charge → provider refund (key =
// the refund entry id) and a refund entry (true). No charge entry at all
// means the charge's outcome is unknown (e.g. every attempt timed out): the
// provider reverses whatever it charged under the charge key; if it had
// charged, both the charge and the refund are recorded (true), otherwise a
// voided charge entry is recorded so a late Charge is refused (false).
// amountMinor and currency are those of the charge.
//
// Errors: Invalid (bad input, or the provider refused; permanent), Internal
// (the ledger and the provider disagree), Transient. Idempotent; safe for
// concurrent use.
func (s *Service) Refund(ctx context.Context, sagaID, orderID string, amountMinor int64, currency string) (bool, error) {
	if sagaID == "" {
		return false, apperr.New(apperr.Invalid, "payments: refund needs a saga id")
	}
	chargeID, refundID := payment.EntryID(sagaID, payment.Charge), payment.EntryID(sagaID, payment.Refund)
	if r, ok, err := s.get(ctx, refundID); err != nil || ok {
		return ok && r.Status == payment.Succeeded, err
	}
	charge, charged, err := s.get(ctx, chargeID)
	if err != nil {
		return false, err
	}
	if charged {
		if charge.Status != payment.Succeeded {
			return false, nil
		}
		amountMinor, currency = charge.AmountMinor, charge.Currency
	}
	refunded, perr := s.cfg.Provider.Refund(ctx, refundID, chargeID, amountMinor, currency)
	if perr != nil {
		if apperr.Is(perr, apperr.Invalid) || apperr.Is(perr, apperr.Rejected) {
			return false, apperr.Wrap(apperr.Invalid, perr, "payments: refund refused")
		}
		return false, unknownOutcome(perr, "payments: refund")
	}
	now := s.cfg.Now()
	var entries []payment.Entry
	switch {
	case charged && !refunded:
		return false, apperr.New(apperr.Internal, "payments: provider has no charge for %s that the ledger recorded", chargeID)
	case !charged && !refunded:
		entries = append(entries, payment.Entry{ID: chargeID, SagaID: sagaID, OrderID: orderID, Kind: payment.Charge,
			AmountMinor: amountMinor, Currency: currency, Status: payment.Declined, Reason: voidReason, CreatedAt: now})
	case !charged:
		entries = append(entries, payment.Entry{ID: chargeID, SagaID: sagaID, OrderID: orderID, Kind: payment.Charge,
			AmountMinor: amountMinor, Currency: currency, Status: payment.Succeeded,
			Reason: "recorded by the refund: the charge's answer was lost", CreatedAt: now})
		fallthrough
	default:
		entries = append(entries, payment.Entry{ID: refundID, SagaID: sagaID, OrderID: orderID, Kind: payment.Refund,
			AmountMinor: amountMinor, Currency: currency, Status: payment.Succeeded, CreatedAt: now})
	}
	err = s.cfg.Store.InTx(ctx, func(ctx context.Context, tx store.Tx) error {
		for _, e := range entries {
			if err := tx.InsertPayment(ctx, e); err != nil {
				return err
			}
		}
		return nil
	})
	if apperr.Is(err, apperr.Conflict) {
		// A concurrent run recorded the outcome first; report what it stored.
		return s.Refund(ctx, sagaID, orderID, amountMinor, currency)
	}
	return refunded, err
}

// Totals returns the sums of succeeded charges and refunds in the ledger.
func (s *Service) Totals(ctx context.Context) (charged, refunded int64, err error) {
	err = s.cfg.Store.View(ctx, func(ctx context.Context, tx store.Tx) error {
		charged, refunded, err = tx.PaymentTotals(ctx)
		return err
	})
	return charged, refunded, err
}

// get reads one ledger entry; ok is false when it does not exist.
func (s *Service) get(ctx context.Context, id string) (e payment.Entry, ok bool, err error) {
	err = s.cfg.Store.View(ctx, func(ctx context.Context, tx store.Tx) error {
		var gerr error
		e, gerr = tx.GetPayment(ctx, id)
		return gerr
	})
	if apperr.Is(err, apperr.NotFound) {
		return payment.Entry{}, false, nil
	}
	return e, err == nil, err
}

// chargeOutcome is what Charge returns for a recorded entry.
func chargeOutcome(e payment.Entry) error {
	if e.Status == payment.Succeeded {
		return nil
	}
	return apperr.New(apperr.Rejected, "payment declined: %s", e.Reason)
}

// unknownOutcome classifies a provider failure other than a decline: Invalid
// stays permanent; anything else leaves the outcome unknown, so it is
// Transient (the provider dedupes the repeat by key).
func unknownOutcome(err error, op string) error {
	switch apperr.KindOf(err) {
	case apperr.Invalid, apperr.Transient:
		return err
	}
	return apperr.Wrap(apperr.Transient, err, "%s: outcome unknown", op)
}
