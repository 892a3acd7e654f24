package saga

import (
	"testing"
	"time"
)

var t0 = time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)

// leased is a saga at step 1 that an advancer holds, with recovery's
// counts and a wait under way.
func leased() Instance {
	since := t0.Add(-time.Minute)
	return Instance{ID: "s", State: StateRunning, Step: 1, Attempts: 3, LeaseOwner: "adv", LeaseUntil: t0.Add(time.Minute),
		NextAttemptAt: t0.Add(-time.Second), UpdatedAt: t0.Add(-time.Second), Version: 7,
		Data: Data{Resends: 2, ResendVersion: 5, UnconsumedResends: 1, WaitingSinceUnixMilli: 99, Waits: 2, OutageSince: &since}}
}

func TestEveryTransitionIsOneVersion(t *testing.T) {
	now := t0
	for name, apply := range map[string]func(*Instance){
		"Lease":        func(i *Instance) { i.Lease("a", now.Add(time.Minute), now) },
		"ReleaseLease": func(i *Instance) { i.ReleaseLease() },
		"Moved":        func(i *Instance) { i.Moved("", now) },
		"Resent":       func(i *Instance) { i.Resent(now, now) },
		"Abandon":      func(i *Instance) { i.Abandon("stuck", now) },
		"Resume":       func(i *Instance) { i.Resume(now) },
	} {
		i := leased()
		apply(&i)
		if i.Version != 8 {
			t.Errorf("%s: version %d, want 8", name, i.Version)
		}
	}
	// The outcome transitions follow Moved in the same write.
	for name, apply := range map[string]func(*Instance){
		"Advance":        func(i *Instance) { i.Advance(4, now) },
		"Retry":          func(i *Instance) { i.Retry(Forward, now) },
		"Wait":           func(i *Instance) { i.Wait(Forward, now, now) },
		"CompensateFrom": func(i *Instance) { i.CompensateFrom(0, now) },
		"FailAt":         func(i *Instance) { i.FailAt(1, 2, "x", now) },
		"KeepLease":      func(i *Instance) { i.KeepLease("a", now) },
	} {
		i := leased()
		apply(&i)
		if i.Version != 7 {
			t.Errorf("%s: version %d, want 7 (no write of its own)", name, i.Version)
		}
	}
}

func TestLeaseStartsAPendingSaga(t *testing.T) {
	i := Instance{State: StatePending, Version: 1}
	i.Lease("adv", t0.Add(time.Minute), t0)
	if i.State != StateRunning || i.LeaseOwner != "adv" || !i.LeaseUntil.Equal(t0.Add(time.Minute)) || !i.UpdatedAt.Equal(t0) {
		t.Fatalf("leased: %+v", i)
	}
	c := Instance{State: StateCompensating, Version: 1}
	c.Lease("adv", t0.Add(time.Minute), t0)
	if c.State != StateCompensating {
		t.Fatalf("a compensating saga became %s", c.State)
	}
}

func TestMovedClearsLeaseAndRecoveryCounts(t *testing.T) {
	i := leased()
	i.LastError = "old"
	i.Moved("", t0)
	if i.LeaseOwner != "" || !i.LeaseUntil.IsZero() || !i.NextAttemptAt.Equal(t0) || !i.UpdatedAt.Equal(t0) {
		t.Fatalf("moved: %+v", i)
	}
	if d := i.Data; d.Resends != 0 || d.ResendVersion != 0 || d.UnconsumedResends != 0 || d.WaitingSinceUnixMilli != 0 {
		t.Fatalf("recovery counts kept: %+v", d)
	}
	if i.LastError != "old" || i.Data.Waits != 2 || i.Data.OutageSince == nil {
		t.Fatalf("Moved changed what the outcome decides: %+v", i)
	}
	i.Moved("boom", t0)
	if i.LastError != "boom" {
		t.Fatalf("last error %q", i.LastError)
	}
}

func TestAdvance(t *testing.T) {
	i := leased()
	i.Advance(4, t0)
	if i.Step != 2 || i.State != StateRunning || i.Attempts != 0 || i.Data.Waits != 0 || i.Data.OutageSince != nil || !i.FinishedAt.IsZero() {
		t.Fatalf("advanced: %+v", i)
	}
	i.Step = 3
	i.Advance(4, t0)
	if i.Step != 4 || i.State != StateCompleted || !i.FinishedAt.Equal(t0) {
		t.Fatalf("after the last step: %+v", i)
	}
}

func TestRetryAndWait(t *testing.T) {
	at := t0.Add(5 * time.Second)
	i := leased()
	i.Retry(Forward, at)
	if i.Attempts != 4 || i.Data.Waits != 2 || !i.NextAttemptAt.Equal(at) || i.State != StateRunning {
		t.Fatalf("retry: %+v", i)
	}
	c := leased()
	c.State = StateCompensating
	c.Retry(Compensate, at)
	if c.State != StateCompensating || c.Attempts != 4 {
		t.Fatalf("compensation retry: %+v", c)
	}

	w := leased()
	first := *w.Data.OutageSince
	w.Wait(Forward, at, t0)
	if w.Attempts != 4 || w.Data.Waits != 3 || !w.Data.OutageSince.Equal(first) || !w.NextAttemptAt.Equal(at) {
		t.Fatalf("a later wait moved the outage start or the budget: %+v", w)
	}
	n := Instance{State: StatePending}
	n.Wait(Forward, at, t0)
	if n.Data.Waits != 1 || n.Attempts != 1 || n.Data.OutageSince == nil || !n.Data.OutageSince.Equal(t0) || n.State != StateRunning {
		t.Fatalf("first wait: %+v", n)
	}
}

func TestCompensateFailAbandonResume(t *testing.T) {
	i := leased()
	i.CompensateFrom(0, t0)
	if i.State != StateCompensating || i.Step != 0 || i.Attempts != 0 || i.Data.Waits != 0 || i.Data.OutageSince != nil {
		t.Fatalf("compensate from 0: %+v", i)
	}
	i.CompensateFrom(-1, t0)
	if i.State != StateCompensated || i.Step != 0 || !i.FinishedAt.Equal(t0) {
		t.Fatalf("nothing left to compensate: %+v", i)
	}

	f := leased()
	f.FailAt(2, 9, "refund refused", t0)
	if f.State != StateFailed || f.Step != 2 || f.Attempts != 9 || f.LastError != "refund refused" || !f.FinishedAt.Equal(t0) {
		t.Fatalf("failed: %+v", f)
	}

	a := leased()
	a.Abandon("stuck", t0)
	if a.State != StateFailed || a.Step != 1 || a.LeaseOwner != "" || a.LastError != "stuck" || !a.FinishedAt.Equal(t0) {
		t.Fatalf("abandoned: %+v", a)
	}

	a.Data.Epoch = 3
	a.Resume(t0.Add(time.Hour))
	if a.State != StateCompensating || a.Step != 1 || a.Attempts != 0 || a.Data.Epoch != 4 || a.Data.Waits != 0 ||
		!a.FinishedAt.IsZero() || a.Data.Resends != 0 || !a.NextAttemptAt.Equal(t0.Add(time.Hour)) {
		t.Fatalf("resumed: %+v", a)
	}
}

func TestRedrivenRemembersItsWrite(t *testing.T) {
	i := leased()
	next := t0.Add(8 * time.Minute)
	i.Resent(next, t0)
	if i.LeaseOwner != "" || !i.NextAttemptAt.Equal(next) || !i.UpdatedAt.Equal(t0) || i.Data.ResendVersion != i.Version {
		t.Fatalf("redriven: %+v", i)
	}
	if i.Data.Resends != 2 || i.Data.UnconsumedResends != 1 {
		t.Fatalf("Redriven changed recovery's counts, which recovery decides: %+v", i.Data)
	}
}
