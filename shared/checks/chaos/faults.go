package chaos

import (
	"context"
	"encoding/binary"
	"hash/fnv"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Faults are the injection probabilities of a run (each in [0, 1], per
// opportunity: per call, per batch, per step). The zero value injects nothing.
type Faults struct {
	// Process crashes at step boundaries.
	APIDropDispatch      float64 // POST committed, process dies before the fast-path dispatch
	AdvancerDropDispatch float64 // saga step saved, process dies before dispatching the next command
	RecoveryDropDispatch float64 // recovery wrote a resend, process dies before dispatching it
	RelayCrashAfterSend  float64 // relay sent a batch, process dies before marking it published
	CrashAfterStep       float64 // a forward step's participant call had its effect, process dies before the saga is saved
	CrashAfterComp       float64 // a compensation's participant call had its effect, process dies before the saga is saved
	// CrashInSave: the advancer dies inside the save transaction of a step
	// or compensation that touches only the store (it has no effect
	// outside it); the transaction rolls back with every step folded into it.
	CrashInSave     float64
	InvocationCrash float64 // the advancer dies part-way through a batch (nothing acknowledged)
	LostAck         float64 // the advancer finished but the trigger never deleted the batch
	// PoisonMessage is the share of new saga commands that crash the
	// advancer whenever they are in its batch — until the queue moves them
	// to the DLQ after max_receive_count deliveries (also while draining).
	PoisonMessage float64

	// Deliveries.
	DuplicateInvoke float64 // the same batch is invoked twice
	StaleRedeliver  float64 // an old batch is delivered again later
	BatchesPerTick  int     // batches received per tick before the shuffled invocation

	// Step outcomes forced through the advancer's step table (orchestrator.InjectFaults).
	StepTransient    float64 // a step or compensation fails transiently (retried with backoff)
	ConfirmRejected  float64 // confirm_order fails for good: refund, release and cancel run
	CompensationDies float64 // a compensation fails for good: the saga fails and is dead-lettered

	// Transient infrastructure errors.
	StoreBefore  float64 // InTx fails before running its closure
	StoreAfter   float64 // InTx runs its closure, then fails and rolls back
	StoreView    float64 // View fails before running its closure
	QueueSend    float64 // SendBatch fails (half before sending, half after: duplicates)
	QueueReceive float64 // Receive fails (half before, half after receiving: the batch is lost until it is visible again)
	QueueDelete  float64 // Delete fails (half before deleting: redelivery)

	// The fast path inside the transaction (Options.InTx only).
	QueueSendInTxRefused float64 // SendInTx refuses (Invalid): the rows stay pending for the fast path after commit
	QueueSendInTxFailed  float64 // SendInTx fails like the database (Transient, half after storing): the transaction fails

	// Payment provider.
	PaymentFailure float64       // the provider answers 503 before any effect
	PaymentLost    float64       // the effect happens, the answer is lost (caller told 503)
	PaymentTimeout float64       // the provider is too slow: the attempt times out before any effect
	PaymentLatency time.Duration // mean simulated latency per provider call (fake time)

	// Client behaviour.
	DuplicatePost  float64 // an order is POSTed 2–4 times at once with the same key
	MismatchedPost float64 // an order's key is reused afterwards with a different body (422)
}

// DefaultFaults are the rates the CLI uses: high enough that every kind of
// fault happens many times in 150 orders, low enough that most orders still
// go through.
func DefaultFaults() Faults {
	return Faults{
		APIDropDispatch: 0.10, AdvancerDropDispatch: 0.08, RecoveryDropDispatch: 0.2, RelayCrashAfterSend: 0.15,
		CrashAfterStep: 0.10, CrashAfterComp: 0.10, CrashInSave: 0.20, InvocationCrash: 0.04, LostAck: 0.04, PoisonMessage: 0.01,
		DuplicateInvoke: 0.10, StaleRedeliver: 0.05, BatchesPerTick: 3,
		StepTransient: 0.03, ConfirmRejected: 0.04, CompensationDies: 0.01,
		StoreBefore: 0.02, StoreAfter: 0.02, StoreView: 0.01,
		QueueSend: 0.04, QueueReceive: 0.03, QueueDelete: 0.03,
		QueueSendInTxRefused: 0.04, QueueSendInTxFailed: 0.03,
		PaymentFailure: 0.10, PaymentLost: 0.05, PaymentTimeout: 0.02, PaymentLatency: 300 * time.Millisecond,
		DuplicatePost: 0.10, MismatchedPost: 0.04,
	}
}

// injector decides the run's faults from its seed and counts what it
// injected. While off it injects nothing and draws nothing. Safe for
// concurrent use.
//
// fire, float and intn draw the next value of a seeded stream: the run
// replays from its seed only if they are called the same number of times
// in the same order, so they are called only where that holds — outside
// any store transaction, on the run's goroutine or on a stream of their
// own (stream: the relay sends a round while it records the previous one
// and claims the next, so the queue's decisions and the store's would
// otherwise interleave in whatever order the two goroutines reach the
// source). Code inside a transaction, which the store may run again (busy,
// a failed group commit), decides with keyed or once, which give every
// run of it the same answer and count the fault once:
//   - keyed is a pure function of the seed, the fault's kind and a key
//     naming the opportunity, for keys the seed fixes (a saga's
//     correlation id and token, the invocation);
//   - once draws from the stream the first time a key is asked and keeps
//     the answer, for keys that name the opportunity but that the seed
//     does not fix (event ids, which concurrent duplicate requests race
//     for); the first asks follow the run's order.
type injector struct {
	mu     sync.Mutex
	on     bool // the root's switch; a stream follows its root's
	seed   uint64
	rnd    *rand.Rand
	parent *injector // the root, for a stream
	// decided holds the answers once gave, by kind and key.
	decided map[string]bool
}

// newInjector returns the root injector of a run with seed, off.
func newInjector(seed uint64) *injector {
	return &injector{seed: seed, rnd: rand.New(rand.NewPCG(seed, 0xc4a05))}
}

// stream returns an injector drawing from its own source (seed, salt),
// injecting exactly while in is on.
func (in *injector) stream(seed, salt uint64) *injector {
	return &injector{seed: in.seed, rnd: rand.New(rand.NewPCG(seed, salt)), parent: in}
}

// root is the injector whose switch and keyed faults in shares.
func (in *injector) root() *injector {
	if in.parent != nil {
		return in.parent
	}
	return in
}

// enabled reports whether the run injects now.
func (in *injector) enabled() bool {
	root := in.root()
	root.mu.Lock()
	defer root.mu.Unlock()
	return root.on
}

// fire reports whether to inject a fault now (probability p) and, if so,
// counts it as kind in t.
func (in *injector) fire(t *tally, kind string, p float64) bool {
	if p <= 0 || !in.enabled() {
		return false
	}
	in.mu.Lock()
	hit := in.rnd.Float64() < p
	in.mu.Unlock()
	if hit {
		t.add(kind, 1)
	}
	return hit
}

// keyed reports whether to inject the fault kind at the opportunity key
// (probability p): a pure function of the run's seed, kind and key, so
// every call with one key gets one answer however often and in whatever
// order the code asking runs. A fault that fires is counted as kind in t
// the first time its key fires only: the report counts faults, not the
// runs of a transaction that met one.
func (in *injector) keyed(t *tally, kind string, p float64, key string) bool {
	if p <= 0 || !in.enabled() || unit(in.seed, kind, key) >= p {
		return false
	}
	t.once(kind, key)
	return true
}

// unit maps (seed, kind, key) to a uniform value in [0,1): FNV-1a over the
// three, then the SplitMix64 finaliser to spread the bits.
func unit(seed uint64, kind, key string) float64 {
	h := fnv.New64a()
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], seed)
	h.Write(b[:])
	h.Write([]byte(kind))
	h.Write([]byte{0})
	h.Write([]byte(key))
	z := h.Sum64() + 0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	z ^= z >> 31
	return float64(z>>11) / (1 << 53)
}

// float returns a uniform draw in [0,1) (0 while off).
func (in *injector) float() float64 {
	if !in.enabled() {
		return 0
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.rnd.Float64()
}

// intn returns a uniform draw in [0,n) (0 while off or for n <= 1).
func (in *injector) intn(n int) int {
	if n <= 1 || !in.enabled() {
		return 0
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.rnd.IntN(n)
}

// set turns injection on or off (a stream follows its root: set the root).
func (in *injector) set(on bool) {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.on = on
}

// once reports whether to inject the fault kind at the opportunity key
// (probability p): the first ask with key draws from the stream, every
// later ask gets the same answer. A fault that fires is counted as kind
// in t once.
func (in *injector) once(t *tally, kind string, p float64, key string) bool {
	if p <= 0 || !in.enabled() {
		return false
	}
	id := kind + "\x00" + key
	in.mu.Lock()
	hit, seen := in.decided[id]
	if !seen {
		hit = in.rnd.Float64() < p
		if in.decided == nil {
			in.decided = map[string]bool{}
		}
		in.decided[id] = hit
	}
	in.mu.Unlock()
	if hit {
		t.once(kind, key)
	}
	return hit
}

// invocationKey tags the context of one invocation of the advancer the run
// makes (a batch): step faults name their opportunity with it (stepKey), so
// a step that a later delivery runs again is decided anew, while a
// transaction the store runs again within one invocation is not.
type invocationKey struct{}

// untagged numbers the opportunities met under a context no invocation
// tagged: each gets a key of its own.
var untagged atomic.Uint64

// invoked returns ctx tagged with the run's next invocation number (in a
// sequential run the numbers follow the run's own order, so they replay).
func (w *world) invoked(ctx context.Context) context.Context {
	return context.WithValue(ctx, invocationKey{}, w.invocations.Add(1))
}

// invoking reports whether ctx belongs to an advancer invocation of the
// run (tagged by invoked).
func invoking(ctx context.Context) bool {
	_, ok := ctx.Value(invocationKey{}).(uint64)
	return ok
}

// invocation names the invocation ctx belongs to ("i<n>"), or, for an
// untagged context, a fresh name per call ("u<n>"): such a decision is
// not repeated if its code runs again.
func invocation(ctx context.Context) string {
	if n, ok := ctx.Value(invocationKey{}).(uint64); ok {
		return "i" + strconv.FormatUint(n, 10)
	}
	return "u" + strconv.FormatUint(untagged.Add(1), 10)
}

// tally is a set of named counters. Safe for concurrent use.
type tally struct {
	mu sync.Mutex
	m  map[string]int
	// seen holds the (name, key) pairs once counted.
	seen map[string]bool
}

func newTally() *tally { return &tally{m: map[string]int{}} }

// add adds n to the counter name; a nil tally counts nothing.
func (t *tally) add(name string, n int) {
	if t == nil || n == 0 {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.m[name] += n
}

// once adds 1 to the counter name the first time it is called with key
// (for name); a nil tally counts nothing.
func (t *tally) once(name, key string) {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	id := name + "\x00" + key
	if t.seen[id] {
		return
	}
	if t.seen == nil {
		t.seen = map[string]bool{}
	}
	t.seen[id] = true
	t.m[name]++
}

func (t *tally) get(name string) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.m[name]
}

// snapshot returns a copy of the counters.
func (t *tally) snapshot() map[string]int {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make(map[string]int, len(t.m))
	for k, v := range t.m {
		out[k] = v
	}
	return out
}

// sortedKeys returns m's keys in order (maps are printed and compared in
// this order only).
func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
