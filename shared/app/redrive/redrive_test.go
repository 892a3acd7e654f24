package redrive

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
	"time"

	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/dlq"
	"ordersaga/shared/domain/outbox"
	"ordersaga/shared/domain/saga"
	"ordersaga/shared/domain/store"
)

func TestDryRunChangesNothingButItsAudit(t *testing.T) {
	f := newFixture(t)
	f.addEntry(t, dlq.SourceQueue, "m-1", nil)
	f.addDeadOutbox(t, "ev-1")
	f.addFailedSaga(t, "s-1")
	before := f.snapshot(t, "audit")
	auditBefore := f.count(t, "audit")

	rep := f.mustRedrive(t, Selection{All: true, DryRun: true})
	if rep.Selected != 3 || rep.WouldRedrive != 3 || rep.Redriven != 0 || !rep.DryRun {
		t.Fatalf("dry run report = %+v", rep)
	}
	for _, it := range rep.Items {
		if it.Outcome != OutcomeWouldRedrive || it.Action == "" {
			t.Errorf("item %+v", it)
		}
	}
	if after := f.snapshot(t, "audit"); after != before {
		t.Fatalf("dry run changed the database:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	if len(f.sleeps) != 0 {
		t.Fatalf("dry run paused %v", f.sleeps)
	}
	audit := f.audit(t)
	if len(audit) != auditBefore+1 || audit[0].Outcome != "dry_run" || audit[0].Action != "redrive" ||
		audit[0].Actor != "ops@example" || audit[0].Count != 3 || audit[0].ID != rep.AuditID {
		t.Fatalf("audit = %+v", audit)
	}
}

func TestMaxIsRespected(t *testing.T) {
	f := newFixture(t)
	for i := 0; i < 5; i++ {
		f.addDeadOutbox(t, fmt.Sprintf("ev-%d", i))
		f.clock.Advance(time.Second)
	}
	rep := f.mustRedrive(t, Selection{Filter: dlq.Filter{Source: dlq.SourceOutbox}, All: true, Max: 3})
	if rep.Selected != 3 || rep.Redriven != 3 {
		t.Fatalf("report = %+v", rep)
	}
	open := 0
	for _, d := range f.all(t) {
		if d.Status == dlq.StatusOpen {
			open++
		}
	}
	if open != 2 {
		t.Fatalf("%d entries still open, want 2", open)
	}
	// Newest failures first.
	if want := []string{"ev-4", "ev-3", "ev-2"}; !reflect.DeepEqual(refs(rep), want) {
		t.Fatalf("selected %v, want %v", refs(rep), want)
	}
}

func refs(rep Report) []string {
	var out []string
	for _, it := range rep.Items {
		out = append(out, it.SourceRef)
	}
	return out
}

func TestRateIsRespected(t *testing.T) {
	tests := []struct {
		name string
		rate float64
		want time.Duration
	}{
		{"two per second", 2, 500 * time.Millisecond},
		{"default", 0, 100 * time.Millisecond},
		{"slow", 0.5, 2 * time.Second},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			for i := 0; i < 4; i++ {
				f.addDeadOutbox(t, fmt.Sprintf("ev-%d", i))
			}
			f.addEntry(t, dlq.SourceOutbox, "gone", nil) // fails (no row to reset) but still counts as a request
			rep := f.mustRedrive(t, Selection{All: true, RatePerSec: tc.rate})
			if rep.Redriven != 4 {
				t.Fatalf("report = %+v", rep)
			}
			// One pause between two consecutive attempts: 1 failure then 4 redrives → 4 pauses.
			want := []time.Duration{tc.want, tc.want, tc.want, tc.want}
			if !reflect.DeepEqual(f.sleeps, want) {
				t.Fatalf("pauses = %v, want %v", f.sleeps, want)
			}
		})
	}
}

func TestRedriveStopsBeforeTheDeadline(t *testing.T) {
	f := newFixture(t)
	for i := 0; i < 3; i++ {
		f.addDeadOutbox(t, fmt.Sprintf("ev-%d", i))
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	rep, err := f.svc.Redrive(ctx, "ops", Selection{All: true, RatePerSec: 1})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Redriven != 1 || rep.NotReached != 2 || rep.Stopped != "deadline" {
		t.Fatalf("report = %+v", rep)
	}
	if a := f.audit(t); a[0].Outcome != "partial" {
		t.Fatalf("audit outcome = %q", a[0].Outcome)
	}
}

func TestOutboxRedriveResetsTheRow(t *testing.T) {
	f := newFixture(t)
	id := f.addDeadOutbox(t, "ev-1")
	f.clock.Advance(time.Minute)
	now := f.clock.Now()
	rep := f.mustRedrive(t, Selection{IDs: []string{id}})
	if rep.Redriven != 1 {
		t.Fatalf("report = %+v", rep)
	}
	var e outbox.Event
	f.tx(t, func(ctx context.Context, tx store.Tx) error {
		var err error
		e, err = tx.GetOutbox(ctx, "ev-1")
		return err
	})
	if e.Status != outbox.StatusPending || e.Attempts != 0 || !e.NextAttemptAt.Equal(now) || e.LeaseOwner != "" ||
		!e.LeaseUntil.IsZero() || e.Version != 13 {
		t.Fatalf("outbox row = %+v", e)
	}
	d := f.get(t, id)
	if d.Status != dlq.StatusRedriven || d.RedriveCount != 1 || !d.ResolvedAt.Equal(now) || d.ResolvedBy != "ops@example" {
		t.Fatalf("entry = %+v", d)
	}
	// The relay now sees the row as due.
	var due []outbox.Event
	f.tx(t, func(ctx context.Context, tx store.Tx) error {
		var err error
		due, err = tx.ListOutboxDue(ctx, 0, now, 10)
		return err
	})
	if len(due) != 1 || due[0].ID != "ev-1" {
		t.Fatalf("due rows = %+v", due)
	}
}

func TestSagaRedriveResumesCompensation(t *testing.T) {
	f := newFixture(t)
	id := f.addFailedSaga(t, "s-1")
	f.clock.Advance(time.Minute)
	now := f.clock.Now()
	if rep := f.mustRedrive(t, Selection{IDs: []string{id}}); rep.Redriven != 1 {
		t.Fatalf("report = %+v", rep)
	}
	var inst saga.Instance
	var due []outbox.Event
	f.tx(t, func(ctx context.Context, tx store.Tx) error {
		var err error
		if inst, err = tx.GetSaga(ctx, "s-1"); err != nil {
			return err
		}
		due, err = tx.ListOutboxDue(ctx, 0, now, 10)
		return err
	})
	if inst.State != saga.StateCompensating || inst.Step != 2 || inst.Attempts != 0 || !inst.NextAttemptAt.Equal(now) ||
		inst.LeaseOwner != "" || !inst.LeaseUntil.IsZero() || inst.LastError != "refund failed" ||
		!inst.FinishedAt.IsZero() || inst.Version != 8 {
		t.Fatalf("saga = %+v", inst)
	}
	if len(due) != 1 {
		t.Fatalf("%d outbox rows, want 1", len(due))
	}
	e := due[0]
	var token map[string]any
	if err := json.Unmarshal(e.Payload, &token); err != nil {
		t.Fatal(err)
	}
	wantToken := map[string]any{"saga_id": "s-1", "reason": "redrive", "state": "compensating", "step": 2.0, "attempt": 0.0, "epoch": 1.0}
	wantMeta := map[string]string{outbox.AttrSagaID: "s-1", outbox.AttrOrderID: "o-s-1",
		outbox.AttrIdempotencyKey: "key-s-1", outbox.AttrCorrelationID: "key-s-1"}
	if !reflect.DeepEqual(token, wantToken) || e.EventType != outbox.TypeSagaAdvance || e.Destination != outbox.DestSagaCommands ||
		e.AggregateID != "s-1" || e.AggregateType != "saga" || !reflect.DeepEqual(e.Metadata, wantMeta) || e.Status != outbox.StatusPending {
		t.Fatalf("outbox row = %+v, token %v", e, token)
	}
	if d := f.get(t, id); d.Status != dlq.StatusRedriven || d.RedriveCount != 1 {
		t.Fatalf("entry = %+v", d)
	}
}

func TestRedriveSkipsWhatIsNoLongerDead(t *testing.T) {
	f := newFixture(t)
	sagaEntry := f.addFailedSaga(t, "s-1")
	outboxEntry := f.addDeadOutbox(t, "ev-1")
	f.tx(t, func(ctx context.Context, tx store.Tx) error {
		s, _ := tx.GetSaga(ctx, "s-1")
		prev := s.Version
		s.State, s.Version = saga.StateCompensated, prev+1
		if err := tx.UpdateSaga(ctx, s, prev); err != nil {
			return err
		}
		e, _ := tx.GetOutbox(ctx, "ev-1")
		prevE := e.Version
		e.Status, e.Version = outbox.StatusPublished, prevE+1
		return tx.UpdateOutbox(ctx, e, prevE)
	})
	before := f.snapshot(t, "audit")
	rep := f.mustRedrive(t, Selection{IDs: []string{sagaEntry, outboxEntry}})
	if rep.Skipped != 2 || rep.Redriven != 0 {
		t.Fatalf("report = %+v", rep)
	}
	if f.snapshot(t, "audit") != before {
		t.Fatal("a skipped redrive changed the database")
	}
}

func TestRedriveRejectsBadSelectionsAndChangesNothing(t *testing.T) {
	f := newFixture(t)
	id := f.addDeadOutbox(t, "ev-1")
	tru := true
	tests := []struct {
		name string
		sel  Selection
		kind apperr.Kind
		ptr  string
	}{
		{"nothing selected", Selection{}, apperr.Invalid, "/ids"},
		{"source only", Selection{Filter: dlq.Filter{Source: dlq.SourceQueue}}, apperr.Invalid, "/ids"},
		{"ids and all", Selection{IDs: []string{id}, All: true}, apperr.Invalid, "/ids"},
		{"unknown id", Selection{IDs: []string{id, "nope"}}, apperr.NotFound, "/ids/1"},
		{"max too big", Selection{All: true, Max: 51}, apperr.Invalid, "/max"},
		{"rate too high", Selection{All: true, RatePerSec: 21}, apperr.Invalid, "/rate_per_sec"},
		{"rate negative", Selection{All: true, RatePerSec: -1}, apperr.Invalid, "/rate_per_sec"},
		{"force by filter", Selection{All: true, Force: true}, apperr.Invalid, "/force"},
		{"flagged by filter", Selection{Filter: dlq.Filter{Flagged: &tru}}, apperr.Invalid, "/filter/flagged"},
		{"discarded by filter", Selection{Filter: dlq.Filter{Status: dlq.StatusDiscarded}}, apperr.Invalid, "/filter/status"},
	}
	before := f.snapshot(t)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := f.svc.Redrive(context.Background(), "ops", tc.sel)
			if apperr.KindOf(err) != tc.kind || !hasPointer(err, tc.ptr) {
				t.Fatalf("err = %v (fields %v), want %v at %s", err, apperr.Fields(err), tc.kind, tc.ptr)
			}
		})
	}
	if _, err := f.svc.Redrive(context.Background(), "", Selection{All: true}); !hasPointer(err, "/actor") {
		t.Fatalf("no actor: %v", err)
	}
	if f.snapshot(t) != before {
		t.Fatal("a refused redrive changed the database")
	}
}

func hasPointer(err error, ptr string) bool {
	for _, fe := range apperr.Fields(err) {
		if fe.Pointer == ptr {
			return true
		}
	}
	return false
}
