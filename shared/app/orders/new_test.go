package orders

import (
	"context"
	"path/filepath"
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

func TestNewRefusesBadConfig(t *testing.T) {
	for name, cfg := range map[string]Config{
		"no store":       {},
		"negative lease": {Store: nilStore{}, DispatchLease: -time.Second},
	} {
		if s, err := New(cfg); s != nil || !apperr.Is(err, apperr.Invalid) {
			t.Errorf("%s: New = %v, %v; want Invalid", name, s, err)
		}
	}
}

// nilStore is a store that is never called (New only checks it is set).
type nilStore struct{ *sqlitestore.Store }
