package chaos

import (
	"reflect"
	"testing"
)

// A sequential run replays exactly from its seed (docs/bench.md, "Chaos
// runs"): a failure found at seed S can be run again and debugged. The
// relay's concurrent sends (RELAY_SEND_CONCURRENCY) made two runs of one
// seed differ once a round had several chunks; a sequential run sends them
// one at a time, as it advances one message at a time.
//
// The relay also sends a round while it records the previous one and
// claims the next: the queue's fault decisions come from a stream of their
// own (injector.stream), or they would interleave with the store's in the
// order the two goroutines happen to run (two runs of one seed differed
// under the race detector).
func TestSequentialRunIsReproducible(t *testing.T) {
	orders := 400 // one in three runs of 200 caught the concurrent sends; 400 caught them every time
	if raceEnabled {
		orders = 100
	}
	a := run(t, Options{Orders: orders, Seed: 3})
	b := run(t, Options{Orders: orders, Seed: 3})
	a.Elapsed, b.Elapsed = 0, 0
	if !reflect.DeepEqual(a, b) {
		t.Errorf("two runs with seed 3 differ:\n%+v\n%+v", a, b)
	}
}
