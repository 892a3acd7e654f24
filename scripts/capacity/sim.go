package main

import (
	"container/heap"
	"math"
	"math/rand/v2"
	"time"
)

// simConfig is a discrete-event simulation of optimistic locking on one hot
// row (a stock row on YDB): transactions arrive as a Poisson stream, each
// reads the row and commits Window later; a commit fails with ABORTED
// (locks invalidated) when another transaction committed to the row after
// this one read it. An aborted transaction runs again after a full-jitter
// backoff (the SDK's retry), up to TxAttempts runs; then the saga step fails
// transiently and its message comes back StepRetryAfter later for a fresh
// set of runs, up to StepAttempts times, after which the order is given up
// (compensated).
type simConfig struct {
	Rate           float64       // transactions per second offered to the row
	Window         time.Duration // read → commit
	TxAttempts     int           // runs of one transaction (ydbstore.DefaultMaxAttempts)
	BackoffBase    time.Duration // first retry's jitter ceiling
	BackoffCap     time.Duration
	StepAttempts   int           // step attempts (the step table)
	StepRetryAfter time.Duration // the step's retry delay through the queue
	Duration       time.Duration // simulated time
	Seed           uint64
}

// simResult counts what happened, per second of simulated time.
type simResult struct {
	Offered   float64 // new transactions per second
	Committed float64
	Aborted   float64 // ABORTED commits per second
	TxRetries float64 // SDK re-runs per second (aborts that ran again)
	StepFails float64 // steps that spent their transaction runs, per second
	GivenUp   float64 // orders given up per second
}

type simEvent struct {
	at     time.Duration
	kind   int // 0 read, 1 commit
	id     int
	seq    int
	readAt time.Duration
}

type eventQueue []simEvent

func (q eventQueue) Len() int { return len(q) }
func (q eventQueue) Less(i, j int) bool {
	if q[i].at != q[j].at {
		return q[i].at < q[j].at
	}
	return q[i].seq < q[j].seq
}
func (q eventQueue) Swap(i, j int)   { q[i], q[j] = q[j], q[i] }
func (q *eventQueue) Push(x any)     { *q = append(*q, x.(simEvent)) }
func (q *eventQueue) Pop() (x any)   { old := *q; x = old[len(old)-1]; *q = old[:len(old)-1]; return x }
func (q *eventQueue) add(e simEvent) { heap.Push(q, e) }

// simulate runs the simulation; the same config (seed included) gives the
// same result.
func simulate(c simConfig) simResult {
	rng := rand.New(rand.NewPCG(c.Seed, 0x5eed))
	type tx struct{ runs, steps int }
	var (
		q          eventQueue
		txs        []tx
		seq        int
		lastCommit = time.Duration(-1)
		r          simResult
	)
	push := func(e simEvent) { seq++; e.seq = seq; q.add(e) }
	// Arrivals, generated up front.
	for t := time.Duration(0); ; {
		t += time.Duration(rng.ExpFloat64() / c.Rate * float64(time.Second))
		if t >= c.Duration {
			break
		}
		txs = append(txs, tx{})
		push(simEvent{at: t, kind: 0, id: len(txs) - 1})
		r.Offered++
	}
	for q.Len() > 0 {
		e := heap.Pop(&q).(simEvent)
		if e.at >= c.Duration {
			continue
		}
		switch e.kind {
		case 0:
			push(simEvent{at: e.at + c.Window, kind: 1, id: e.id, readAt: e.at})
		case 1:
			if lastCommit <= e.readAt {
				lastCommit = e.at
				r.Committed++
				continue
			}
			r.Aborted++
			t := &txs[e.id]
			t.runs++
			switch {
			case t.runs < c.TxAttempts:
				r.TxRetries++
				ceil := backoffCeiling(c.BackoffBase, c.BackoffCap, t.runs-1)
				push(simEvent{at: e.at + time.Duration(rng.Float64()*float64(ceil)), kind: 0, id: e.id})
			default:
				r.StepFails++
				t.runs, t.steps = 0, t.steps+1
				if t.steps >= c.StepAttempts {
					r.GivenUp++
					continue
				}
				push(simEvent{at: e.at + c.StepRetryAfter, kind: 0, id: e.id})
			}
		}
	}
	secs := c.Duration.Seconds()
	r.Offered /= secs
	r.Committed /= secs
	r.Aborted /= secs
	r.TxRetries /= secs
	r.StepFails /= secs
	r.GivenUp /= secs
	return r
}

// serialBound is the most commits per second one row can take when each
// transaction holds its read Window before committing: commits that
// overlap a reader's window invalidate it, so at best they follow one
// another a Window apart.
func serialBound(window time.Duration) float64 { return 1 / window.Seconds() }

// conflictProbability is the chance that a single run of a transaction
// aborts at low load: some other commit lands inside its window
// (Poisson, rate λ): 1 − e^(−λW).
func conflictProbability(rate float64, window time.Duration) float64 {
	return 1 - math.Exp(-rate*window.Seconds())
}
