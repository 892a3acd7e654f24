package store

import (
	"strings"
	"unicode/utf8"

	"ordersaga/shared/domain/apperr"
)

// Text values. YDB's Utf8 columns travel as proto3 strings, which the gRPC
// encoder refuses unless they are valid UTF-8 ("string field contains
// invalid UTF-8"); the failure is client-side, looks retryable, and would
// wedge whatever tried to record it. So every adapter applies one rule,
// whatever its own engine would accept:
//
//   - diagnostic texts (last_error, a step's error, status and refusal
//     reasons, a dead letter's error) are repaired: every invalid byte
//     sequence becomes U+FFFD (RepairText). A failure must always be
//     recordable;
//   - every other text (ids, keys, names, statuses, owners) that is not
//     valid UTF-8 is refused with Invalid before any statement runs, and
//     nothing is written (CheckText).
//
// Encoded lists and maps go through encoding/json, which already replaces
// invalid UTF-8 with U+FFFD; opaque payloads are bytes and carry anything.

// RepairText returns s with every invalid UTF-8 sequence replaced by U+FFFD.
func RepairText(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

// CheckText returns Invalid (naming the field, never echoing the value) when
// s is not valid UTF-8.
func CheckText(field, s string) error {
	if utf8.ValidString(s) {
		return nil
	}
	return apperr.New(apperr.Invalid, "%s is not valid UTF-8", field)
}
