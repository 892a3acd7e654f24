package sagabatch_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"ordersaga/shared/app/jobs/sagabatch"
	"ordersaga/shared/app/orchestrator"
	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/saga"
)

// fakeAdvancer answers each message with its saga id, fails the sagas in
// fail, and records the most sagas it saw in flight at once.
type fakeAdvancer struct {
	fail map[string]bool

	mu             sync.Mutex
	inFlight, most int
}

func (f *fakeAdvancer) Handle(_ context.Context, m orchestrator.Message) (orchestrator.Result, error) {
	f.mu.Lock()
	f.inFlight++
	f.most = max(f.most, f.inFlight)
	f.mu.Unlock()
	defer func() { f.mu.Lock(); f.inFlight--; f.mu.Unlock() }()
	cmd, err := saga.DecodeCommand(m.Body)
	if err != nil {
		return orchestrator.Result{Status: orchestrator.StatusMalformed}, nil
	}
	if f.fail[cmd.SagaID] {
		return orchestrator.Result{SagaID: cmd.SagaID}, errors.New("store down")
	}
	return orchestrator.Result{SagaID: cmd.SagaID, Status: orchestrator.StatusProcessed}, nil
}

func delivery(id, sagaID string) sagabatch.Delivery {
	return sagabatch.Delivery{MessageID: id, Message: orchestrator.Message{Body: saga.FirstCommand(sagaID).Encode()}}
}

func TestNewSetsDefaultsAndRefusesBadSettings(t *testing.T) {
	if _, err := sagabatch.New(sagabatch.Config{}); !apperr.Is(err, apperr.Invalid) {
		t.Errorf("no advancer: err = %v, want Invalid", err)
	}
	if _, err := sagabatch.New(sagabatch.Config{Advancer: &fakeAdvancer{}, Concurrency: -1}); !apperr.Is(err, apperr.Invalid) {
		t.Errorf("negative concurrency: err = %v, want Invalid", err)
	}
	if _, err := sagabatch.New(sagabatch.Config{Advancer: &fakeAdvancer{}}); err != nil {
		t.Errorf("zero concurrency (the default): %v", err)
	}
}

func TestRunReportsInBatchOrderAndJoinsFailures(t *testing.T) {
	adv := &fakeAdvancer{fail: map[string]bool{"s-2": true}}
	var counted int
	j, err := sagabatch.New(sagabatch.Config{Advancer: adv, Concurrency: 2,
		OnReceived: func(q string, n int) {
			if q == "saga-commands" {
				counted += n
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	msgs := []sagabatch.Delivery{delivery("m-1", "s-1"), delivery("m-2", "s-2"), delivery("m-3", "s-3"), delivery("m-4", "s-1"),
		delivery("m-5", "s-4"), delivery("m-6", "s-5")}
	rep, err := j.Run(context.Background(), "saga-commands", msgs)
	if err == nil || !strings.Contains(err.Error(), "message m-2") {
		t.Errorf("err = %v, want the failed message named", err)
	}
	if rep.Messages != 6 || rep.Failed != 1 || counted != 6 {
		t.Errorf("report %+v, counted %d; want 6 messages, 1 failed, 6 counted", rep, counted)
	}
	for i, want := range []string{"s-1", "s-2", "s-3", "s-1", "s-4", "s-5"} {
		if got := rep.Results[i].SagaID; got != want {
			t.Errorf("result %d is saga %s, want %s", i, got, want)
		}
	}
	if adv.most > 2 {
		t.Errorf("%d sagas in flight at once, want at most Concurrency 2", adv.most)
	}
}
