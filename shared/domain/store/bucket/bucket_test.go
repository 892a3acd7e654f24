package bucket

import (
	"fmt"
	"hash/fnv"
	"testing"
)

// Keys spread over every bucket, roughly evenly.
func TestOfSpreads(t *testing.T) {
	counts := make([]int, N)
	const keys = 8000
	for i := range keys {
		b := Of(fmt.Sprintf("saga-%d", i))
		if b < 0 || b >= N {
			t.Fatalf("Of = %d, outside [0, %d)", b, N)
		}
		counts[b]++
	}
	for b, c := range counts {
		if c < keys/N*8/10 || c > keys/N*12/10 {
			t.Errorf("bucket %d holds %d of %d keys, want about %d", b, c, keys, keys/N)
		}
	}
}

// The parts are separated, so ("ab", "c") and ("a", "bc") are different
// keys; one part is the plain FNV-1a of the key.
func TestOfSeparatesParts(t *testing.T) {
	h := fnv.New32a()
	h.Write([]byte("order-1"))
	if got, want := Of("order-1"), int64(h.Sum32()%N); got != want {
		t.Errorf("Of(order-1) = %d, want %d", got, want)
	}
	h = fnv.New32a()
	h.Write([]byte("ab\x00c"))
	if got, want := Of("ab", "c"), int64(h.Sum32()%N); got != want {
		t.Errorf("Of(ab, c) = %d, want %d", got, want)
	}
}
