package httpapi_test

import (
	"net/http"
	"strings"
	"testing"

	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/transport/httpapi"
	"ordersaga/shared/transport/identity"
)

// mustNew returns httpapi.New(cfg) or fails t.
func mustNew(t *testing.T, cfg httpapi.Config) http.Handler {
	t.Helper()
	h, err := httpapi.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// A Config with only its required field serves (zero fields take their
// defaults); one without Auth is refused with an error naming the field.
func TestNewDefaultsAndRefusals(t *testing.T) {
	cases := []struct {
		name string
		cfg  httpapi.Config
		want string // "" = accepted
	}{
		{"zero optional fields", httpapi.Config{Auth: identity.Tokens{}}, ""},
		{"no Auth", httpapi.Config{}, "Auth is required"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h, err := httpapi.New(tc.cfg)
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
