package resilience

import (
	"context"
	"errors"
	"testing"
	"time"

	"ordersaga/shared/domain/apperr"
)

// A failure after which the breaker is open is marked ErrDown (keeping the
// call's own error and kind, with the remaining open time); every other
// outcome comes back unchanged.
func TestExecuteMarksFailuresThatLeaveTheBreakerOpen(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	now := t0
	b := mustBreaker(t, BreakerConfig{Name: "dep", FailureThreshold: 3, OpenTimeout: 10 * time.Second, SuccessesToClose: 1,
		Now: func() time.Time { return now }})
	boom := apperr.New(apperr.Transient, "provider unavailable")
	fail := func(context.Context) error { return boom }
	ctx := context.Background()

	for i := 1; i < 3; i++ {
		if err := b.Execute(ctx, fail); err != boom {
			t.Fatalf("failure %d below the threshold: %v, want the call's error unchanged", i, err)
		}
	}
	err := b.Execute(ctx, fail)
	var de *DownError
	if !errors.Is(err, ErrDown) || !errors.Is(err, boom) || !errors.As(err, &de) || !apperr.Is(err, apperr.Transient) {
		t.Fatalf("the failure that opened the breaker: %v, want ErrDown wrapping the call's error", err)
	}
	if de.RetryIn != 10*time.Second {
		t.Errorf("RetryIn = %s, want the open period", de.RetryIn)
	}
	if errors.Is(err, ErrOpen) {
		t.Error("a call that reached the dependency must not look refused (ErrOpen)")
	}
	now = now.Add(4 * time.Second)
	if err := b.Execute(ctx, fail); !errors.Is(err, ErrOpen) || errors.Is(err, ErrDown) {
		t.Fatalf("call while open: %v, want ErrOpen only", err)
	}
	now = now.Add(6 * time.Second) // half-open: a failed probe opens it again
	err = b.Execute(ctx, fail)
	if !errors.As(err, &de) || de.RetryIn != 10*time.Second {
		t.Fatalf("failed probe: %v, want ErrDown with a fresh open period", err)
	}
	now = now.Add(10 * time.Second)
	if err := b.Execute(ctx, func(context.Context) error { return nil }); err != nil {
		t.Fatalf("successful probe: %v", err)
	}
	conflict := apperr.New(apperr.Conflict, "still processing")
	if err := b.Execute(ctx, func(context.Context) error { return conflict }); err != conflict {
		t.Fatalf("an answer that is no failure: %v, want it unchanged", err)
	}
}
