// The text rule: a string the API accepts must be storable and publishable
// by every adapter, so every text value is checked at the boundary against
// the strictest of them, the SQS message character set, which is also what
// the queue adapters enforce on bodies and attribute values (one predicate,
// so they cannot disagree).
//
// Allowed: valid UTF-8 made only of #x9, #xA, #xD, #x20–#xD7FF,
// #xE000–#xFFFD and #x10000–#x10FFFF (the SendMessage "MessageBody"
// constraint; SQS applies it to string attribute values too:
// https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_SendMessage.html).
// This excludes the noncharacters U+FFFE and U+FFFF, surrogates, and C0
// controls other than tab, newline and carriage return. Valid UTF-8 is also
// what YDB's Utf8 columns require.

package text

import (
	"fmt"
	"unicode/utf8"
)

// Allowed reports whether r is in the SQS character set.
func Allowed(r rune) bool {
	switch {
	case r == 0x9 || r == 0xA || r == 0xD:
		return true
	case r >= 0x20 && r <= 0xD7FF:
		return true
	case r >= 0xE000 && r <= 0xFFFD:
		return true
	case r >= 0x10000 && r <= 0x10FFFF:
		return true
	}
	return false
}

// Valid reports whether s is valid UTF-8 made only of allowed characters.
// The empty string is valid (whether a field may be empty is the caller's rule).
func Valid(s string) bool { return Invalid(s) < 0 }

// Invalid returns the byte offset of the first invalid UTF-8 sequence or
// disallowed character in s, or -1 when s is valid.
func Invalid(s string) int {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf { // ASCII fast path
			if c < 0x20 && c != 0x9 && c != 0xA && c != 0xD {
				return i
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size <= 1 {
			return i // invalid UTF-8 (a literal U+FFFD decodes with size 3)
		}
		if !Allowed(r) {
			return i
		}
		i += size
	}
	return -1
}

// Printable reports whether s is Valid and holds no control character at
// all (no tab, newline or carriage return, no DEL, no C1 control): the rule
// for one-line values such as ids, keys, names and header values.
func Printable(s string) bool {
	if !Valid(s) {
		return false
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return false
		}
	}
	return true
}

// Problem describes why s fails Valid ("" when it does not), for error
// details that name the field: it says which character at which offset,
// without echoing the value.
func Problem(s string) string {
	i := Invalid(s)
	if i < 0 {
		return ""
	}
	r, size := utf8.DecodeRuneInString(s[i:])
	if r == utf8.RuneError && size <= 1 {
		return fmt.Sprintf("is not valid UTF-8 (at byte %d)", i)
	}
	return fmt.Sprintf("contains %U (at byte %d), which the message queue does not accept; "+
		"allowed are tab, newline, carriage return and U+0020-U+D7FF, U+E000-U+FFFD, U+10000-U+10FFFF", r, i)
}
