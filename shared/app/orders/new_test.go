package orders

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"ordersaga/shared/adapters/sqlitestore"
	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/order"
	"ordersaga/shared/kit/config"
	"ordersaga/shared/transport/identity"
)

// A Service built with zero fields gets config's defaults and a random
// UUID generator, so Create does not panic on a nil generator.
func TestNewDefaultsAndRandomIDs(t *testing.T) {
	st, err := sqlitestore.Open(context.Background(), filepath.Join(t.TempDir(), "orders.db"), sqlitestore.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	s, err := New(Config{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := s.cfg.Shards, config.Default().Relay.Shards; got != want {
		t.Errorf("Shards = %d, want OUTBOX_SHARDS's default %d", got, want)
	}
	if s.cfg.DispatchTimeout != config.DefaultDispatchTimeout || s.cfg.DispatchLease != config.DefaultDispatchLease {
		t.Errorf("dispatch timeout %v, lease %v; want %v, %v", s.cfg.DispatchTimeout, s.cfg.DispatchLease,
			config.DefaultDispatchTimeout, config.DefaultDispatchLease)
	}
	cmd := CreateCommand{Caller: identity.Identity{Subject: "c"}, Key: "k1",
		Request: order.Request{CustomerID: "c", Currency: "RUB", Items: []order.Item{{SKU: "a", Quantity: 1, UnitPriceMinor: 10}}}}
	resp, err := s.Create(context.Background(), cmd)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{resp.OrderID, resp.SagaID} {
		if _, err := uuid.Parse(id); err != nil {
			t.Errorf("id %q is not a UUID: %v", id, err)
		}
	}
	if resp.OrderID == resp.SagaID {
		t.Errorf("order and saga share the id %q", resp.OrderID)
	}
	if at := s.cfg.Now(); at.Location() != time.UTC {
		t.Errorf("clock reads %v, want UTC", at.Location())
	}
}

// A Config without a store or with a negative setting is refused with one
// error naming every bad field.
func TestNewRefusesBadConfig(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
		want []string
	}{
		{"no store", Config{}, []string{"Store is required"}},
		{"negative lease", Config{Store: nilStore{}, DispatchLease: -time.Second}, []string{"DispatchLease must not be negative (got -1s)"}},
		{"negative timeout", Config{Store: nilStore{}, DispatchTimeout: -time.Second}, []string{"DispatchTimeout must not be negative (got -1s)"}},
		{"negative shards", Config{Store: nilStore{}, Shards: -1}, []string{"Shards must not be negative (got -1)"}},
		{"every bad field at once", Config{DispatchTimeout: -1, DispatchLease: -2, Shards: -3},
			[]string{"orders.New", "Store is required", "DispatchTimeout must not be negative (got -1ns)",
				"DispatchLease must not be negative (got -2ns)", "Shards must not be negative (got -3)"}},
	} {
		s, err := New(tc.cfg)
		if s != nil || !apperr.Is(err, apperr.Invalid) {
			t.Errorf("%s: New = %v, %v; want Invalid", tc.name, s, err)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: err = %q, want it to contain %q", tc.name, err, w)
			}
		}
	}
}

// nilStore is a store that is never called (New only checks it is set).
type nilStore struct{ *sqlitestore.Store }
