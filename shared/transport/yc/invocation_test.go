package yc

import (
	"context"
	"testing"
	"time"
)

func TestInvocationValues(t *testing.T) {
	ctx := runtimeContext("58fc90cc-97b9-4c2b-95db-9dd0aaaaaaaa", "b09ks558ute7aaaaaaaa")
	if got := RequestID(ctx); got != "58fc90cc-97b9-4c2b-95db-9dd0aaaaaaaa" {
		t.Errorf("RequestID = %q", got)
	}
	if got := FunctionID(ctx); got != "b09ks558ute7aaaaaaaa" {
		t.Errorf("FunctionID = %q", got)
	}
	// The runtime's keys are plain strings: reading them directly must work.
	if ctx.Value("lambdaRuntimeRequestID") != "58fc90cc-97b9-4c2b-95db-9dd0aaaaaaaa" {
		t.Errorf("WithInvocation must use the runtime's plain string key")
	}
	if RequestID(context.Background()) != "" || FunctionID(context.Background()) != "" {
		t.Errorf("values outside the platform")
	}
}

func TestTimeLeftAndWorkBudget(t *testing.T) {
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	withDeadline := func(d time.Duration) context.Context {
		ctx, cancel := context.WithDeadline(context.Background(), now.Add(d))
		t.Cleanup(cancel)
		return ctx
	}
	tests := []struct {
		name       string
		ctx        context.Context
		wantLeft   time.Duration
		wantOK     bool
		wantBudget time.Duration // reserve 5s, fallback 30s
	}{
		{"no deadline", context.Background(), 0, false, 30 * time.Second},
		{"plenty", withDeadline(time.Minute), time.Minute, true, 55 * time.Second},
		{"less than reserve", withDeadline(3 * time.Second), 3 * time.Second, true, 0},
		{"past deadline", withDeadline(-time.Second), 0, true, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			left, ok := TimeLeft(tt.ctx, now)
			if left != tt.wantLeft || ok != tt.wantOK {
				t.Errorf("TimeLeft = %v %v, want %v %v", left, ok, tt.wantLeft, tt.wantOK)
			}
			if got := WorkBudget(tt.ctx, now, 5*time.Second, 30*time.Second); got != tt.wantBudget {
				t.Errorf("WorkBudget = %v, want %v", got, tt.wantBudget)
			}
		})
	}
	if got := WorkBudget(context.Background(), now, 0, -time.Second); got != 0 {
		t.Errorf("negative fallback: %v", got)
	}
}
