package redrive

import (
	"context"
	"reflect"
	"testing"
	"time"

	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/dlq"
	"ordersaga/shared/domain/saga"
)

func TestDiscardKeepsTheRecordAndPurgeRemovesOldOnes(t *testing.T) {
	f := newFixture(t)
	a := f.addDeadOutbox(t, "ev-1")
	b := f.addDeadOutbox(t, "ev-2")
	ctx := context.Background()

	rep, err := f.svc.Discard(ctx, "ops", []string{a}, "duplicate order, refunded by hand")
	if err != nil || rep.Changed != 1 {
		t.Fatalf("Discard = %+v, %v", rep, err)
	}
	if d := f.get(t, a); d.Status != dlq.StatusDiscarded || d.ResolvedBy != "ops" {
		t.Fatalf("discarded entry = %+v", d)
	}
	if rep, _ := f.svc.Discard(ctx, "ops", []string{a}, "again"); rep.Changed != 0 || rep.Items[0].Outcome != OutcomeAlreadyDiscarded {
		t.Fatalf("second discard = %+v", rep)
	}
	if r := f.mustRedrive(t, Selection{IDs: []string{a}}); r.Skipped != 1 {
		t.Fatalf("redrive of a discarded entry = %+v", r)
	}
	if _, err := f.svc.Delete(ctx, "admin", b); err != nil {
		t.Fatal(err)
	}
	if d := f.get(t, b); d.Status != dlq.StatusDiscarded {
		t.Fatalf("soft-deleted entry = %+v", d)
	}

	// Too young to purge.
	if rep, err := f.svc.Purge(ctx, "ops", 24*time.Hour, 10, false); err != nil || rep.Changed != 0 {
		t.Fatalf("early purge = %+v, %v", rep, err)
	}
	f.clock.Advance(25 * time.Hour)
	open := f.addDeadOutbox(t, "ev-3") // open entries are never purged
	before := f.snapshot(t, "audit")
	if rep, err := f.svc.Purge(ctx, "ops", 24*time.Hour, 10, true); err != nil || rep.Changed != 2 {
		t.Fatalf("dry purge = %+v, %v", rep, err)
	}
	if f.snapshot(t, "audit") != before {
		t.Fatal("a dry-run purge changed the database")
	}
	if rep, err := f.svc.Purge(ctx, "ops", 24*time.Hour, 1, false); err != nil || rep.Changed != 1 {
		t.Fatalf("purge max 1 = %+v, %v", rep, err)
	}
	if rep, err := f.svc.Purge(ctx, "ops", 24*time.Hour, 10, false); err != nil || rep.Changed != 1 {
		t.Fatalf("purge = %+v, %v", rep, err)
	}
	if all := f.all(t); len(all) != 1 || all[0].ID != open {
		t.Fatalf("left after purge: %+v", all)
	}
	var actions []string
	for _, r := range f.audit(t) {
		actions = append(actions, r.Action+":"+r.Outcome)
	}
	want := []string{"purge:ok", "purge:ok", "purge:dry_run", "purge:noop", "delete:deleted", "redrive:noop", "discard:noop", "discard:discarded"}
	if !reflect.DeepEqual(actions, want) {
		t.Fatalf("audit = %v, want %v", actions, want)
	}
	if _, err := f.svc.Purge(ctx, "ops", time.Hour, 10, false); !hasPointer(err, "/older_than") {
		t.Fatalf("purge younger than 24h: %v", err)
	}
}

func TestShowListAndStats(t *testing.T) {
	f := newFixture(t)
	sagaEntry := f.addFailedSaga(t, "s-1")
	f.addDeadOutbox(t, "ev-1")
	f.addEntry(t, dlq.SourceQueue, "m-1", nil)
	f.mustRedrive(t, Selection{IDs: []string{sagaEntry}, DryRun: true})
	ctx := context.Background()

	d, err := f.svc.Show(ctx, sagaEntry)
	if err != nil {
		t.Fatal(err)
	}
	if d.Saga == nil || d.Saga.State != saga.StateFailed || d.Saga.StepName != "" || len(d.History) != 1 ||
		len(d.Audit) != 1 || d.Audit[0].Outcome != "dry_run" || d.Correlation.IdempotencyKey != "key-s-1" ||
		string(d.Payload) != `{"ref":"s-1"}` {
		t.Fatalf("show = %+v", d)
	}
	if _, err := f.svc.Show(ctx, "missing"); !apperr.Is(err, apperr.NotFound) {
		t.Fatalf("show missing: %v", err)
	}

	page1, err := f.svc.List(ctx, dlq.Filter{}, dlq.Page{Limit: 2})
	if err != nil || len(page1.Entries) != 2 || page1.NextCursor == "" {
		t.Fatalf("page 1 = %+v, %v", page1, err)
	}
	page2, err := f.svc.List(ctx, dlq.Filter{}, dlq.Page{Limit: 2, Cursor: page1.NextCursor})
	if err != nil || len(page2.Entries) != 1 || page2.NextCursor != "" {
		t.Fatalf("page 2 = %+v, %v", page2, err)
	}
	if q, _ := f.svc.List(ctx, dlq.Filter{Source: dlq.SourceQueue}, dlq.Page{}); len(q.Entries) != 1 {
		t.Fatalf("queue filter = %+v", q)
	}

	st, err := f.svc.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Total != 3 || st.BySource["saga"] != 1 || st.ByStatus["open"] != 3 || st.ByErrorType["transient"] != 3 ||
		st.OpenBySource["queue"] != 1 || st.NotIngested[dlqName] != 0 {
		t.Fatalf("stats = %+v", st)
	}
}
