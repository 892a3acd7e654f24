// Package textcut forwards to package text for callers not yet moved to it.
//
// Deprecated: use ordersaga/shared/kit/text.
package textcut

import "ordersaga/shared/kit/text"

// Cut is text.Cut.
//
// Deprecated: use text.Cut.
func Cut(s string, n int) string { return text.Cut(s, n) }
