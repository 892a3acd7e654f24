package resilience

import (
	"context"
	"errors"
	"testing"

	"ordersaga/shared/domain/apperr"
)

// hold starts a call on bh that stays in flight until the returned release
// func is called; release waits for the call to finish and returns its error.
func hold(t *testing.T, bh *Bulkhead) (release func() error) {
	t.Helper()
	started, unblock, done := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	go func() {
		done <- bh.Execute(context.Background(), func(context.Context) error {
			close(started)
			<-unblock
			return nil
		})
	}()
	select {
	case <-started:
	case err := <-done:
		t.Fatalf("held call was not admitted: %v", err)
	}
	return func() error { close(unblock); return <-done }
}

func TestBulkheadRejectsWhenFullAndFreesSlots(t *testing.T) {
	var rejected []string
	bh := mustBulkhead(t, BulkheadConfig{Name: "payment", Limit: 2, OnReject: func(name string) { rejected = append(rejected, name) }})

	r1, r2 := hold(t, bh), hold(t, bh)
	if got := bh.InFlight(); got != 2 {
		t.Fatalf("InFlight = %d, want 2", got)
	}
	called := false
	err := bh.Execute(context.Background(), func(context.Context) error { called = true; return nil })
	if !errors.Is(err, ErrBulkheadFull) || !apperr.Is(err, apperr.Transient) {
		t.Fatalf("err = %v, want a transient ErrBulkheadFull", err)
	}
	if called {
		t.Fatal("fn called although the bulkhead was full")
	}
	if len(rejected) != 1 || rejected[0] != "payment" {
		t.Fatalf("OnReject calls = %v, want [payment]", rejected)
	}

	if err := r1(); err != nil {
		t.Fatal(err)
	}
	if got := bh.InFlight(); got != 1 {
		t.Fatalf("InFlight after release = %d, want 1", got)
	}
	if err := bh.Execute(context.Background(), ok); err != nil {
		t.Fatalf("call after a slot freed: %v", err)
	}
	if err := r2(); err != nil {
		t.Fatal(err)
	}
	if got := bh.InFlight(); got != 0 {
		t.Fatalf("InFlight at end = %d, want 0", got)
	}
}

func TestBulkheadReturnsFnErrorAndSurvivesPanic(t *testing.T) {
	bh := mustBulkhead(t, BulkheadConfig{Name: "x"}) // DefaultBulkheadLimit
	if bh.Limit() != 1 || bh.Name() != "x" {
		t.Fatalf("Limit = %d, Name = %q; want 1, x", bh.Limit(), bh.Name())
	}
	if err := bh.Execute(context.Background(), fail); !errors.Is(err, errBusy) {
		t.Fatalf("err = %v, want fn's error", err)
	}
	func() {
		defer func() { _ = recover() }()
		_ = bh.Execute(context.Background(), func(context.Context) error { panic("boom") })
	}()
	if got := bh.InFlight(); got != 0 {
		t.Fatalf("InFlight after panic = %d, want 0", got)
	}
}
