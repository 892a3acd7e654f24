package orchestrator_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"ordersaga/shared/domain/saga"
)

// TestLeaseKeepsUpdatedAt: taking a running saga's lease changes neither
// its state nor its updated_at (the time of its last step change, which
// the time indexes hold: on YDB the lease then rewrites no index entry);
// the step's save moves it.
func TestLeaseKeepsUpdatedAt(t *testing.T) {
	e := startEnv(t, envOpts{stock: map[string]int64{"sku-1": 10}}, nil)
	_, sagaID := e.place(item("sku-1", 1, 100))
	before := e.saga(sagaID)
	if before.State != saga.StateRunning || before.Step != 2 {
		t.Fatalf("saga %s at step %d, want running at process_payment", before.State, before.Step)
	}
	crash := errors.New("crash")
	e.afterStep = func(string, saga.Direction) error { return crash }
	e.clock.Advance(time.Second)
	if _, err := e.adv.Handle(context.Background(), e.queue[0].msg); !errors.Is(err, crash) {
		t.Fatalf("handle: %v, want the crash after the step", err)
	}
	leased := e.saga(sagaID)
	if leased.LeaseOwner == "" || leased.Version == before.Version {
		t.Fatalf("saga not leased: %+v", leased)
	}
	if !leased.UpdatedAt.Equal(before.UpdatedAt) || leased.State != before.State {
		t.Errorf("lease moved updated_at %s -> %s (state %s -> %s)", before.UpdatedAt, leased.UpdatedAt, before.State, leased.State)
	}
	e.afterStep = nil
	e.clock.Advance(e.adv.Config().Lease + time.Second)
	e.deliver(chaos{})
	if s := e.saga(sagaID); s.State != saga.StateCompleted || !s.UpdatedAt.After(before.UpdatedAt) {
		t.Errorf("saga %s updated %s, want completed after %s", s.State, s.UpdatedAt, before.UpdatedAt)
	}
}
