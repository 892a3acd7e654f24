package storetest

import (
	"context"
	"testing"
	"time"

	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/inventory"
	"ordersaga/shared/domain/store"
)

func getShard(t *testing.T, s store.Store, sku string, shard int64) (inventory.Shard, error) {
	var sh inventory.Shard
	err := s.View(testCtx(t), func(ctx context.Context, tx store.Tx) error {
		var err error
		sh, err = tx.GetStockShard(ctx, sku, shard)
		return err
	})
	return sh, err
}

func putShard(t *testing.T, s store.Store, sh inventory.Shard, expected int64) error {
	return tryTx(t, s, func(ctx context.Context, tx store.Tx) error { return tx.PutStockShard(ctx, sh, expected) })
}

func listShards(t *testing.T, s store.Store, sku string) []inventory.Shard {
	t.Helper()
	var out []inventory.Shard
	mustTx(t, s, func(ctx context.Context, tx store.Tx) error {
		var err error
		out, err = tx.ListStockShards(ctx, sku)
		return err
	})
	return out
}

// testPutStockShard: a sub-row is inserted once (expected version 0),
// updated only at its stored version, and read back as written; a sub-row
// is keyed by (SKU, shard).
func testPutStockShard(t *testing.T, s store.Store) {
	sku := newID("sku-ш")
	_, err := getShard(t, s, sku, 3)
	wantKind(t, "GetStockShard of a missing sub-row", err, apperr.NotFound)

	v1 := inventory.Shard{SKU: sku, Shard: 3, Available: 10, UpdatedAt: odd, Version: 1}
	if err := putShard(t, s, v1, 0); err != nil {
		t.Fatalf("PutStockShard(expected 0): %v", err)
	}
	wantKind(t, "PutStockShard(expected 0) of an existing sub-row", putShard(t, s, v1, 0), apperr.Conflict)
	other := inventory.Shard{SKU: sku, Shard: 4, Available: 1, UpdatedAt: odd, Version: 1}
	if err := putShard(t, s, other, 0); err != nil {
		t.Fatalf("PutStockShard of another shard of the same SKU: %v", err)
	}

	v2 := inventory.Shard{SKU: sku, Shard: 3, Available: 6, Reserved: 3, Sold: 1, UpdatedAt: odd.Add(time.Second), Version: 2}
	if err := putShard(t, s, v2, 1); err != nil {
		t.Fatalf("PutStockShard(expected 1): %v", err)
	}
	stale := v2
	stale.Available, stale.Version = 0, 3
	wantKind(t, "PutStockShard with a stale expected version", putShard(t, s, stale, 1), apperr.Conflict)
	ghost := inventory.Shard{SKU: sku, Shard: 9, Available: 1, Version: 6}
	wantKind(t, "PutStockShard(expected 5) of a missing sub-row", putShard(t, s, ghost, 5), apperr.NotFound)

	got, err := getShard(t, s, sku, 3)
	if err != nil {
		t.Fatal(err)
	}
	wantEqual(t, "GetStockShard", canonShard(got, keep), canonShard(v2, stored))
	_, err = getShard(t, s, sku, 9)
	wantKind(t, "GetStockShard after a refused PutStockShard", err, apperr.NotFound)
}

// testListStockShards: one SKU's sub-rows in shard order, none of another
// SKU's (even one whose name starts with it).
func testListStockShards(t *testing.T, s store.Store) {
	sku := newID("sku-list")
	for _, n := range []int64{10, 2, 0, 1} {
		if err := putShard(t, s, inventory.Shard{SKU: sku, Shard: n, Available: n, UpdatedAt: odd, Version: 1}, 0); err != nil {
			t.Fatal(err)
		}
	}
	if err := putShard(t, s, inventory.Shard{SKU: sku + "x", Shard: 5, Available: 1, Version: 1}, 0); err != nil {
		t.Fatal(err)
	}
	got := listShards(t, s, sku)
	var shards []int64
	for _, sh := range got {
		if sh.SKU != sku || sh.Available != sh.Shard {
			t.Errorf("ListStockShards returned %+v", sh)
		}
		shards = append(shards, sh.Shard)
	}
	wantEqual(t, "ListStockShards shards", shards, []int64{0, 1, 2, 10})
	if got := listShards(t, s, newID("sku-none")); len(got) != 0 {
		t.Errorf("ListStockShards of a SKU without sub-rows = %v, want none", got)
	}
}
