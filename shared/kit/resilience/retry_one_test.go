package resilience

import (
	"context"
	"errors"
	"testing"

	"ordersaga/shared/domain/apperr"
)

// TestOneAttemptMakesASingleAttempt: under a ctx from OneAttempt, Do calls
// fn once and reports a transient failure as exhausted after one attempt
// (still Transient, still wrapping the error); a success is a success; a
// ctx without the mark keeps the full budget.
func TestOneAttemptMakesASingleAttempt(t *testing.T) {
	r := &Retry{MaxAttempts: 3, Sleep: (&fakeSleep{}).Sleep}
	calls := 0
	err := r.Do(OneAttempt(context.Background()), "op", script(&calls, errBusy, errBusy, errBusy))
	if calls != 1 || err == nil || !apperr.Is(err, apperr.Transient) || !errors.Is(err, errBusy) {
		t.Fatalf("one attempt: %d calls, err %v; want 1 call and a transient error wrapping busy", calls, err)
	}
	calls = 0
	if err := r.Do(OneAttempt(context.Background()), "op", script(&calls)); err != nil || calls != 1 {
		t.Fatalf("one attempt that succeeds: %d calls, err %v", calls, err)
	}
	calls = 0
	if err := r.Do(context.Background(), "op", script(&calls, errBusy, errBusy)); err != nil || calls != 3 {
		t.Fatalf("without the mark: %d calls, err %v; want 3 and success", calls, err)
	}
}
