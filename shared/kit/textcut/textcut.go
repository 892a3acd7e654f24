// Package textcut shortens text for storage and logs without splitting a
// UTF-8 character: a byte-offset cut such as s[:n] can leave half of a
// multi-byte character at the end, which is invalid UTF-8 that a queue or a
// UTF-8 column may refuse.
package textcut

import "unicode/utf8"

// Cut returns s if it is at most n bytes long, otherwise its longest prefix
// of at most n bytes that ends on a character boundary. Invalid bytes in s
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
