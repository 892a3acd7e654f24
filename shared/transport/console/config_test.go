package console

import (
	"net/http"
	"strings"
	"testing"

	"ordersaga/shared/app/redrive"
	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/transport/identity"
)

// A Config with its required fields serves (Breakers may stay nil); each
// missing one is refused with an error naming it.
func TestNewDefaultsAndRefusals(t *testing.T) {
	authorize := func(*http.Request) (identity.Identity, error) { return identity.Identity{}, nil }
	full := Config{Authorize: authorize, Redrive: &redrive.Service{}, Orders: struct{ Orders }{}, Stock: struct{ Stock }{}}
	if h, err := New(full); err != nil || h == nil {
		t.Fatalf("New(full) = %v, %v; want a handler", h, err)
	}
	cases := []struct {
		name   string
		change func(*Config)
		want   string
	}{
		{"no Authorize", func(c *Config) { c.Authorize = nil }, "Authorize is required"},
		{"no Redrive", func(c *Config) { c.Redrive = nil }, "Redrive is required"},
		{"no Orders", func(c *Config) { c.Orders = nil }, "Orders is required"},
		{"no Stock", func(c *Config) { c.Stock = nil }, "Stock is required"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := full
			tc.change(&cfg)
			h, err := New(cfg)
			if h != nil || !apperr.Is(err, apperr.Invalid) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("New = %v, %v; want Invalid containing %q", h, err, tc.want)
			}
		})
	}
}
