// Package apperr is ordersaga's one error vocabulary: a handful of kinds,
// wrapped with %w and classified only with errors.Is / errors.As.
//
// Adapters translate driver status codes into these kinds at the boundary;
// use cases and transports decide retry, dead letter or HTTP status from the
// kind alone, never from message text.
package apperr

import (
	"context"
	"errors"
	"fmt"
)

// Kind classifies an error by what the caller should do about it.
type Kind uint8

// The kinds. Zero (Internal) is the safe default for unclassified errors.
const (
	// Internal is a bug or an unexpected failure; not retried automatically.
	Internal Kind = iota
	// Invalid means the input is malformed; retrying the same input fails again.
	Invalid
	// NotFound means the addressed entity does not exist (or is not visible to the caller).
	NotFound
	// Conflict means a uniqueness or version precondition failed (duplicate key, stale version).
	Conflict
	// Transient means the operation may succeed if retried later (timeouts, overload, lock conflicts).
	Transient
	// Rejected means a business rule refused the operation (out of stock, payment declined).
	// It is permanent for this input: a saga compensates instead of retrying.
	Rejected
	// Unauthenticated means no valid caller identity was presented.
	Unauthenticated
	// Forbidden means the caller is known but not allowed.
	Forbidden
	// TooLarge means the input exceeds a size limit.
	TooLarge
)

var kindNames = [...]string{
	Internal:        "internal",
	Invalid:         "invalid",
	NotFound:        "not_found",
	Conflict:        "conflict",
	Transient:       "transient",
	Rejected:        "rejected",
	Unauthenticated: "unauthenticated",
	Forbidden:       "forbidden",
	TooLarge:        "too_large",
}

// String returns the kind's stable snake_case name (used in logs, metrics and dead letters).
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(%d)", k)
}

// FieldError names one invalid field of an input, as a JSON pointer.
type FieldError struct {
	Pointer string `json:"pointer"`
	Detail  string `json:"detail"`
}

// Describe says what is wrong in words: "field /items/0/sku must be a
// string", or, when the pointer is empty (the whole document, RFC 6901),
// whole followed by the detail ("request body is not valid JSON: …").
func (f FieldError) Describe(whole string) string {
	if f.Pointer == "" {
		return whole + " " + f.Detail
	}
	return "field " + f.Pointer + " " + f.Detail
}

// Error is an error with a Kind. Msg is safe to show to callers; Err (if any)
// is the underlying cause and may hold internals that must not be shown.
type Error struct {
	Kind   Kind
	Msg    string
	Fields []FieldError
	Err    error
}

// Error implements error.
func (e *Error) Error() string {
	switch {
	case e.Msg != "" && e.Err != nil:
		return e.Msg + ": " + e.Err.Error()
	case e.Msg != "":
		return e.Msg
	case e.Err != nil:
		return e.Err.Error()
	default:
		return e.Kind.String()
	}
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// New returns an error of kind k with a caller-safe message.
func New(k Kind, format string, args ...any) error {
	return &Error{Kind: k, Msg: fmt.Sprintf(format, args...)}
}

// Wrap returns err classified as kind k, with msg as the caller-safe message.
// Wrap(k, nil, ...) returns nil.
func Wrap(k Kind, err error, format string, args ...any) error {
	if err == nil {
		return nil
	}
	return &Error{Kind: k, Msg: fmt.Sprintf(format, args...), Err: err}
}

// Invalidf returns an Invalid error listing the offending fields.
func Invalidf(fields []FieldError, format string, args ...any) error {
	return &Error{Kind: Invalid, Msg: fmt.Sprintf(format, args...), Fields: fields}
}

// KindOf returns the kind of the outermost *Error in err's chain. Context
// deadline and cancellation count as Transient; anything else unclassified is Internal.
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return Transient
	}
	return Internal
}

// Is reports whether err is of kind k.
func Is(err error, k Kind) bool { return err != nil && KindOf(err) == k }

// Message returns the caller-safe message of err's outermost *Error, or a
// generic text for unclassified errors (whose text may leak internals).
func Message(err error) string {
	var e *Error
	if errors.As(err, &e) && e.Msg != "" {
		return e.Msg
	}
	return "internal error"
}

// Fields returns the field errors attached to err, if any.
func Fields(err error) []FieldError {
	var e *Error
	if errors.As(err, &e) {
		return e.Fields
	}
	return nil
}

// Retryable reports whether an operation that failed with err may succeed if
// retried unchanged. This is the one place that decides retry versus give up.
func Retryable(err error) bool { return err != nil && KindOf(err) == Transient }
