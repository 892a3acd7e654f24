package resilience

import (
	"math"
	"testing"
	"time"
)

func TestBackoffCeiling(t *testing.T) {
	tests := []struct {
		name string
		b    Backoff
		n    int
		want time.Duration
	}{
		{"first retry is base", Backoff{Base: 100 * time.Millisecond, Cap: time.Second}, 0, 100 * time.Millisecond},
		{"doubles", Backoff{Base: 100 * time.Millisecond, Cap: time.Second}, 3, 800 * time.Millisecond},
		{"capped", Backoff{Base: 100 * time.Millisecond, Cap: time.Second}, 4, time.Second},
		{"negative n is 0", Backoff{Base: 100 * time.Millisecond, Cap: time.Second}, -5, 100 * time.Millisecond},
		{"huge n saturates at cap", Backoff{Base: time.Millisecond, Cap: time.Minute}, 1000, time.Minute},
		{"n=62 no overflow", Backoff{Base: 3, Cap: time.Hour}, 62, time.Hour},
		{"n=63 no overflow", Backoff{Base: 1, Cap: time.Hour}, 63, time.Hour},
		{"uncapped saturates at max duration", Backoff{Base: time.Second}, 200, maxDuration},
		{"uncapped near overflow", Backoff{Base: 1}, 62, 1 << 62},
		{"zero base", Backoff{Cap: time.Second}, 3, 0},
		{"base above cap", Backoff{Base: time.Hour, Cap: time.Second}, 0, time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.b.Ceiling(tt.n); got != tt.want {
				t.Errorf("Ceiling(%d) = %v, want %v", tt.n, got, tt.want)
			}
		})
	}
}

// TestBackoffFullJitterBounds samples a seeded source many times per n: every
// delay stays in [0, min(cap, base·2^n)), the observed maximum doubles until
// the cap and then stays just below it, and the observed minimum is near 0
// (full jitter, not "equal jitter").
func TestBackoffFullJitterBounds(t *testing.T) {
	const samples = 5000
	b := Backoff{Base: 10 * time.Millisecond, Cap: time.Second, Rand: NewRand(42)}
	var prevMax time.Duration
	for n := 0; n <= 12; n++ {
		ceil := min(time.Second, 10*time.Millisecond<<n)
		lo, hi := time.Duration(math.MaxInt64), time.Duration(0)
		for i := 0; i < samples; i++ {
			d := b.Delay(n)
			if d < 0 || d >= ceil {
				t.Fatalf("Delay(%d) = %v, want in [0, %v)", n, d, ceil)
			}
			lo, hi = min(lo, d), max(hi, d)
		}
		if hi < ceil*95/100 {
			t.Errorf("n=%d: max observed %v, want close to ceiling %v", n, hi, ceil)
		}
		if lo > ceil*5/100 {
			t.Errorf("n=%d: min observed %v, want close to 0 (full jitter)", n, lo)
		}
		uncapped := 10*time.Millisecond<<n < time.Second
		switch {
		case n > 0 && uncapped && hi <= prevMax:
			t.Errorf("n=%d: max observed %v did not grow from %v", n, hi, prevMax)
		case !uncapped && hi >= time.Second:
			t.Errorf("n=%d: max observed %v exceeds cap", n, hi)
		}
		prevMax = hi
	}
}

func TestBackoffDeterministicWithSeed(t *testing.T) {
	a := Backoff{Base: time.Millisecond, Cap: time.Second, Rand: NewRand(7)}
	b := Backoff{Base: time.Millisecond, Cap: time.Second, Rand: NewRand(7)}
	for n := 0; n < 50; n++ {
		if x, y := a.Delay(n), b.Delay(n); x != y {
			t.Fatalf("same seed diverged at n=%d: %v vs %v", n, x, y)
		}
	}
}

func TestBackoffClampsBadSamples(t *testing.T) {
	ceil := 100 * time.Millisecond
	tests := []struct {
		name string
		r    float64
		want time.Duration
	}{
		{"zero", 0, 0},
		{"negative", -3, 0},
		{"NaN", math.NaN(), 0},
		{"one is exclusive", 1, ceil - 1},
		{"above one", 7, ceil - 1},
		{"half", 0.5, ceil / 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := Backoff{Base: ceil, Cap: ceil, Rand: func() float64 { return tt.r }}
			if got := b.Delay(0); got != tt.want {
				t.Errorf("Delay(0) with r=%v = %v, want %v", tt.r, got, tt.want)
			}
		})
	}
	huge := Backoff{Base: time.Second, Rand: func() float64 { return math.Nextafter(1, 0) }}
	if got := huge.Delay(500); got < 0 || got >= maxDuration {
		t.Errorf("uncapped Delay(500) = %v, want in [0, max)", got)
	}
}

func TestBackoffZeroValueNoDelay(t *testing.T) {
	var b Backoff
	for n := 0; n < 5; n++ {
		if got := b.Delay(n); got != 0 {
			t.Errorf("zero Backoff Delay(%d) = %v, want 0", n, got)
		}
	}
}
