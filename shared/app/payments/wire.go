package payments

// The provider's JSON API, shared by HTTPProvider and the local simulator
// (package paymentsim):
//
//	POST /charges  Idempotency-Key: <key>  {"amount_minor":1500,"currency":"RUB"}
//	  201 {"ref":"ch_...","status":"succeeded"}
//	  402 {"status":"declined","reason":"..."}
//	POST /refunds  Idempotency-Key: <key>  {"charge_key":"...","amount_minor":1500,"currency":"RUB"}
//	  200 {"ref":"rf_...","refunded":true}   (refunded=false: nothing was charged; the charge key is now void)
//
// 400/422 mean a malformed request (permanent); 409 and 425 mean a request
// with this Idempotency-Key is still being processed, so its outcome is
// unknown (asked again later, never taken as a refusal); 408, 429 and 5xx
// (except 501/505) are transient and may carry Retry-After. A repeated
// request with the same Idempotency-Key gets the first answer.
const (
	// PathCharges is the charge endpoint.
	PathCharges = "/charges"
	// PathRefunds is the refund endpoint.
	PathRefunds = "/refunds"
	// HeaderIdempotencyKey carries the request's idempotency key.
	HeaderIdempotencyKey = "Idempotency-Key"
)

// ChargeRequest is the body of POST /charges.
type ChargeRequest struct {
	AmountMinor int64  `json:"amount_minor"`
	Currency    string `json:"currency"`
}

// ChargeResponse is the body of a 201 or 402 answer to POST /charges.
type ChargeResponse struct {
	Ref    string `json:"ref,omitempty"`
	Status string `json:"status"` // "succeeded" or "declined"
	Reason string `json:"reason,omitempty"`
}

// RefundRequest is the body of POST /refunds.
type RefundRequest struct {
	ChargeKey   string `json:"charge_key"`
	AmountMinor int64  `json:"amount_minor"`
	Currency    string `json:"currency"`
}

// RefundResponse is the body of a 200 answer to POST /refunds.
type RefundResponse struct {
	Ref      string `json:"ref,omitempty"`
	Refunded bool   `json:"refunded"`
}

// ErrorResponse is the body of any other answer.
type ErrorResponse struct {
	Error string `json:"error"`
}

// Wire statuses of ChargeResponse.Status.
const (
	WireSucceeded = "succeeded"
	WireDeclined  = "declined"
)
