package resilience

import (
	"context"
	"errors"
	"testing"
	"time"

	"ordersaga/shared/domain/apperr"
)

// recorder collects retry hook events.
type recorder struct{ events []AttemptEvent }

func (r *recorder) hook(ev AttemptEvent) { r.events = append(r.events, ev) }

func newTestRetry(rec *recorder) *Retry {
	return &Retry{
		MaxAttempts: 3,
		Backoff:     Backoff{Base: time.Second, Cap: time.Second, Rand: NewRand(3)},
		Sleep:       (&fakeSleep{}).Sleep,
		OnAttempt:   rec.hook,
	}
}

func TestPolicyBreakerCountsOneFailurePerCall(t *testing.T) {
	rec := &recorder{}
	b, _, _ := newTestBreaker(BreakerConfig{FailureThreshold: 2, OpenTimeout: time.Minute})
	p := &Policy{Breaker: b, Retry: newTestRetry(rec)}
	calls := 0
	fn := func(context.Context) error { calls++; return errBusy }

	err := p.Call(context.Background(), "reserve", fn)
	if calls != 3 || !errors.Is(err, errBusy) {
		t.Fatalf("calls = %d, err = %v; want 3 attempts and the last error", calls, err)
	}
	mustState(t, b, StateClosed) // three attempts, one breaker failure
	_ = p.Call(context.Background(), "reserve", fn)
	mustState(t, b, StateOpen)

	events := len(rec.events)
	err = p.Call(context.Background(), "reserve", fn)
	mustOpenErr(t, err)
	if calls != 6 {
		t.Errorf("fn called while open: calls = %d, want 6", calls)
	}
	if len(rec.events) != events {
		t.Error("retry ran although the breaker was open: retry must sit inside the breaker")
	}
}

func TestPolicyAttemptTimeoutTriggersRetry(t *testing.T) {
	rec := &recorder{}
	p := &Policy{Retry: newTestRetry(rec), AttemptTimeout: time.Millisecond}
	calls := 0
	err := p.Call(context.Background(), "charge", func(ctx context.Context) error {
		calls++
		if _, ok := ctx.Deadline(); !ok {
			t.Error("attempt has no deadline")
		}
		if calls == 1 {
			<-ctx.Done() // the first attempt hangs until its own timeout
			return ctx.Err()
		}
		return nil
	})
	if err != nil || calls != 2 {
		t.Fatalf("calls = %d, err = %v; want success on the second attempt", calls, err)
	}
	first := rec.events[0]
	if first.Result != ResultRetry || !apperr.Is(first.Err, apperr.Transient) || !errors.Is(first.Err, context.DeadlineExceeded) {
		t.Errorf("first event = %+v, want a retried transient deadline error", first)
	}
	if last := rec.events[len(rec.events)-1]; last.Result != ResultSuccessAfterRetry {
		t.Errorf("final result = %v, want success_after_retry", last.Result)
	}
}

func TestPolicyAttemptTimeoutKeepsPermanentKinds(t *testing.T) {
	p := &Policy{Retry: newTestRetry(&recorder{}), AttemptTimeout: time.Millisecond}
	calls := 0
	err := p.Call(context.Background(), "op", func(ctx context.Context) error {
		calls++
		<-ctx.Done()
		return apperr.New(apperr.NotFound, "gone")
	})
	if calls != 1 || !apperr.Is(err, apperr.NotFound) {
		t.Fatalf("calls = %d, err = %v; want one attempt and NotFound unchanged", calls, err)
	}
}

func TestPolicyBulkheadIsOutermost(t *testing.T) {
	rec := &recorder{}
	bh := mustBulkhead(t, BulkheadConfig{Name: "dep", Limit: 1})
	b, _, _ := newTestBreaker(BreakerConfig{FailureThreshold: 1})
	p := &Policy{Bulkhead: bh, Breaker: b, Retry: newTestRetry(rec)}

	started, release, done := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	go func() {
		done <- p.Call(context.Background(), "op", func(context.Context) error {
			close(started)
			<-release
			return nil
		})
	}()
	<-started
	events := len(rec.events)
	err := p.Call(context.Background(), "op", fail)
	if !errors.Is(err, ErrBulkheadFull) {
		t.Fatalf("err = %v, want ErrBulkheadFull", err)
	}
	if len(rec.events) != events {
		t.Error("retry ran for a call the bulkhead rejected")
	}
	mustState(t, b, StateClosed) // a rejection is not a dependency failure
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestPolicyFallback(t *testing.T) {
	fallbackErr := errors.New("served from cache")
	var got []error
	p := &Policy{
		Retry: newTestRetry(&recorder{}),
		Fallback: func(_ context.Context, err error) error {
			got = append(got, err)
			return fallbackErr
		},
	}
	if err := p.Call(context.Background(), "op", ok); err != nil {
		t.Fatalf("success went through fallback: %v", err)
	}
	err := p.Call(context.Background(), "op", fail)
	if !errors.Is(err, fallbackErr) {
		t.Fatalf("err = %v, want the fallback's result", err)
	}
	if len(got) != 1 || !errors.Is(got[0], errBusy) {
		t.Fatalf("fallback got %v, want one final error wrapping errBusy", got)
	}
}

func TestPolicyZeroIsPassThrough(t *testing.T) {
	p := &Policy{}
	calls := 0
	err := p.Call(context.Background(), "op", func(ctx context.Context) error {
		calls++
		if _, ok := ctx.Deadline(); ok {
			t.Error("zero policy added a deadline")
		}
		return errBusy
	})
	if calls != 1 || err != errBusy {
		t.Fatalf("calls = %d, err = %v; want one call and the error unchanged", calls, err)
	}
}
