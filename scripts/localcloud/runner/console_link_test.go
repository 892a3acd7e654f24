package runner

import (
	"testing"

	"ordersaga/shared/transport/identity"
)

// The startup lines' console link signs in with the first admin token of
// the token table (in token order), escaped for a query; without one it
// says so instead of naming a token that would be refused.
func TestConsoleTokenIsTheFirstAdminToken(t *testing.T) {
	for _, c := range []struct{ spec, want string }{
		{identity.DefaultTokens, "dev-admin"},
		{"zz=ops:admin,aa=boss:admin,u=u:user", "aa"},
		{"a+b=ops:admin", "a%2Bb"},
		{"u=u:user", "<admin-token>"},
		{"", "<admin-token>"},
	} {
		if got := consoleToken(c.spec); got != c.want {
			t.Errorf("consoleToken(%q) = %q, want %q", c.spec, got, c.want)
		}
	}
}
