package identity

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"ordersaga/shared/domain/apperr"
)

type key struct{}

func gatewayWith(authz map[string]any) (Gateway, *http.Request) {
	r := httptest.NewRequest("GET", "/orders/x", nil)
	r = r.WithContext(context.WithValue(r.Context(), key{}, authz))
	return Gateway{Authorizer: func(ctx context.Context) (map[string]any, bool) {
		m, ok := ctx.Value(key{}).(map[string]any)
		return m, ok && m != nil
	}}, r
}

func TestGateway(t *testing.T) {
	cases := []struct {
		name  string
		authz map[string]any
		want  Identity
		err   bool
	}{
		{"jwt user", map[string]any{"jwt": map[string]any{"claims": map[string]any{"sub": "u1"}}}, Identity{"u1", RoleUser}, false},
		{"jwt admin", map[string]any{"jwt": map[string]any{"claims": map[string]any{"sub": "ops", "role": "admin"}}}, Identity{"ops", RoleAdmin}, false},
		{"function authorizer", map[string]any{"subject": "u2", "role": "user"}, Identity{"u2", RoleUser}, false},
		{"unknown role is user", map[string]any{"sub": "u3", "role": "root"}, Identity{"u3", RoleUser}, false},
		{"no subject", map[string]any{"role": "admin"}, Identity{}, true},
		{"no authorizer", nil, Identity{}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g, r := gatewayWith(tc.authz)
			got, err := g.Authenticate(r)
			if tc.err {
				if !apperr.Is(err, apperr.Unauthenticated) {
					t.Fatalf("err = %v, want Unauthenticated", err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}

func TestTokens(t *testing.T) {
	tok, err := ParseTokens(DefaultTokens)
	if err != nil {
		t.Fatal(err)
	}
	for hdr, want := range map[string]string{"Bearer dev-user": "dev-user", "bearer dev-admin": "dev-admin", "Bearer nope": "", "": "", "Basic dev-user": ""} {
		r := httptest.NewRequest("GET", "/", nil)
		if hdr != "" {
			r.Header.Set("Authorization", hdr)
		}
		id, err := tok.Authenticate(r)
		if id.Subject != want || (want == "") != (err != nil) {
			t.Errorf("%q: got %+v %v", hdr, id, err)
		}
	}
	for _, bad := range []string{"", "x", "a=b", "a=b:root", "=b:user"} {
		if _, err := ParseTokens(bad); err == nil {
			t.Errorf("ParseTokens(%q) accepted", bad)
		}
	}
}

// TestSubjectFollowsTheTextRule: a subject the queue or a Utf8 column would
// refuse is no identity (it scopes keys and is the audit actor).
func TestSubjectFollowsTheTextRule(t *testing.T) {
	for _, sub := range []string{"u\uFFFF", "u\uFFFE", "u\x00", "u\xff", strings.Repeat("u", MaxSubjectLen+1)} {
		g := Gateway{Authorizer: func(context.Context) (map[string]any, bool) {
			return map[string]any{"subject": sub}, true
		}}
		if _, err := g.Authenticate(httptest.NewRequest("GET", "/", nil)); apperr.KindOf(err) != apperr.Unauthenticated {
			t.Errorf("subject %+q: err = %v, want Unauthenticated", sub, err)
		}
		if _, err := ParseTokens("tok=" + sub + ":user"); err == nil {
			t.Errorf("ParseTokens accepted subject %+q", sub)
		}
	}
	g := Gateway{Authorizer: func(context.Context) (map[string]any, bool) {
		return map[string]any{"sub": "пользователь-1"}, true
	}}
	if id, err := g.Authenticate(httptest.NewRequest("GET", "/", nil)); err != nil || id.Subject != "пользователь-1" {
		t.Errorf("good subject: %+v %v", id, err)
	}
}
