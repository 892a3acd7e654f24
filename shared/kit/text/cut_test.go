package text_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"ordersaga/shared/kit/text"
)

func TestCutKeepsWholeCharacters(t *testing.T) {
	cases := []struct {
		in   string
		n    int
		want string
	}{
		{"abc", 5, "abc"},
		{"abc", 3, "abc"},
		{"abc", 2, "ab"},
		{"abc", 0, ""},
		{"abc", -1, ""},
		{"aé", 2, "a"},         // é is 2 bytes: a cut at 2 would split it
		{"aé", 3, "aé"},        // exactly fits
		{"日本", 4, "日"},         // 3-byte characters
		{"日本", 5, "日"},         //
		{"日本", 6, "日本"},        //
		{"a😀b", 4, "a"},        // 4-byte character
		{"a😀b", 5, "a😀"},       //
		{"a\xffb", 2, "a\xff"}, // an invalid byte is one character
	}
	for _, c := range cases {
		if got := text.Cut(c.in, c.n); got != c.want {
			t.Errorf("Cut(%q, %d) = %q, want %q", c.in, c.n, got, c.want)
		}
	}
}

func TestCutIsValidUTF8AtEveryLength(t *testing.T) {
	s := strings.Repeat("zé日😀", 50)
	for n := 0; n <= len(s)+1; n++ {
		got := text.Cut(s, n)
		if !utf8.ValidString(got) || len(got) > n || !strings.HasPrefix(s, got) || len(got) < n-3 {
			t.Fatalf("Cut(s, %d) = %d bytes, valid=%v", n, len(got), utf8.ValidString(got))
		}
	}
}

func TestClipMarksOnlyShortenedText(t *testing.T) {
	cases := []struct {
		in   string
		n    int
		want string
	}{
		{"abc", 3, "abc"},
		{"abcd", 3, "abc…"},
		{"aé", 2, "a…"}, // the cut keeps whole characters
		{"", 0, ""},
		{"a", 0, "…"},
	}
	for _, c := range cases {
		if got := text.Clip(c.in, c.n); got != c.want {
			t.Errorf("Clip(%q, %d) = %q, want %q", c.in, c.n, got, c.want)
		}
	}
}
