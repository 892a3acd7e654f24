package sqlitestore

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"ordersaga/shared/domain/idempotency"
	"ordersaga/shared/domain/saga"
	"ordersaga/shared/domain/store"
	"ordersaga/shared/domain/store/bucket"
)

// The twin column of YDB's bucketed indexes (schema/sqlite/0011_buckets.sql)
// holds bucket.Of of the primary key, and an update keeps it.
func TestBucketColumnWritten(t *testing.T) {
	s := open(t, filepath.Join(t.TempDir(), "b.db"), Config{})
	ctx := context.Background()
	at := time.Date(2001, 2, 3, 4, 5, 6, 0, time.UTC)
	sg := saga.Instance{ID: "saga-bucket", State: saga.StatePending, CreatedAt: at, Version: 1}
	rec := idempotency.Record{Scope: "sc", Key: "k-bucket", Status: idempotency.StatusInProgress, CreatedAt: at,
		ExpiresAt: at.Add(time.Hour)}
	err := s.InTx(ctx, func(ctx context.Context, tx store.Tx) error {
		if err := tx.InsertSaga(ctx, sg); err != nil {
			return err
		}
		if err := tx.InsertIdempotencyKey(ctx, rec); err != nil {
			return err
		}
		up := sg
		up.State, up.Version = saga.StateRunning, 2
		return tx.UpdateSaga(ctx, up, 1)
	})
	if err != nil {
		t.Fatal(err)
	}
	var sb, ib int64
	if err := s.DB().QueryRow(`SELECT bucket FROM sagas WHERE id = ?`, sg.ID).Scan(&sb); err != nil {
		t.Fatal(err)
	}
	if err := s.DB().QueryRow(`SELECT bucket FROM idempotency_keys WHERE scope = ? AND idem_key = ?`,
		rec.Scope, rec.Key).Scan(&ib); err != nil {
		t.Fatal(err)
	}
	if sb != bucket.Of(sg.ID) || ib != bucket.Of(rec.Scope, rec.Key) {
		t.Errorf("buckets = %d, %d; want %d, %d", sb, ib, bucket.Of(sg.ID), bucket.Of(rec.Scope, rec.Key))
	}
}
