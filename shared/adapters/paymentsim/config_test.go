package paymentsim_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"ordersaga/shared/adapters/paymentsim"
	"ordersaga/shared/domain/apperr"
)

// mustNew is paymentsim.New for a Config the test knows is valid.
func mustNew(t *testing.T, cfg paymentsim.Config) *paymentsim.Sim {
	t.Helper()
	sim, err := paymentsim.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return sim
}

// A zero DeclineAbove takes DefaultDeclineAbove; a negative setting or a
// rate outside [0,1] is refused with an error naming every bad field.
func TestConfigZeroIsDefaultNegativeIsRefused(t *testing.T) {
	ctx := context.Background()
	sim := mustNew(t, paymentsim.Config{})
	if _, err := sim.Charge(ctx, "at-limit", paymentsim.DefaultDeclineAbove, "RUB"); err != nil {
		t.Errorf("zero DeclineAbove: a charge of DefaultDeclineAbove failed: %v", err)
	}
	if _, err := sim.Charge(ctx, "above-limit", paymentsim.DefaultDeclineAbove+1, "RUB"); !apperr.Is(err, apperr.Rejected) {
		t.Errorf("zero DeclineAbove: a charge above DefaultDeclineAbove = %v, want Rejected", err)
	}
	cases := []struct {
		name string
		cfg  paymentsim.Config
		want []string
	}{
		{"negative DeclineAbove", paymentsim.Config{DeclineAbove: -1}, []string{"DeclineAbove must not be negative (got -1)"}},
		{"negative Latency", paymentsim.Config{Latency: -time.Second}, []string{"Latency must not be negative (got -1s)"}},
		{"rates outside [0,1]", paymentsim.Config{FailureRate: -0.5, LostAnswerRate: 1.5},
			[]string{"FailureRate must not be negative (got -0.5)", "LostAnswerRate must be at most 1 (got 1.5)"}},
		{"every field at once", paymentsim.Config{DeclineAbove: -1, FailureRate: 2, LostAnswerRate: -1, Latency: -time.Millisecond},
			[]string{"DeclineAbove", "FailureRate must be at most 1 (got 2)", "LostAnswerRate", "Latency"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := paymentsim.New(tc.cfg)
			if got != nil || !apperr.Is(err, apperr.Invalid) {
				t.Fatalf("New = %v, %v; want nil, Invalid", got, err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("err = %q, want it to contain %q", err, w)
				}
			}
		})
	}
}
