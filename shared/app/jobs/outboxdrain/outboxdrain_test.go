package outboxdrain_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"ordersaga/shared/app/jobs/outboxdrain"
	"ordersaga/shared/app/relay"
	"ordersaga/shared/domain/apperr"
)

type fakeRelay struct {
	budget time.Duration
	err    error
}

func (f *fakeRelay) Run(_ context.Context, budget time.Duration) (relay.Report, error) {
	f.budget = budget
	return relay.Report{Published: 3, Pending: 7}, f.err
}

func TestNewRequiresARelay(t *testing.T) {
	if _, err := outboxdrain.New(outboxdrain.Config{}); !apperr.Is(err, apperr.Invalid) {
		t.Errorf("no relay: err = %v, want Invalid", err)
	}
}

// The backlog is reported after every run, a failed one too (the rows
// stay pending and the gauges must say so).
func TestRunReportsTheBacklogWhateverTheOutcome(t *testing.T) {
	for _, runErr := range []error{nil, errors.New("queue down")} {
		r := &fakeRelay{err: runErr}
		var got []relay.Report
		j, err := outboxdrain.New(outboxdrain.Config{Relay: r, OnBacklog: func(rep relay.Report) { got = append(got, rep) }})
		if err != nil {
			t.Fatal(err)
		}
		rep, err := j.Run(context.Background(), 4*time.Second)
		if !errors.Is(err, runErr) || rep.Published != 3 || r.budget != 4*time.Second {
			t.Errorf("Run = %+v, %v (budget %s); want the relay's report and error, budget 4s", rep, err, r.budget)
		}
		if len(got) != 1 || got[0].Pending != 7 {
			t.Errorf("backlog reports %+v, want one with Pending 7", got)
		}
	}
}
