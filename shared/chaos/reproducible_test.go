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
func TestSequentialRunIsReproducible(t *testing.T) {
	a := run(t, Options{Orders: 400, Seed: 3})
	b := run(t, Options{Orders: 400, Seed: 3})
	a.Elapsed, b.Elapsed = 0, 0
	if !reflect.DeepEqual(a, b) {
		t.Errorf("two runs with seed 3 differ:\n%+v\n%+v", a, b)
	}
}
