// Package payment is the payment participant's model: a ledger of charges
// and refunds, one entry per saga and direction, so neither can happen twice.
package payment

import "time"

// Kind of a ledger entry.
type Kind string

// Ledger entry kinds.
const (
	Charge Kind = "charge"
	Refund Kind = "refund"
)

// Status of a ledger entry.
type Status string

// Ledger entry statuses. Declined charges are recorded too, so a duplicate
// request gets the same answer without asking the provider again.
const (
	Succeeded Status = "succeeded"
	Declined  Status = "declined"
)

// Entry is one ledger line. ID is "<saga id>:<kind>".
type Entry struct {
	ID          string
	SagaID      string
	OrderID     string
	Kind        Kind
	AmountMinor int64
	Currency    string
	Status      Status
	ProviderRef string
	Reason      string
	CreatedAt   time.Time
}

// EntryID is the ledger key of a saga's charge or refund.
func EntryID(sagaID string, k Kind) string { return sagaID + ":" + string(k) }
