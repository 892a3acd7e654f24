package maintenance_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"ordersaga/shared/app/jobs/maintenance"
	"ordersaga/shared/app/orchestrator"
	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/dlq"
	"ordersaga/shared/domain/queue"
	"ordersaga/shared/domain/store"
	"ordersaga/shared/kit/fakeclock"
)

type fakeRecovery struct {
	rep orchestrator.Report
	err error
}

func (f fakeRecovery) Run(context.Context) (orchestrator.Report, error) { return f.rep, f.err }

// fakeDeadLetters records the max each call got and fails if told to.
type fakeDeadLetters struct {
	ingestMax, resolveMax int
	err                   error
}

func (f *fakeDeadLetters) Ingest(_ context.Context, max int) (int, error) {
	f.ingestMax = max
	return 2, f.err
}

func (f *fakeDeadLetters) ResolveFinished(_ context.Context, max int) (int, error) {
	f.resolveMax = max
	return 1, f.err
}

// fakeStore runs closures on a fakeTx; the methods the job does not call
// are left to the embedded nil interfaces.
type fakeStore struct {
	store.Store
	tx *fakeTx
}

func (s fakeStore) InTx(ctx context.Context, fn func(context.Context, store.Tx) error) error {
	return fn(ctx, s.tx)
}

func (s fakeStore) View(ctx context.Context, fn func(context.Context, store.Tx) error) error {
	return fn(ctx, s.tx)
}

type fakeTx struct {
	store.Tx
	before time.Time
	limit  int
	open   map[dlq.Source]int // open entries per source, served one per page
}

func (t *fakeTx) DeletePublishedOutbox(_ context.Context, before time.Time, limit int) (int, error) {
	t.before, t.limit = before, limit
	return 3, nil
}

func (t *fakeTx) ListDeadLetters(_ context.Context, f dlq.Filter, p dlq.Page) ([]dlq.DeadLetter, string, error) {
	if f.Status != dlq.StatusOpen || p.Limit != 1000 {
		return nil, "", errors.New("the gauge reads only open entries, 1000 a page")
	}
	n := t.open[f.Source]
	if n == 0 {
		return nil, "", nil
	}
	t.open[f.Source] = n - 1
	next := "more"
	if n == 1 {
		next = ""
	}
	return []dlq.DeadLetter{{}}, next, nil
}

type fakeQueue struct{ queue.Queue }

func (fakeQueue) Depth(context.Context, string) (int, int, error) { return 4, 1, nil }

func TestNewRefusesMissingPortsAndNegativeSettings(t *testing.T) {
	ok := maintenance.Config{Recovery: fakeRecovery{}, DeadLetters: &fakeDeadLetters{}, Store: fakeStore{}}
	if _, err := maintenance.New(ok); err != nil {
		t.Fatalf("zero settings (the defaults): %v", err)
	}
	for name, mutate := range map[string]func(*maintenance.Config){
		"no recovery":        func(c *maintenance.Config) { c.Recovery = nil },
		"no dead letters":    func(c *maintenance.Config) { c.DeadLetters = nil },
		"no store":           func(c *maintenance.Config) { c.Store = nil },
		"negative retention": func(c *maintenance.Config) { c.Retention = -time.Hour },
		"negative purge":     func(c *maintenance.Config) { c.PurgeLimit = -1 },
		"negative dl limit":  func(c *maintenance.Config) { c.DeadLetterLimit = -1 },
	} {
		c := ok
		mutate(&c)
		if _, err := maintenance.New(c); !apperr.Is(err, apperr.Invalid) {
			t.Errorf("%s: err = %v, want Invalid", name, err)
		}
	}
	// One error names every bad field.
	_, err := maintenance.New(maintenance.Config{Retention: -time.Hour, PurgeLimit: -1, DeadLetterLimit: -2})
	for _, want := range []string{"maintenance.New", "Recovery is required", "DeadLetters is required", "Store is required",
		"Retention must not be negative (got -1h0m0s)", "PurgeLimit must not be negative (got -1)",
		"DeadLetterLimit must not be negative (got -2)"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("err = %v, want it to contain %q", err, want)
		}
	}
}

// A run does every job with its bound, even when the saga recovery failed,
// returns the recovery's error, and reports each dead-letter count.
func TestRunDoesEveryJobWithinItsBounds(t *testing.T) {
	clock := fakeclock.New(time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC))
	tx := &fakeTx{open: map[dlq.Source]int{dlq.SourceQueue: 2, dlq.SourceSaga: 7}}
	dl := &fakeDeadLetters{}
	boom := errors.New("one saga cannot be repaired")
	var logs bytes.Buffer
	sizes := map[string]int{}
	var seen orchestrator.Report
	j, err := maintenance.New(maintenance.Config{
		Recovery: fakeRecovery{rep: orchestrator.Report{Resent: 1, Errors: 1}, err: boom}, DeadLetters: dl,
		Store: fakeStore{tx: tx}, Queue: fakeQueue{}, SagaDLQURL: "dlq-url", Retention: 24 * time.Hour,
		Now: clock.Now, Log: slog.New(slog.NewJSONHandler(&logs, nil)),
		OnRecovery:       func(r orchestrator.Report) { seen = r },
		OnDeadLetterSize: func(q string, n int) { sizes[q] = n },
	})
	if err != nil {
		t.Fatal(err)
	}
	start := clock.Now()
	rep, err := j.Run(context.Background())
	if !errors.Is(err, boom) {
		t.Errorf("err = %v, want the recovery's", err)
	}
	if rep.Resent != 1 || seen.Resent != 1 || rep.OutboxPurged != 3 || rep.DLQIngested != 2 || rep.DeadLettersResolved != 1 {
		t.Errorf("report %+v (hook saw %+v)", rep, seen)
	}
	if tx.limit != maintenance.DefaultPurgeLimit {
		t.Errorf("purge limit %d, want DefaultPurgeLimit (1000)", tx.limit)
	}
	if want := start.Add(-24 * time.Hour); tx.before.After(want.Add(time.Second)) || tx.before.Before(want) {
		t.Errorf("purge cutoff %v, want the retention before now (%v)", tx.before, want)
	}
	if dl.ingestMax != 100 || dl.resolveMax != 100 {
		t.Errorf("ingest max %d, resolve max %d, want DefaultDeadLetterLimit (100)", dl.ingestMax, dl.resolveMax)
	}
	want := map[string]int{"queue": 2, "outbox": 0, "saga": 5, "saga-commands-dlq": 5}
	for q, n := range want {
		if sizes[q] != n {
			t.Errorf("dlq size %s = %d, want %d (saga's count stops at 5 pages)", q, sizes[q], n)
		}
	}
	if !strings.Contains(logs.String(), "saga recovery finished with errors") {
		t.Errorf("the failed recovery was not logged: %s", logs.String())
	}
}
