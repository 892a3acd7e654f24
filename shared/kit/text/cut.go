package text

import "unicode/utf8"

// Ellipsis is what Clip appends to a text it shortened.
const Ellipsis = "…"

// Cut returns s if it is at most n bytes long, otherwise its longest prefix
// of at most n bytes that ends on a character boundary, so a cut never
// leaves half of a multi-byte character (invalid UTF-8 that a queue or a
// UTF-8 column may refuse). n counts bytes, not runes. Invalid bytes in s
// count as one-byte characters. n <= 0 gives "".
func Cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	if n <= 0 {
		return ""
	}
	// Back off from byte n to the start of the character that crosses it.
	i := n
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	// s[i] starts a character; keep it only if it ends by n.
	if _, size := utf8.DecodeRuneInString(s[i:]); i+size <= n {
		return s[:i+size]
	}
	return s[:i]
}

// Clip is Cut followed by Ellipsis when s was shortened, for texts a reader
// should know are incomplete (error details, check reports). The result is
// at most n bytes plus the three bytes of Ellipsis.
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return Cut(s, n) + Ellipsis
}
