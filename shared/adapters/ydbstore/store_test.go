package ydbstore

import (
	"context"
	"os"
	"testing"
	"time"

	ydbschema "ordersaga/schema/ydb"
	"ordersaga/shared/domain/store"
	"ordersaga/shared/domain/store/storetest"
)

// TestConformance runs the store port's conformance suite against a real
// YDB named by YDB_CONNECTION_STRING (anonymous access, or YDB_TOKEN if
// set), after applying the migrations. Without YDB_CONNECTION_STRING it
// skips: there is no fake YDB. See docs/ydb.md for running local-ydb.
func TestConformance(t *testing.T) {
	dsn := os.Getenv("YDB_CONNECTION_STRING")
	if dsn == "" {
		t.Skip("YDB_CONNECTION_STRING not set: the YDB conformance suite needs a YDB server (see docs/ydb.md)")
	}
	cfg := Config{ConnectionString: dsn, Auth: AuthAnonymous}
	if tok := os.Getenv("YDB_TOKEN"); tok != "" {
		cfg.Auth, cfg.Token = AuthToken, tok
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s, err := Open(ctx, cfg)
	if err != nil {
		t.Fatalf("Open(%s): %v", cfg, err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	ms, err := LoadMigrations(ydbschema.FS)
	if err != nil {
		t.Fatalf("LoadMigrations: %v", err)
	}
	if _, err := s.Migrate(ctx, ms, MigrateOptions{Log: t.Logf}); err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	// The suite isolates its rows (fresh ids, shards, time windows), so every
	// subtest shares this one store; it is closed when the whole test ends.
	// YDB's TTL deletes expired rows (docs/ydb.md, "Indexes").
	storetest.RunWith(t, storetest.Features{ExpiryByTTL: true}, func(*testing.T) store.Store { return s })
}
