package sqlitestore

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/dlq"
	"ordersaga/shared/domain/store"
)

func audit(ctx context.Context, tx store.Tx, id string) error {
	return tx.InsertAudit(ctx, dlq.AuditRecord{ID: id, At: time.Unix(1700000000, 0), Actor: "t", Action: "a", Outcome: "ok"})
}

func auditIDs(t *testing.T, s *Store) []string {
	t.Helper()
	rows, err := s.DB().Query(`SELECT id FROM audit ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	return ids
}

// holdWriter starts a transaction (writing the audit row "holder") that
// keeps the writer until release is called, so callers arriving meanwhile
// queue up and run as one group. wg tracks it.
func holdWriter(t *testing.T, s *Store, wg *sync.WaitGroup) (release func()) {
	t.Helper()
	hold, holding := make(chan struct{}), make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		if err := s.InTx(context.Background(), func(ctx context.Context, tx store.Tx) error {
			close(holding)
			<-hold
			return audit(ctx, tx, "holder")
		}); err != nil {
			t.Errorf("holder: %v", err)
		}
	}()
	<-holding
	return func() { close(hold) }
}

// waitQueued waits until n callers wait for the writer.
func waitQueued(s *Store, n int) {
	for {
		s.w.mu.Lock()
		queued := len(s.w.waiting)
		s.w.mu.Unlock()
		if queued >= n {
			return
		}
		runtime.Gosched()
	}
}

// Callers that wait while the writer is busy run as one transaction: one
// COMMIT for all of them, and each caller's outcome is its own — an error
// or a panic undoes only that caller's writes, a caller whose context ended
// while waiting writes nothing, and everyone else's writes are committed.
func TestWaitingTransactionsCommitAsOneGroup(t *testing.T) {
	s := open(t, filepath.Join(t.TempDir(), "g.db"), Config{})
	ctx := context.Background()
	var wg sync.WaitGroup
	release := holdWriter(t, s, &wg)
	commits := func() int { s.w.mu.Lock(); defer s.w.mu.Unlock(); return s.w.commits }
	before := commits()

	refused := apperr.New(apperr.Rejected, "refused")
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	type result struct {
		name     string
		err      error
		panicked any
	}
	results := make(chan result, 8)
	members := map[string]struct {
		ctx context.Context
		fn  func(context.Context, store.Tx) error
	}{
		"ok-1":      {ctx, func(ctx context.Context, tx store.Tx) error { return audit(ctx, tx, "ok-1") }},
		"ok-2":      {ctx, func(ctx context.Context, tx store.Tx) error { return audit(ctx, tx, "ok-2") }},
		"refuses":   {ctx, func(ctx context.Context, tx store.Tx) error { _ = audit(ctx, tx, "refuses"); return refused }},
		"panics":    {ctx, func(ctx context.Context, tx store.Tx) error { _ = audit(ctx, tx, "panics"); panic("boom") }},
		"cancelled": {cancelled, func(ctx context.Context, tx store.Tx) error { return audit(ctx, tx, "cancelled") }},
		// The same row as ok-1: whichever runs second sees the first's write.
		"dup-ok-1": {ctx, func(ctx context.Context, tx store.Tx) error { return audit(ctx, tx, "ok-1") }},
	}
	for name, m := range members {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() {
				if p := recover(); p != nil {
					results <- result{name: name, panicked: p}
				}
			}()
			results <- result{name: name, err: s.InTx(m.ctx, m.fn)}
		}()
	}
	waitQueued(s, len(members)) // every member is queued behind the holder
	release()
	wg.Wait()
	close(results)

	if got := commits() - before; got != 2 {
		t.Errorf("%d commits for the holder and %d waiting callers, want 2 (the holder, then one group)", got, len(members))
	}
	got := map[string]result{}
	for r := range results {
		got[r.name] = r
	}
	for name, want := range map[string]func(result) bool{
		"ok-2":      func(r result) bool { return r.err == nil && r.panicked == nil },
		"refuses":   func(r result) bool { return errors.Is(r.err, refused) },
		"panics":    func(r result) bool { return fmt.Sprint(r.panicked) == "boom" },
		"cancelled": func(r result) bool { return errors.Is(r.err, context.Canceled) },
	} {
		if !want(got[name]) {
			t.Errorf("%s: err %v, panic %v", name, got[name].err, got[name].panicked)
		}
	}
	a, b := got["ok-1"].err, got["dup-ok-1"].err
	if (a == nil) == (b == nil) || !apperr.Is(errors.Join(a, b), apperr.Conflict) {
		t.Errorf("two inserts of one row in a group: %v and %v, want one success and one Conflict", a, b)
	}
	ids := auditIDs(t, s)
	sort.Strings(ids)
	if strings.Join(ids, ",") != "holder,ok-1,ok-2" {
		t.Errorf("committed rows %v, want holder, ok-1, ok-2 (refused, panicked and cancelled callers leave nothing)", ids)
	}
}

// A group whose members either succeed or fail before writing anything
// commits in one pass without savepoints (no rerun); one whose member fails
// after a write is run again with savepoints, and only that member's writes
// vanish.
func TestGroupRunsWithoutSavepointsUnlessAMemberMustBeUndone(t *testing.T) {
	for _, tc := range []struct {
		name       string
		dirty      bool
		wantReruns int
		wantIDs    string
	}{{"clean failure", false, 0, "a,b,holder"}, {"failure after a write", true, 1, "a,b,holder"}} {
		t.Run(tc.name, func(t *testing.T) {
			s := open(t, filepath.Join(t.TempDir(), "g.db"), Config{})
			ctx := context.Background()
			var wg sync.WaitGroup
			release := holdWriter(t, s, &wg)
			refused := apperr.New(apperr.Rejected, "refused")
			fns := []func(context.Context, store.Tx) error{
				func(ctx context.Context, tx store.Tx) error { return audit(ctx, tx, "a") },
				func(ctx context.Context, tx store.Tx) error {
					if _, err := tx.GetOrder(ctx, "none"); !apperr.Is(err, apperr.NotFound) {
						return err
					}
					if tc.dirty {
						_ = audit(ctx, tx, "undone")
					}
					return refused
				},
				func(ctx context.Context, tx store.Tx) error { return audit(ctx, tx, "b") },
			}
			errs := make([]error, len(fns))
			for i, fn := range fns {
				wg.Add(1)
				go func() { defer wg.Done(); errs[i] = s.InTx(ctx, fn) }()
			}
			waitQueued(s, len(fns))
			release()
			wg.Wait()
			if errs[0] != nil || errs[2] != nil || !errors.Is(errs[1], refused) {
				t.Fatalf("outcomes %v", errs)
			}
			s.w.mu.Lock()
			reruns, commits := s.w.reruns, s.w.commits
			s.w.mu.Unlock()
			if reruns != tc.wantReruns || commits != 2 {
				t.Errorf("%d reruns and %d commits, want %d and 2 (the holder, then the group)", reruns, commits, tc.wantReruns)
			}
			ids := auditIDs(t, s)
			sort.Strings(ids)
			if strings.Join(ids, ",") != tc.wantIDs {
				t.Errorf("committed rows %v, want %s", ids, tc.wantIDs)
			}
		})
	}
}
