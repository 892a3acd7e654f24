package resilience

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"ordersaga/shared/domain/apperr"
)

// fakeSleep records requested waits and returns immediately (or ctx's error).
type fakeSleep struct{ waits []time.Duration }

func (f *fakeSleep) Sleep(ctx context.Context, d time.Duration) error {
	f.waits = append(f.waits, d)
	return ctx.Err()
}

// script returns fn that yields errs in order, then nil, counting calls.
func script(calls *int, errs ...error) func(context.Context) error {
	return func(context.Context) error {
		*calls++
		if *calls <= len(errs) {
			return errs[*calls-1]
		}
		return nil
	}
}

var (
	errBusy = apperr.New(apperr.Transient, "busy")
	errBad  = apperr.New(apperr.Invalid, "bad input")
)

func TestRetryOutcomes(t *testing.T) {
	tests := []struct {
		name        string
		errs        []error
		wantCalls   int
		wantResults []Result
		wantErrIs   error
		wantKind    apperr.Kind
		wantMsg     string
	}{
		{
			name: "success first try", wantCalls: 1,
			wantResults: []Result{ResultSuccess},
		},
		{
			name: "success after retry", errs: []error{errBusy, errBusy}, wantCalls: 3,
			wantResults: []Result{ResultRetry, ResultRetry, ResultSuccessAfterRetry},
		},
		{
			name: "permanent stops at once", errs: []error{errBad}, wantCalls: 1,
			wantResults: []Result{ResultPermanent}, wantErrIs: errBad, wantKind: apperr.Invalid,
		},
		{
			name: "permanent after transient", errs: []error{errBusy, errBad}, wantCalls: 2,
			wantResults: []Result{ResultRetry, ResultPermanent}, wantErrIs: errBad, wantKind: apperr.Invalid,
		},
		{
			name: "exhausted", errs: []error{errBusy, errBusy, errBusy, errBusy}, wantCalls: 3,
			wantResults: []Result{ResultRetry, ResultRetry, ResultExhausted},
			wantErrIs:   errBusy, wantKind: apperr.Transient, wantMsg: "charge: gave up after 3 attempts",
		},
		{
			name: "exhausted on http 503 keeps it in chain", wantCalls: 3,
			errs:        []error{&HTTPStatusError{StatusCode: 503}, &HTTPStatusError{StatusCode: 502}, &HTTPStatusError{StatusCode: 503}},
			wantResults: []Result{ResultRetry, ResultRetry, ResultExhausted},
			wantKind:    apperr.Transient, wantMsg: "3 attempts",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var events []AttemptEvent
			sl := &fakeSleep{}
			r := &Retry{
				MaxAttempts: 3,
				Backoff:     Backoff{Base: time.Second, Cap: 10 * time.Second, Rand: NewRand(1)},
				Sleep:       sl.Sleep,
				OnAttempt:   func(ev AttemptEvent) { events = append(events, ev) },
			}
			calls := 0
			err := r.Do(context.Background(), "charge", script(&calls, tt.errs...))
			if calls != tt.wantCalls {
				t.Errorf("calls = %d, want %d", calls, tt.wantCalls)
			}
			if len(sl.waits) != tt.wantCalls-1 {
				t.Errorf("sleeps = %d, want %d", len(sl.waits), tt.wantCalls-1)
			}
			var got []Result
			for i, ev := range events {
				got = append(got, ev.Result)
				if ev.Op != "charge" || ev.Attempt != i+1 {
					t.Errorf("event %d = %+v, want op charge attempt %d", i, ev, i+1)
				}
				if ev.Final() != (i == len(events)-1) {
					t.Errorf("event %d Final() = %v", i, ev.Final())
				}
			}
			if strings.Join(resultStrings(got), ",") != strings.Join(resultStrings(tt.wantResults), ",") {
				t.Errorf("results = %v, want %v", got, tt.wantResults)
			}
			if tt.wantResults[len(tt.wantResults)-1] == ResultSuccess || tt.wantResults[len(tt.wantResults)-1] == ResultSuccessAfterRetry {
				if err != nil {
					t.Fatalf("err = %v, want nil", err)
				}
				return
			}
			if err == nil {
				t.Fatal("err = nil, want error")
			}
			if tt.wantErrIs != nil && !errors.Is(err, tt.wantErrIs) {
				t.Errorf("errors.Is(%v, %v) = false", err, tt.wantErrIs)
			}
			if k := apperr.KindOf(err); k != tt.wantKind {
				t.Errorf("kind = %v, want %v", k, tt.wantKind)
			}
			if !strings.Contains(err.Error(), tt.wantMsg) {
				t.Errorf("err = %q, want it to contain %q", err, tt.wantMsg)
			}
		})
	}
}

func resultStrings(rs []Result) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = string(r)
	}
	return out
}

func TestRetryExhaustedKeepsLastError(t *testing.T) {
	last := &HTTPStatusError{StatusCode: 504}
	calls := 0
	r := &Retry{MaxAttempts: 2, Sleep: (&fakeSleep{}).Sleep}
	err := r.Do(context.Background(), "op", script(&calls, errBusy, last))
	var he *HTTPStatusError
	if !errors.As(err, &he) || he != last {
		t.Fatalf("errors.As found %v, want the last error %v", he, last)
	}
	if errors.Is(err, errBusy) {
		t.Error("first attempt's error should not be in the chain, only the last")
	}
}

func TestRetryBackoffDelays(t *testing.T) {
	sl := &fakeSleep{}
	r := &Retry{
		MaxAttempts: 5,
		Backoff:     Backoff{Base: 100 * time.Millisecond, Cap: 250 * time.Millisecond, Rand: func() float64 { return 0.5 }},
		Sleep:       sl.Sleep,
	}
	calls := 0
	_ = r.Do(context.Background(), "op", script(&calls, errBusy, errBusy, errBusy, errBusy, errBusy))
	want := []time.Duration{50 * time.Millisecond, 100 * time.Millisecond, 125 * time.Millisecond, 125 * time.Millisecond}
	if len(sl.waits) != len(want) {
		t.Fatalf("waits = %v, want %v", sl.waits, want)
	}
	for i := range want {
		if sl.waits[i] != want[i] {
			t.Errorf("wait %d = %v, want %v (retry n=%d uses half of min(cap, base·2^n))", i, sl.waits[i], want[i], i)
		}
	}
}

func TestRetryAfterHint(t *testing.T) {
	jitter := Backoff{Base: time.Second, Cap: time.Second, Rand: func() float64 { return 0.5 }} // 500ms
	tests := []struct {
		name     string
		hint     time.Duration
		maxDelay time.Duration
		want     time.Duration
	}{
		{"hint longer than jitter wins", 3 * time.Second, time.Minute, 3 * time.Second},
		{"jitter longer than hint wins", 100 * time.Millisecond, time.Minute, 500 * time.Millisecond},
		{"hint capped by MaxDelay", time.Hour, 5 * time.Second, 5 * time.Second},
		{"default MaxDelay caps", time.Hour, 0, DefaultMaxDelay},
		{"no hint", 0, time.Minute, 500 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sl := &fakeSleep{}
			r := &Retry{MaxAttempts: 2, Backoff: jitter, MaxDelay: tt.maxDelay, Sleep: sl.Sleep}
			calls := 0
			hinted := &HTTPStatusError{StatusCode: 429, RetryAfterHint: tt.hint}
			if err := r.Do(context.Background(), "op", script(&calls, hinted)); err != nil {
				t.Fatalf("Do: %v", err)
			}
			if len(sl.waits) != 1 || sl.waits[0] != tt.want {
				t.Errorf("waits = %v, want [%v]", sl.waits, tt.want)
			}
		})
	}
}

func TestRetryContextCancellation(t *testing.T) {
	t.Run("canceled during backoff", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var results []Result
		r := &Retry{
			MaxAttempts: 10,
			Sleep: func(ctx context.Context, _ time.Duration) error {
				cancel() // the caller gives up while we wait
				return ctx.Err()
			},
			OnAttempt: func(ev AttemptEvent) { results = append(results, ev.Result) },
		}
		calls := 0
		err := r.Do(ctx, "op", script(&calls, errBusy, errBusy, errBusy))
		if calls != 1 {
			t.Errorf("calls = %d, want 1", calls)
		}
		if !errors.Is(err, errBusy) || !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v, want it to wrap the last error and context.Canceled", err)
		}
		if !apperr.Is(err, apperr.Transient) {
			t.Errorf("kind = %v, want transient", apperr.KindOf(err))
		}
		if len(results) != 2 || results[1] != ResultCanceled {
			t.Errorf("results = %v, want [retry canceled]", results)
		}
	})
	t.Run("already canceled: fn never called", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		calls := 0
		err := (&Retry{}).Do(ctx, "op", script(&calls))
		if calls != 0 || !errors.Is(err, context.Canceled) || !apperr.Is(err, apperr.Transient) {
			t.Errorf("calls = %d, err = %v; want 0 calls and a transient canceled error", calls, err)
		}
	})
	t.Run("fn fails because caller canceled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		calls := 0
		err := (&Retry{MaxAttempts: 5, Sleep: (&fakeSleep{}).Sleep}).Do(ctx, "op", func(ctx context.Context) error {
			calls++
			cancel()
			return ctx.Err()
		})
		if calls != 1 || !errors.Is(err, context.Canceled) || !apperr.Is(err, apperr.Transient) {
			t.Errorf("calls = %d, err = %v; want 1 call and a transient canceled error", calls, err)
		}
		if !strings.Contains(err.Error(), "stopped after 1 attempt") {
			t.Errorf("err = %q, want the attempt count", err)
		}
	})
	t.Run("permanent error is not masked by a done context", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		err := (&Retry{}).Do(ctx, "op", func(context.Context) error { cancel(); return errBad })
		if !errors.Is(err, errBad) || !apperr.Is(err, apperr.Invalid) {
			t.Errorf("err = %v, want the permanent error unchanged", err)
		}
	})
}

func TestRetryCustomPredicateAndDefaults(t *testing.T) {
	calls := 0
	r := &Retry{Retryable: func(error) bool { return true }, Sleep: (&fakeSleep{}).Sleep}
	plain := errors.New("plain")
	err := r.Do(context.Background(), "op", script(&calls, plain, plain, plain, plain))
	if calls != DefaultMaxAttempts || !errors.Is(err, plain) {
		t.Errorf("calls = %d, err = %v; want %d calls (default budget) wrapping plain", calls, err, DefaultMaxAttempts)
	}
}

func TestSleepContext(t *testing.T) {
	if err := SleepContext(context.Background(), time.Millisecond); err != nil {
		t.Errorf("SleepContext short = %v, want nil", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := SleepContext(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Errorf("SleepContext canceled = %v, want context.Canceled", err)
	}
	if err := SleepContext(ctx, 0); !errors.Is(err, context.Canceled) {
		t.Errorf("SleepContext(0) canceled = %v, want context.Canceled", err)
	}
}
