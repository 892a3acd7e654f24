// Package payments is the payment participant of CreateOrderSaga: a ledger
// of charges and refunds over the store port (one entry per saga and kind,
// so neither can happen twice) in front of an external payment provider.
//
// The provider is called outside any store transaction, with an idempotency
// key derived from the saga id; the provider dedupes by that key. A crash
// between the provider call and the ledger write is therefore harmless: the
// retry calls the provider again with the same key and gets the same answer.
//
// HTTPProvider speaks the provider's small JSON API (see wire.go);
// NewGuarded wraps any Provider in a resilience.Policy (bulkhead →
// breaker → retry with full jitter → per-attempt timeout).
package payments

import "context"

// Provider is the external payment provider port.
//
// Every method is idempotent by key: the provider dedupes by the idempotency
// key and answers a repeated request with the first request's outcome, with
// no second effect. Implementations are safe for concurrent use.
type Provider interface {
	// Charge charges amountMinor (> 0, in currency's minor units) once per key
	// and returns the provider's reference of the charge.
	// Errors: Rejected (declined; permanent for this key), Invalid (the
	// request is malformed; permanent), Transient (the outcome is unknown or
	// the provider is unavailable: call again with the same key).
	Charge(ctx context.Context, key string, amountMinor int64, currency string) (ref string, err error)
	// Refund reverses, once per key, the charge made under chargeKey (the
	// charge's idempotency key). It reports whether money was returned:
	// false means no charge was ever made under chargeKey, and the provider
	// then refuses any later Charge with chargeKey (a technical reversal, so
	// a compensation may run safely even when the charge's outcome is
	// unknown). amountMinor and currency must match the charge's.
	// Errors: Invalid (mismatched amount, or the charge was already refunded
	// under another key; permanent), Transient (call again with the same key).
	Refund(ctx context.Context, key, chargeKey string, amountMinor int64, currency string) (refunded bool, err error)
}
