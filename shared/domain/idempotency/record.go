// Package idempotency implements the Idempotency-Key semantics of the IETF
// draft "The Idempotency-Key HTTP Header Field": keys scoped by caller, a
// request fingerprint, stored responses replayed verbatim, 24 h expiry.
//
// This package is pure: the record, the fingerprint and the decision what to
// do with a stored record. Persistence lives behind the store port.
package idempotency

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"time"
	"unicode/utf8"

	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/kit/text"
)

// TTL is how long a completed key is honoured.
const TTL = 24 * time.Hour

// MaxKeyLen is the longest accepted Idempotency-Key, in characters.
const MaxKeyLen = 255

// Status of a stored key.
type Status string

// Key statuses. A key is written completed in the same transaction as the
// effect it guards; InProgress exists for work that spans transactions and is
// released by the recovery job when its lease lapses.
const (
	StatusInProgress Status = "in_progress"
	StatusCompleted  Status = "completed"
)

// Record is one stored idempotency key.
type Record struct {
	Scope       string // caller subject; the same key from two callers is two keys
	Key         string
	Fingerprint string // hex SHA-256 of the normalised request
	Status      Status
	// The stored response, replayed byte for byte.
	ResponseStatus int
	ResponseBody   []byte
	Location       string
	ResourceID     string // the order id this key created (correlation chain)
	LockedUntil    time.Time
	CreatedAt      time.Time
	ExpiresAt      time.Time
}

// ValidateKey checks an Idempotency-Key header value. The key is copied into
// the idempotency_key and correlation_id attributes of every message of its
// saga, so it must follow the one text rule (package textrule) and, being a
// header value, hold no control character: a key the queue would refuse
// would wedge its saga.
func ValidateKey(key string) error {
	switch {
	case key == "":
		return apperr.New(apperr.Invalid, "the Idempotency-Key header is required for this request")
	case !utf8.ValidString(key):
		return apperr.New(apperr.Invalid, "the Idempotency-Key header must be valid UTF-8")
	case utf8.RuneCountInString(key) > MaxKeyLen:
		return apperr.New(apperr.Invalid, "the Idempotency-Key header must be at most %d characters", MaxKeyLen)
	case strings.TrimSpace(key) != key:
		return apperr.New(apperr.Invalid, "the Idempotency-Key header must not start or end with spaces")
	case !text.Valid(key):
		return apperr.New(apperr.Invalid, "the Idempotency-Key header %s", text.Problem(key))
	case !text.Printable(key):
		return apperr.New(apperr.Invalid, "the Idempotency-Key header must not contain control characters")
	}
	return nil
}

// Fingerprint hashes the parts of a request that define "the same request".
// Callers pass a normalised body (re-encoded after decoding) so that
// insignificant whitespace or key order does not change the fingerprint.
func Fingerprint(method, route string, normalizedBody []byte) string {
	h := sha256.New()
	h.Write([]byte(method))
	h.Write([]byte{0})
	h.Write([]byte(route))
	h.Write([]byte{0})
	h.Write(normalizedBody)
	return hex.EncodeToString(h.Sum(nil))
}

// Decision is what to do with a request whose key is already stored.
type Decision int

// Decisions.
const (
	// Proceed: no live record; run the request.
	Proceed Decision = iota
	// Replay: return the stored response with Idempotent-Replayed: true.
	Replay
	// Mismatch: the key was used with a different request (422).
	Mismatch
	// InProgress: the first request is still running (409 + Retry-After).
	InProgress
)

// Decide classifies a stored record for an incoming request with fingerprint fp
// at time now. An expired record (TTL deletion lags) or an in-progress record
// whose lock lapsed counts as absent: Proceed, and the caller takes it over.
func Decide(rec Record, fp string, now time.Time) Decision {
	if !rec.ExpiresAt.IsZero() && !now.Before(rec.ExpiresAt) {
		return Proceed
	}
	if rec.Status == StatusInProgress && !now.Before(rec.LockedUntil) {
		return Proceed
	}
	if rec.Fingerprint != fp {
		return Mismatch
	}
	if rec.Status == StatusInProgress {
		return InProgress
	}
	return Replay
}

// ErrFingerprintMismatch: the key was already used with a different request (HTTP 422).
var ErrFingerprintMismatch = apperr.New(apperr.Conflict, "this Idempotency-Key was already used with a different request")

// ErrInProgress: a request with this key is still being processed (HTTP 409 + Retry-After).
var ErrInProgress = apperr.New(apperr.Conflict, "a request with this Idempotency-Key is still being processed")
