package chaos

import (
	"maps"
	"math/rand/v2"
	"slices"
	"sync"
	"time"
)

// Faults are the injection probabilities of a run (each in [0, 1], per
// opportunity: per call, per batch, per step). The zero value injects nothing.
type Faults struct {
	// Process crashes at step boundaries.
	APIDropDispatch      float64 // POST committed, process dies before the fast-path dispatch
	AdvancerDropDispatch float64 // saga step saved, process dies before dispatching the next command
	RecoveryDropDispatch float64 // recovery wrote a re-drive, process dies before dispatching it
	RelayCrashAfterSend  float64 // relay sent a batch, process dies before marking it published
	CrashAfterStep       float64 // a forward step's effect happened, process dies before the saga is saved
	CrashAfterComp       float64 // a compensation's effect happened, process dies before the saga is saved
	InvocationCrash      float64 // the advancer dies part-way through a batch (nothing acknowledged)
	LostAck              float64 // the advancer finished but the trigger never deleted the batch
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
		CrashAfterStep: 0.05, CrashAfterComp: 0.10, InvocationCrash: 0.04, LostAck: 0.04, PoisonMessage: 0.01,
		DuplicateInvoke: 0.10, StaleRedeliver: 0.05, BatchesPerTick: 3,
		StepTransient: 0.03, ConfirmRejected: 0.04, CompensationDies: 0.01,
		StoreBefore: 0.02, StoreAfter: 0.02, StoreView: 0.01,
		QueueSend: 0.04, QueueReceive: 0.03, QueueDelete: 0.03,
		QueueSendInTxRefused: 0.04, QueueSendInTxFailed: 0.03,
		PaymentFailure: 0.10, PaymentLost: 0.05, PaymentTimeout: 0.02, PaymentLatency: 300 * time.Millisecond,
		DuplicatePost: 0.10, MismatchedPost: 0.04,
	}
}

// injector draws the run's fault decisions from one seeded source and
// counts what it injected. While off it injects nothing and draws nothing,
// so the sequence of draws — and the run — depends only on the seed. Safe
// for concurrent use.
//
// A component whose calls can overlap another's draws from a stream of its
// own (stream): the relay sends a round while it records the previous one
// and claims the next, so the queue's decisions and the store's would
// otherwise interleave in whatever order the two goroutines reach the
// source, and two runs of one seed would differ.
type injector struct {
	mu     sync.Mutex
	on     bool // the root's switch; a stream follows its root's
	rnd    *rand.Rand
	parent *injector // the root, for a stream
}

// stream returns an injector drawing from its own source (seed, salt),
// injecting exactly while in is on.
func (in *injector) stream(seed, salt uint64) *injector {
	return &injector{rnd: rand.New(rand.NewPCG(seed, salt)), parent: in}
}

// enabled reports whether the run injects now.
func (in *injector) enabled() bool {
	root := in
	if in.parent != nil {
		root = in.parent
	}
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

// tally is a set of named counters. Safe for concurrent use.
type tally struct {
	mu sync.Mutex
	m  map[string]int
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
