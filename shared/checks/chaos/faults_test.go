package chaos

import (
	"context"
	"fmt"
	"testing"
)

// A keyed fault is a pure function of (seed, kind, key): asking again with
// one key, in any order and however often, gives the same answer and counts
// the fault once; other keys fire at about the rate asked for; nothing
// fires while injection is off.
func TestKeyedFaults(t *testing.T) {
	in := newInjector(7)
	in.set(true)
	n := newTally()
	const keys, p = 4000, 0.25
	first := make([]bool, keys)
	fired := 0
	for i := range keys {
		first[i] = in.keyed(n, "kind", p, fmt.Sprint("k", i))
		if first[i] {
			fired++
		}
	}
	if lo, hi := int(0.2*keys), int(0.3*keys); fired < lo || fired > hi {
		t.Errorf("%d of %d keys fired, want about %v of them", fired, keys, p)
	}
	for i := keys - 1; i >= 0; i-- { // again, backwards
		if got := in.keyed(n, "kind", p, fmt.Sprint("k", i)); got != first[i] {
			t.Fatalf("key k%d: %v, then %v", i, first[i], got)
		}
	}
	if got := n.get("kind"); got != fired {
		t.Errorf("counted %d, want %d (each fired key once)", got, fired)
	}
	other := newInjector(7)
	other.set(true)
	if got := other.keyed(nil, "kind", p, "k0"); got != first[0] {
		t.Errorf("another injector of the same seed decides k0 %v, want %v", got, first[0])
	}
	same := 0
	for i := range keys {
		if in.keyed(nil, "other kind", p, fmt.Sprint("k", i)) == first[i] {
			same++
		}
	}
	if same == keys {
		t.Errorf("another kind decides every key alike: kinds are not independent")
	}
	in.set(false)
	if in.keyed(n, "kind", 1, "k-off") {
		t.Errorf("a keyed fault fired while injection is off")
	}
}

// An invocation's tag names every decision under its context; an untagged
// context gets a new name each time.
func TestInvocationTags(t *testing.T) {
	w := &world{}
	ctx := w.invoked(context.Background())
	if a, b := invocation(ctx), invocation(ctx); a != b || a != "i1" {
		t.Errorf("tagged context: %q then %q, want i1 twice", a, b)
	}
	if got := invocation(w.invoked(context.Background())); got != "i2" {
		t.Errorf("next invocation %q, want i2", got)
	}
	bare := context.Background()
	if a, b := invocation(bare), invocation(bare); a == b {
		t.Errorf("untagged context named %q twice", a)
	}
}

// A fault decided once draws from the stream on the first ask with a key
// and gives every later ask the same answer, counting the fault once;
// the first asks consume the stream in their order, later asks not at all.
func TestOnceFaults(t *testing.T) {
	in := newInjector(7)
	in.set(true)
	n := newTally()
	first := make([]bool, 200)
	fired := 0
	for i := range first {
		first[i] = in.once(n, "kind", 0.3, fmt.Sprint("k", i))
		if first[i] {
			fired++
		}
	}
	if fired == 0 || fired == len(first) {
		t.Fatalf("%d of %d fired at p=0.3", fired, len(first))
	}
	for i := range first {
		if got := in.once(n, "kind", 0.3, fmt.Sprint("k", i)); got != first[i] {
			t.Fatalf("key k%d: %v, then %v", i, first[i], got)
		}
	}
	if got := n.get("kind"); got != fired {
		t.Errorf("counted %d, want %d (each fired key once)", got, fired)
	}
	// Asking again drew nothing: the stream continues where a fresh
	// injector of the seed is after the same first asks.
	fresh := newInjector(7)
	fresh.set(true)
	for i := range first {
		fresh.once(nil, "kind", 0.3, fmt.Sprint("k", i))
	}
	if a, b := in.float(), fresh.float(); a != b {
		t.Errorf("next draw %v, want %v: repeated asks drew from the stream", a, b)
	}
}
