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

// A store runs a transaction again when SQLite is busy or a group commit
// failed (YDB after a lock conflict), so code inside a transaction may run
// twice for one save. A run whose every transaction ran twice (the first
// run rolled back) reports exactly what a run with single runs reports:
// no fault decision, tally or id depends on how often a transaction ran.
func TestRunDoesNotDependOnTransactionReruns(t *testing.T) {
	orders := 150
	if raceEnabled {
		orders = 60
	}
	a := run(t, Options{Orders: orders, Seed: 5})
	b := run(t, Options{Orders: orders, Seed: 5, rerunTx: true})
	a.Elapsed, b.Elapsed = 0, 0
	if !reflect.DeepEqual(a, b) {
		t.Errorf("a run with every transaction run twice differs:\n%+v\n%+v", a, b)
	}
}
