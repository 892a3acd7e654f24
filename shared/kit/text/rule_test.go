package text

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestValidBoundaries(t *testing.T) {
	cases := []struct {
		name string
		s    string
		want bool
	}{
		{"empty", "", true},
		{"ascii", "order-1 ok", true},
		{"tab lf cr", "a\tb\nc\rd", true},
		{"nul", "a\x00b", false},
		{"0x1f", "\x1f", false},
		{"space", " ", true},
		{"del", "\x7f", true}, // SQS accepts DEL; Printable does not
		{"U+D7FF", "\uD7FF", true},
		{"U+E000", "\uE000", true},
		{"U+FFFD literal", "\uFFFD", true},
		{"U+FFFE", "\uFFFE", false},
		{"U+FFFF", "\uFFFF", false},
		{"U+10000", "\U00010000", true},
		{"U+10FFFF", "\U0010FFFF", true},
		{"encoded surrogate U+D800", "\xed\xa0\x80", false},
		{"invalid byte", "ab\xffcd", false},
		{"truncated sequence", "\xe2\x82", false},
		{"overlong slash", "\xc0\xaf", false},
		{"cyrillic", "заказ", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Valid(c.s); got != c.want {
				t.Errorf("Valid(%q) = %v, want %v", c.s, got, c.want)
			}
			if got := Problem(c.s) == ""; got != c.want {
				t.Errorf("Problem(%q) = %q, want empty=%v", c.s, Problem(c.s), c.want)
			}
		})
	}
}

// TestAllowedMatchesValidOnEveryRune: Valid of a one-rune string agrees with
// Allowed for every code point that UTF-8 can encode.
func TestAllowedMatchesValidOnEveryRune(t *testing.T) {
	for r := rune(0); r <= utf8.MaxRune; r++ {
		if !utf8.ValidRune(r) {
			continue // surrogates cannot be encoded; covered above as bytes
		}
		if Valid(string(r)) != Allowed(r) {
			t.Fatalf("Valid(%U) = %v, Allowed = %v", r, Valid(string(r)), Allowed(r))
		}
	}
}

func TestProblemNamesCharacterAndOffset(t *testing.T) {
	got := Problem("key-\uFFFF")
	if !strings.Contains(got, "U+FFFF") || !strings.Contains(got, "byte 4") {
		t.Errorf("Problem = %q", got)
	}
	if got := Problem("ab\xff"); !strings.Contains(got, "UTF-8") {
		t.Errorf("Problem = %q", got)
	}
}

func TestPrintable(t *testing.T) {
	for s, want := range map[string]bool{"abc": true, "a\tb": false, "a\x7f": false, "\u0085": false, "\uFFFF": false, "ü": true} {
		if got := Printable(s); got != want {
			t.Errorf("Printable(%q) = %v, want %v", s, got, want)
		}
	}
}
