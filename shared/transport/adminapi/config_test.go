package adminapi_test

import (
	"net/http"
	"strings"
	"testing"

	"ordersaga/shared/app/redrive"
	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/transport/adminapi"
	"ordersaga/shared/transport/httpapi"
	"ordersaga/shared/transport/identity"
)

// mustServe returns the HTTP API of api with the admin API of admin
// mounted, or fails t.
func mustServe(t *testing.T, api httpapi.Config, admin adminapi.Config) http.Handler {
	t.Helper()
	a, err := adminapi.New(admin)
	if err != nil {
		t.Fatal(err)
	}
	api.Admin = a
	h, err := httpapi.New(api)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// Optional fields may stay zero (no stock routes, no console); a Config
// without Redrive or Auth is refused with an error naming the field.
func TestNewDefaultsAndRefusals(t *testing.T) {
	svc := &redrive.Service{}
	cases := []struct {
		name string
		cfg  adminapi.Config
		want string // "" = accepted
	}{
		{"zero optional fields", adminapi.Config{Redrive: svc, Auth: identity.Tokens{}}, ""},
		{"no Redrive", adminapi.Config{Auth: identity.Tokens{}}, "Redrive is required"},
		{"no Auth", adminapi.Config{Redrive: svc}, "Auth is required"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h, err := adminapi.New(tc.cfg)
			if tc.want == "" {
				if err != nil || h == nil {
					t.Fatalf("New = %v, %v; want a handler", h, err)
				}
				return
			}
			if h != nil || !apperr.Is(err, apperr.Invalid) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("New = %v, %v; want Invalid containing %q", h, err, tc.want)
			}
		})
	}
}
