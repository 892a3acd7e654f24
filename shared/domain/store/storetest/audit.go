package storetest

import (
	"context"
	"sort"
	"testing"
	"time"

	"ordersaga/shared/domain/dlq"
	"ordersaga/shared/domain/store"
)

var auditTests = []subtest{
	{"round_trip_and_order", testAudit},
}

func testAudit(t *testing.T, s store.Store) {
	// Newer than anything another (earlier) run wrote, so ours are on top.
	base := time.Now().UTC().AddDate(50, 0, 0).Truncate(time.Second)
	recs := []dlq.AuditRecord{
		{ID: newID("audit"), At: base, Actor: "admin ✓", Action: "redrive",
			Params: []byte(`{"ids":["a","б"]}`), Count: 2, Outcome: "ok", Detail: []byte(`{"moved":2}`)},
		{ID: newID("audit"), At: base.Add(2*time.Second + 123456789*time.Nanosecond), Actor: "ops", Action: "discard"},
		{ID: newID("audit"), At: base.Add(time.Second), Params: []byte{}, Detail: nil},
	}
	mustTx(t, s, func(ctx context.Context, tx store.Tx) error {
		for _, a := range recs {
			if err := tx.InsertAudit(ctx, a); err != nil {
				return err
			}
		}
		return nil
	})
	want := []dlq.AuditRecord{recs[1], recs[2], recs[0]} // newest first
	mustView(t, s, func(ctx context.Context, tx store.Tx) error {
		got, err := tx.ListAudit(ctx, 100)
		if err != nil {
			return err
		}
		if !sort.SliceIsSorted(got, func(i, j int) bool { return got[i].At.After(got[j].At) }) {
			t.Errorf("ListAudit is not newest first")
		}
		mine := setOf(idsOf(recs, auditID)...)
		var gotMine []dlq.AuditRecord
		for _, a := range got {
			if mine[a.ID] {
				gotMine = append(gotMine, canonAudit(a, keep))
			}
		}
		wantCanon := make([]dlq.AuditRecord, len(want))
		for i, a := range want {
			wantCanon[i] = canonAudit(a, stored)
		}
		wantEqual(t, "ListAudit (ours)", gotMine, wantCanon)
		got, err = tx.ListAudit(ctx, 2)
		if err != nil {
			return err
		}
		if ids, w := idsOf(got, auditID), idsOf(want[:2], auditID); !equalIDs(ids, w) {
			t.Errorf("ListAudit(limit 2) = %v, want %v", ids, w)
		}
		return nil
	})
}

func auditID(a dlq.AuditRecord) string { return a.ID }
