package resilience

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"ordersaga/shared/domain/apperr"
)

// fakeClock is a manually advanced, concurrency-safe clock.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

type transition struct{ from, to State }

// newTestBreaker returns a breaker on a fake clock recording its transitions.
func newTestBreaker(cfg BreakerConfig) (*Breaker, *fakeClock, *[]transition) {
	clock := newFakeClock()
	var mu sync.Mutex
	var log []transition
	cfg.Now = clock.Now
	cfg.OnStateChange = func(name string, from, to State) {
		if name != "dep" {
			panic("wrong breaker name " + name)
		}
		mu.Lock()
		log = append(log, transition{from, to})
		mu.Unlock()
	}
	cfg.Name = "dep"
	b, err := NewBreaker(cfg)
	if err != nil {
		panic(err)
	}
	return b, clock, &log
}

// mustBreaker returns NewBreaker(cfg) or fails t.
func mustBreaker(t *testing.T, cfg BreakerConfig) *Breaker {
	t.Helper()
	b, err := NewBreaker(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// mustBulkhead returns NewBulkhead(cfg) or fails t.
func mustBulkhead(t *testing.T, cfg BulkheadConfig) *Bulkhead {
	t.Helper()
	b, err := NewBulkhead(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func ok(context.Context) error   { return nil }
func fail(context.Context) error { return errBusy }

func mustState(t *testing.T, b *Breaker, want State) {
	t.Helper()
	if got := b.State(); got != want {
		t.Fatalf("State() = %v, want %v", got, want)
	}
}

func mustOpenErr(t *testing.T, err error) {
	t.Helper()
	if !errors.Is(err, ErrOpen) || !apperr.Is(err, apperr.Transient) {
		t.Fatalf("err = %v, want a transient ErrOpen", err)
	}
}

func TestBreakerStateMachine(t *testing.T) {
	b, clock, log := newTestBreaker(BreakerConfig{FailureThreshold: 3, OpenTimeout: 10 * time.Second, SuccessesToClose: 2})
	ctx := context.Background()

	// Closed: failures must be consecutive.
	_ = b.Execute(ctx, fail)
	_ = b.Execute(ctx, fail)
	if err := b.Execute(ctx, ok); err != nil {
		t.Fatalf("closed call: %v", err)
	}
	_ = b.Execute(ctx, fail)
	_ = b.Execute(ctx, fail)
	mustState(t, b, StateClosed)
	if err := b.Execute(ctx, fail); !errors.Is(err, errBusy) {
		t.Fatalf("third failure returned %v, want fn's error unchanged", err)
	}
	mustState(t, b, StateOpen)

	// Open: fail fast without calling fn, with a hint of the remaining time.
	clock.Advance(4 * time.Second)
	called := false
	err := b.Execute(ctx, func(context.Context) error { called = true; return nil })
	mustOpenErr(t, err)
	if called {
		t.Fatal("fn called while open")
	}
	var oe *OpenError
	if !errors.As(err, &oe) || oe.RetryAfter() != 6*time.Second || oe.Name != "dep" {
		t.Fatalf("OpenError = %+v, want name dep and 6s remaining", oe)
	}
	clock.Advance(6*time.Second - time.Nanosecond)
	mustState(t, b, StateOpen)
	clock.Advance(time.Nanosecond)
	mustState(t, b, StateHalfOpen)

	// Half-Open: a failed probe re-opens with a fresh timeout.
	_ = b.Execute(ctx, fail)
	mustState(t, b, StateOpen)
	clock.Advance(9 * time.Second)
	mustOpenErr(t, b.Execute(ctx, ok))
	clock.Advance(time.Second)

	// Two successful probes close it; one is not enough.
	if err := b.Execute(ctx, ok); err != nil {
		t.Fatalf("probe 1: %v", err)
	}
	mustState(t, b, StateHalfOpen)
	if err := b.Execute(ctx, ok); err != nil {
		t.Fatalf("probe 2: %v", err)
	}
	mustState(t, b, StateClosed)

	// Closed again with a fresh failure count.
	_ = b.Execute(ctx, fail)
	_ = b.Execute(ctx, fail)
	mustState(t, b, StateClosed)

	want := []transition{
		{StateClosed, StateOpen}, {StateOpen, StateHalfOpen}, {StateHalfOpen, StateOpen},
		{StateOpen, StateHalfOpen}, {StateHalfOpen, StateClosed},
	}
	if len(*log) != len(want) {
		t.Fatalf("transitions = %v, want %v", *log, want)
	}
	for i := range want {
		if (*log)[i] != want[i] {
			t.Errorf("transition %d = %v→%v, want %v→%v", i, (*log)[i].from, (*log)[i].to, want[i].from, want[i].to)
		}
	}
}

func TestBreakerCallerErrorsDoNotTrip(t *testing.T) {
	b, _, _ := newTestBreaker(BreakerConfig{FailureThreshold: 2})
	ctx := context.Background()
	for _, k := range []apperr.Kind{apperr.Invalid, apperr.NotFound, apperr.Conflict, apperr.Rejected, apperr.Forbidden, apperr.Unauthenticated} {
		for i := 0; i < 3; i++ {
			_ = b.Execute(ctx, func(context.Context) error { return apperr.New(k, "caller error") })
		}
		mustState(t, b, StateClosed)
	}
	// A caller error also proves the dependency answered: it breaks a failure run.
	_ = b.Execute(ctx, fail)
	_ = b.Execute(ctx, func(context.Context) error { return apperr.New(apperr.NotFound, "x") })
	_ = b.Execute(ctx, fail)
	mustState(t, b, StateClosed)
	// Internal and unclassified errors do count.
	_ = b.Execute(ctx, func(context.Context) error { return errors.New("boom") })
	mustState(t, b, StateOpen)
}

func TestDefaultIsFailure(t *testing.T) {
	tests := []struct {
		err  error
		want bool
	}{
		{nil, false},
		{errBusy, true},
		{apperr.New(apperr.Internal, "x"), true},
		{apperr.New(apperr.TooLarge, "x"), true},
		{errors.New("x"), true},
		{context.DeadlineExceeded, true},
		{apperr.New(apperr.Conflict, "x"), false},
		{apperr.New(apperr.Unauthenticated, "x"), false},
	}
	for _, tt := range tests {
		if got := DefaultIsFailure(tt.err); got != tt.want {
			t.Errorf("DefaultIsFailure(%v) = %v, want %v", tt.err, got, tt.want)
		}
	}
}

// openThenHalfOpen trips b (threshold 1) and advances past its open timeout.
func openThenHalfOpen(t *testing.T, b *Breaker, clock *fakeClock) {
	t.Helper()
	_ = b.Execute(context.Background(), fail)
	mustState(t, b, StateOpen)
	clock.Advance(time.Minute)
	mustState(t, b, StateHalfOpen)
}

func TestBreakerExactlyOneProbe(t *testing.T) {
	const n = 32
	b, clock, _ := newTestBreaker(BreakerConfig{FailureThreshold: 1, OpenTimeout: time.Second, SuccessesToClose: 1})
	openThenHalfOpen(t, b, clock)

	var admitted atomic.Int32
	release := make(chan struct{})
	results := make(chan error, n)
	var start sync.WaitGroup
	start.Add(1)
	for i := 0; i < n; i++ {
		go func() {
			start.Wait()
			results <- b.Execute(context.Background(), func(context.Context) error {
				admitted.Add(1)
				<-release // hold the probe in flight
				return nil
			})
		}()
	}
	start.Done()

	// Everyone but the probe must be refused while the probe is held.
	timeout := time.After(10 * time.Second) // only reached if the breaker is broken
	for i := 0; i < n-1; i++ {
		select {
		case err := <-results:
			mustOpenErr(t, err)
		case <-timeout:
			t.Fatalf("only %d of %d callers were refused; admitted %d", i, n-1, admitted.Load())
		}
	}
	if got := admitted.Load(); got != 1 {
		t.Fatalf("admitted = %d, want exactly 1 probe", got)
	}
	mustState(t, b, StateHalfOpen)
	close(release)
	if err := <-results; err != nil {
		t.Fatalf("probe: %v", err)
	}
	mustState(t, b, StateClosed)
}

func TestBreakerIgnoresStaleResults(t *testing.T) {
	b, clock, _ := newTestBreaker(BreakerConfig{FailureThreshold: 1, OpenTimeout: time.Second, SuccessesToClose: 1})
	started, release, done := make(chan struct{}), make(chan struct{}), make(chan error)
	go func() {
		done <- b.Execute(context.Background(), func(context.Context) error {
			close(started)
			<-release
			return nil // a success from the Closed era
		})
	}()
	<-started
	openThenHalfOpen(t, b, clock)
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	// The old success must neither close the breaker nor take the probe slot.
	mustState(t, b, StateHalfOpen)
	if err := b.Execute(context.Background(), ok); err != nil {
		t.Fatalf("probe refused after stale result: %v", err)
	}
	mustState(t, b, StateClosed)
}

func TestBreakerProbePanicReleasesSlot(t *testing.T) {
	b, clock, _ := newTestBreaker(BreakerConfig{FailureThreshold: 1, OpenTimeout: time.Second, SuccessesToClose: 1})
	openThenHalfOpen(t, b, clock)
	func() {
		defer func() {
			if recover() == nil {
				t.Fatal("panic was swallowed")
			}
		}()
		_ = b.Execute(context.Background(), func(context.Context) error { panic("boom") })
	}()
	mustState(t, b, StateOpen)
	clock.Advance(time.Second)
	if err := b.Execute(context.Background(), ok); err != nil {
		t.Fatalf("probe after panic: %v", err)
	}
	mustState(t, b, StateClosed)
}

func TestBreakerCallerCancellationIsNeutral(t *testing.T) {
	b, clock, _ := newTestBreaker(BreakerConfig{FailureThreshold: 1, OpenTimeout: time.Second, SuccessesToClose: 1})
	cancelled := func(ctx context.Context) error {
		ctx, cancel := context.WithCancel(ctx)
		return b.Execute(ctx, func(ctx context.Context) error { cancel(); return ctx.Err() })
	}
	if err := cancelled(context.Background()); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	mustState(t, b, StateClosed)

	openThenHalfOpen(t, b, clock)
	_ = cancelled(context.Background())
	mustState(t, b, StateHalfOpen)
	if err := b.Execute(context.Background(), ok); err != nil {
		t.Fatalf("probe slot leaked by a cancelled probe: %v", err)
	}
	mustState(t, b, StateClosed)
}

func TestBreakerDefaults(t *testing.T) {
	b := mustBreaker(t, BreakerConfig{Name: "d"})
	for i := 0; i < DefaultFailureThreshold-1; i++ {
		_ = b.Execute(context.Background(), fail)
	}
	mustState(t, b, StateClosed)
	_ = b.Execute(context.Background(), fail)
	mustState(t, b, StateOpen)
	if b.Name() != "d" {
		t.Errorf("Name() = %q", b.Name())
	}
}

func TestStateString(t *testing.T) {
	for s, want := range map[State]string{StateClosed: "closed", StateOpen: "open", StateHalfOpen: "half_open", State(9): "state(9)"} {
		if got := s.String(); got != want {
			t.Errorf("%d.String() = %q, want %q", int(s), got, want)
		}
	}
}

// TestBreakerAnnouncesItselfAndLogsTransitions: OnInit reports the initial
// Closed state at construction (so metrics export the series from the
// start), and every transition is logged at warn with the dependency name.
func TestBreakerAnnouncesItselfAndLogsTransitions(t *testing.T) {
	var buf bytes.Buffer
	var inits []string
	cfg := BreakerConfig{FailureThreshold: 1, OpenTimeout: time.Second,
		OnInit: func(name string, s State) { inits = append(inits, name+"="+s.String()) },
		Log:    slog.New(slog.NewJSONHandler(&buf, nil))}
	b, clock, _ := newTestBreaker(cfg)
	if len(inits) != 1 || inits[0] != "dep=closed" {
		t.Fatalf("OnInit calls %v, want one dep=closed at construction", inits)
	}
	_ = b.Execute(context.Background(), fail) // closed → open
	clock.Advance(time.Second)
	_ = b.Execute(context.Background(), ok) // open → half_open (probe ok)
	var lines []map[string]any
	for _, l := range bytes.Split(bytes.TrimSpace(buf.Bytes()), []byte("\n")) {
		var m map[string]any
		if err := json.Unmarshal(l, &m); err != nil {
			t.Fatalf("log line %q: %v", l, err)
		}
		lines = append(lines, m)
	}
	if len(lines) != 2 {
		t.Fatalf("logged %d lines, want 2: %s", len(lines), buf.String())
	}
	want := [][2]string{{"closed", "open"}, {"open", "half_open"}}
	for i, m := range lines {
		if m["level"] != "WARN" || m["dependency"] != "dep" || m["from"] != want[i][0] || m["to"] != want[i][1] {
			t.Errorf("line %d = %v, want WARN dep %s→%s", i, m, want[i][0], want[i][1])
		}
	}
}

// Zero settings take the defaults (TestBreakerDefaults, and the bulkhead's
// in TestBulkheadReturnsFnErrorAndSurvivesPanic); negative ones are refused
// with an error naming the field.
func TestConstructorsRefuseNegativeSettings(t *testing.T) {
	cases := []struct {
		name string
		new  func() error
		want string
	}{
		{"breaker FailureThreshold", func() error { _, err := NewBreaker(BreakerConfig{FailureThreshold: -1}); return err },
			"FailureThreshold must not be negative (got -1)"},
		{"breaker OpenTimeout", func() error { _, err := NewBreaker(BreakerConfig{OpenTimeout: -time.Second}); return err },
			"OpenTimeout must not be negative (got -1s)"},
		{"breaker SuccessesToClose", func() error { _, err := NewBreaker(BreakerConfig{SuccessesToClose: -1}); return err },
			"SuccessesToClose must not be negative (got -1)"},
		{"bulkhead Limit", func() error { _, err := NewBulkhead(BulkheadConfig{Limit: -1}); return err },
			"Limit must not be negative (got -1)"},
		{"retry MaxAttempts", func() error { return (&Retry{MaxAttempts: -1}).Validate() }, "MaxAttempts must not be negative (got -1)"},
		{"retry MaxDelay", func() error { return (&Retry{MaxDelay: -time.Second}).Validate() }, "MaxDelay must not be negative (got -1s)"},
		{"retry Backoff.Base", func() error { return (&Retry{Backoff: Backoff{Base: -1}}).Validate() }, "Backoff.Base must not be negative"},
		{"retry Backoff.Cap", func() error { return (&Retry{Backoff: Backoff{Cap: -1}}).Validate() }, "Backoff.Cap must not be negative"},
		{"retry Do", func() error {
			return (&Retry{MaxAttempts: -1}).Do(context.Background(), "op", func(context.Context) error { panic("called") })
		}, "MaxAttempts must not be negative"},
		{"policy AttemptTimeout", func() error {
			return (&Policy{AttemptTimeout: -time.Second}).Call(context.Background(), "op", func(context.Context) error { panic("called") })
		}, "AttemptTimeout must not be negative (got -1s)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.new()
			if !apperr.Is(err, apperr.Invalid) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v; want Invalid containing %q", err, tc.want)
			}
		})
	}
}
