package sqlitestore

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/idempotency"
	"ordersaga/shared/domain/store"
)

// ClaimIdempotencyKey inserts a new key and reports it; a key that exists
// (even expired) is left exactly as it was, reported unclaimed, and the
// statement does not count as a write (a group member that then fails needs
// no rerun); a key that is not valid UTF-8 is Invalid and writes nothing.
func TestClaimIdempotencyKey(t *testing.T) {
	s := open(t, filepath.Join(t.TempDir(), "claim.db"), Config{})
	ctx := context.Background()
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	rec := func(fp string) idempotency.Record {
		return idempotency.Record{Scope: "u", Key: "k", Fingerprint: fp, Status: idempotency.StatusCompleted,
			ResponseStatus: 201, ResponseBody: []byte(`{"id":"` + fp + `"}`), ResourceID: fp, CreatedAt: at, ExpiresAt: at.Add(time.Hour)}
	}
	claim := func(r idempotency.Record) (bool, int, error) {
		var claimed bool
		var writes int
		err := s.InTx(ctx, func(ctx context.Context, stx store.Tx) error {
			var err error
			claimed, err = stx.(store.KeyClaimer).ClaimIdempotencyKey(ctx, r)
			writes = stx.(*tx).writes
			return err
		})
		return claimed, writes, err
	}
	if ok, w, err := claim(rec("first")); err != nil || !ok || w != 1 {
		t.Fatalf("a new key: claimed %v, %d writes, %v; want true, 1, nil", ok, w, err)
	}
	if ok, w, err := claim(rec("second")); err != nil || ok || w != 0 {
		t.Fatalf("an existing key: claimed %v, %d writes, %v; want false, 0, nil", ok, w, err)
	}
	var got idempotency.Record
	_ = s.View(ctx, func(ctx context.Context, tx store.Tx) error {
		var err error
		got, err = tx.GetIdempotencyKey(ctx, "u", "k")
		return err
	})
	if got.Fingerprint != "first" || string(got.ResponseBody) != `{"id":"first"}` {
		t.Fatalf("the existing key changed: %+v", got)
	}
	bad := rec("third")
	bad.Key = "k\xff"
	if ok, _, err := claim(bad); ok || !apperr.Is(err, apperr.Invalid) {
		t.Fatalf("a key that is not UTF-8: claimed %v, %v; want false, Invalid", ok, err)
	}
}
