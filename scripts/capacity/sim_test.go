package main

import (
	"math"
	"testing"
	"time"
)

func baseSim() simConfig {
	return simConfig{Rate: 10, Window: 10 * time.Millisecond, TxAttempts: 8, BackoffBase: 5 * time.Millisecond,
		BackoffCap: 50 * time.Millisecond, StepAttempts: 5, StepRetryAfter: time.Second, Duration: 200 * time.Second, Seed: 7}
}

func TestSimulationIsDeterministic(t *testing.T) {
	c := baseSim()
	c.Rate = 80
	a, b := simulate(c), simulate(c)
	if a != b {
		t.Fatalf("same seed, different results: %+v vs %+v", a, b)
	}
	c.Seed++
	if simulate(c) == a {
		t.Fatal("another seed gave the very same result: the seed is not used")
	}
}

// At low load a run aborts when another commit lands in its window:
// probability p = 1 − e^(−λW), and an aborted run runs again, so runs are
// λ/(1−p) per second and aborts λp/(1−p); the simulation must agree.
func TestSimulationMatchesLowLoadConflictRate(t *testing.T) {
	c := baseSim()
	c.Duration = 2000 * time.Second
	r := simulate(c)
	p := conflictProbability(c.Rate, c.Window)
	want := c.Rate * p / (1 - p)
	if math.Abs(r.Aborted-want)/want > 0.10 {
		t.Fatalf("aborts %.3f/s, want about %.3f/s (λp/(1−p))", r.Aborted, want)
	}
	if math.Abs(r.Committed-r.Offered)/r.Offered > 0.01 || r.GivenUp != 0 {
		t.Fatalf("at low load every transaction should commit: offered %.2f, committed %.2f, given up %.2f", r.Offered, r.Committed, r.GivenUp)
	}
}

// Commits on one row follow one another at least a window apart, so no
// offered rate can push them past the serial bound; far past it the step
// retries and give-ups appear.
func TestSimulationSaturatesAtTheSerialBound(t *testing.T) {
	c := baseSim()
	c.Duration = 12 * time.Second // past 5 step attempts a second apart, so give-ups show
	bound := serialBound(c.Window)
	for _, rate := range []float64{0.5 * bound, 2 * bound, 5 * bound} {
		c.Rate = rate
		r := simulate(c)
		if r.Committed > bound+1/c.Duration.Seconds() {
			t.Errorf("rate %.0f: %.1f commits/s, above the serial bound %.0f", rate, r.Committed, bound)
		}
		if rate > bound && (r.Committed < 0.8*bound || r.GivenUp == 0 || r.StepFails == 0) {
			t.Errorf("rate %.0f: committed %.1f (bound %.0f), step failures %.1f, given up %.1f: want saturation with step retries and give-ups",
				rate, r.Committed, bound, r.StepFails, r.GivenUp)
		}
	}
}
