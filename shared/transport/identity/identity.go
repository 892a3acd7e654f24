// Package identity resolves the caller of an HTTP request: in the cloud from
// the API Gateway authorizer context, locally from a bearer token table.
package identity

import (
	"context"
	"crypto/subtle"
	"fmt"
	"net/http"
	"sort"
	"strings"

	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/kit/text"
)

// Role of a caller.
type Role string

// Roles.
const (
	RoleUser  Role = "user"
	RoleAdmin Role = "admin"
)

// Identity is an authenticated caller.
type Identity struct {
	Subject string
	Role    Role
}

// IsAdmin reports whether the caller has the admin role.
func (i Identity) IsAdmin() bool { return i.Role == RoleAdmin }

// Authenticator resolves the caller of a request. It returns Unauthenticated
// when the request carries no valid identity. Safe for concurrent use.
type Authenticator interface {
	Authenticate(r *http.Request) (Identity, error)
}

// Gateway reads the identity that API Gateway put in requestContext.authorizer.
// With the JWT authorizer (terraform/api/openapi.yaml) the verified claims are
// under authorizer.jwt.claims: "sub" is the subject and the "role" claim (or
// "ordersaga_role") is "admin" for operators. A function authorizer may
// instead return {"subject": ..., "role": ...} at the top level.
type Gateway struct {
	// Authorizer extracts requestContext.authorizer from the request's context
	// (yc.AuthorizerFromContext in production).
	Authorizer func(ctx context.Context) (map[string]any, bool)
}

var _ Authenticator = Gateway{}

// Authenticate implements Authenticator.
func (g Gateway) Authenticate(r *http.Request) (Identity, error) {
	var authz map[string]any
	if g.Authorizer != nil {
		authz, _ = g.Authorizer(r.Context())
	}
	if authz == nil {
		return Identity{}, apperr.New(apperr.Unauthenticated, "no caller identity: the API Gateway authorizer context is missing")
	}
	if jwt, ok := authz["jwt"].(map[string]any); ok {
		if claims, ok := jwt["claims"].(map[string]any); ok {
			authz = claims
		}
	}
	sub := firstString(authz, "subject", "sub")
	if sub == "" {
		return Identity{}, apperr.New(apperr.Unauthenticated, "no caller identity: the authorizer context has no subject")
	}
	// The subject scopes idempotency keys, owns orders and is the actor of
	// audit records: it must follow the one text rule like any input.
	if len(sub) > MaxSubjectLen || !text.Printable(sub) {
		return Identity{}, apperr.New(apperr.Unauthenticated, "no caller identity: the subject is not printable text of at most %d bytes", MaxSubjectLen)
	}
	role := Role(firstString(authz, "role", "ordersaga_role"))
	if role != RoleAdmin {
		role = RoleUser
	}
	return Identity{Subject: sub, Role: role}, nil
}

// MaxSubjectLen is the longest accepted caller subject, in bytes.
const MaxSubjectLen = 128

func firstString(m map[string]any, keys ...string) string {
	for _, k := range keys {
		if v, ok := m[k].(string); ok && v != "" {
			return v
		}
	}
	return ""
}

// Tokens authenticates `Authorization: Bearer <token>` against a fixed table
// (local runs only).
type Tokens map[string]Identity

var _ Authenticator = Tokens(nil)

// DefaultTokens is the local token table: dev-user (role user) and dev-admin (role admin).
const DefaultTokens = "dev-user=dev-user:user,dev-admin=dev-admin:admin"

// ParseTokens parses "token=subject:role,token2=subject2:role2".
func ParseTokens(spec string) (Tokens, error) {
	t := Tokens{}
	for _, part := range strings.Split(spec, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		tok, rest, ok := strings.Cut(part, "=")
		sub, role, ok2 := strings.Cut(rest, ":")
		if !ok || !ok2 || tok == "" || sub == "" {
			return nil, fmt.Errorf("token entry %q: want token=subject:role", part)
		}
		if len(sub) > MaxSubjectLen || !text.Printable(sub) {
			return nil, fmt.Errorf("token entry %q: the subject must be printable text of at most %d bytes", part, MaxSubjectLen)
		}
		if Role(role) != RoleUser && Role(role) != RoleAdmin {
			return nil, fmt.Errorf("token entry %q: role must be user or admin", part)
		}
		t[tok] = Identity{Subject: sub, Role: Role(role)}
	}
	if len(t) == 0 {
		return nil, fmt.Errorf("no tokens configured")
	}
	return t, nil
}

// Authenticate implements Authenticator. Tokens are compared in constant time.
func (t Tokens) Authenticate(r *http.Request) (Identity, error) {
	h := r.Header.Get("Authorization")
	scheme, tok, ok := strings.Cut(h, " ")
	if h == "" || !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(tok) == "" {
		return Identity{}, apperr.New(apperr.Unauthenticated, "missing bearer token: send 'Authorization: Bearer <token>'")
	}
	tok = strings.TrimSpace(tok)
	keys := make([]string, 0, len(t))
	for k := range t {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var found Identity
	for _, k := range keys {
		if subtle.ConstantTimeCompare([]byte(k), []byte(tok)) == 1 {
			found = t[k]
		}
	}
	if found.Subject == "" {
		return Identity{}, apperr.New(apperr.Unauthenticated, "unknown bearer token")
	}
	return found, nil
}
