package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"regexp"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"ordersaga/shared/domain/saga"
	"ordersaga/shared/domain/store"
)

// burstResult is what one end-to-end burst measured.
type burstResult struct {
	orders, confirmed, final int
	postRate, finalRate      float64
	p50, p99                 time.Duration
	// per confirmed order
	apiInv, advInv, timerInv           float64
	sends, sent, receives, deletes     float64
	emptyReceives, tx                  float64
	gbSecAPI, gbSecAdv, gbSecPerOrder  float64
	took                               time.Duration
	memMB                              map[string]float64
	timerInvocations, timerGBSecPerMin float64
}

// benchE2E places n orders from clients goroutines against the local stack
// (as the "now" table: 600 orders, 16 clients) while the sagas run,
// waits until every order is final, and reports the POST rate, the rate of
// orders reaching a final state, created → final latencies, and what each
// confirmed order cost in invocations, queue requests and transactions.
func benchE2E(n, clients, concurrency int) burstResult {
	dir, err := os.MkdirTemp("", "bench-e2e")
	must(err)
	defer os.RemoveAll(dir)
	s := newStack(dir, map[string]int64{"sku-1": int64(10 * n), "sku-2": int64(10 * n)}, concurrency)
	defer s.close()

	var next atomic.Int64
	var bad atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for c := 0; c < clients; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				status, err := postOrder(s.srv.URL, fmt.Sprintf("e2e-%d", i))
				if err != nil || status != http.StatusCreated {
					bad.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	postTook := time.Since(start)
	if bad.Load() != 0 {
		fmt.Fprintf(os.Stderr, "bench: e2e: %d POSTs failed\n", bad.Load())
		os.Exit(1)
	}
	// Wait for every saga to finish (bounded), polling one count on a
	// read-only connection: reading every saga each time would cost the
	// system under test a quarter of the CPU (measured).
	deadline := time.Now().Add(3 * time.Minute)
	for {
		var done int
		must(s.db.QueryRow(`SELECT count(*) FROM sagas WHERE state IN ('completed', 'compensated', 'failed')`).Scan(&done))
		if done == n {
			break
		}
		if time.Now().After(deadline) {
			fmt.Fprintf(os.Stderr, "bench: e2e: only %d of %d sagas finished within 3 minutes\n", done, n)
			os.Exit(1)
		}
		time.Sleep(20 * time.Millisecond)
	}
	sagas := finishedSagas(s)
	for _, in := range sagas {
		if !in.State.Finished() {
			fmt.Fprintf(os.Stderr, "bench: e2e: saga %s counted as finished but is in state %s\n", in.ID, in.State)
			os.Exit(1)
		}
	}
	r := burstResult{orders: n, postRate: float64(n) / postTook.Seconds()}
	var lat []time.Duration
	var last time.Time
	for _, in := range sagas {
		r.final++
		if in.State == saga.StateCompleted {
			r.confirmed++
		}
		lat = append(lat, in.FinishedAt.Sub(in.CreatedAt))
		if in.FinishedAt.After(last) {
			last = in.FinishedAt
		}
	}
	r.took = last.Sub(start)
	r.finalRate = float64(n) / r.took.Seconds()
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	r.p50, r.p99 = lat[len(lat)/2], lat[len(lat)*99/100]

	// Let the relay publish the last order events, then read the counters.
	time.Sleep(1500 * time.Millisecond)
	s.stop()
	s.wg.Wait()
	c := float64(max(r.confirmed, 1))
	iv := s.inv
	iv.mu.Lock()
	r.apiInv = float64(iv.n["orderapi"]) / c
	r.advInv = float64(iv.n["sagaadvancer"]) / c
	r.timerInv = float64(iv.n["outboxrelay"]+iv.n["sagarecovery"]) / c
	mem := functionMemoryMB()
	gbs := func(name string) float64 { return iv.bill[name].Seconds() * mem[name] / 1024 }
	r.gbSecAPI, r.gbSecAdv = gbs("orderapi")/c, gbs("sagaadvancer")/c
	r.gbSecPerOrder = r.gbSecAPI + r.gbSecAdv
	iv.mu.Unlock()
	r.memMB = mem
	r.sends = float64(s.q.sends.Load()) / c
	r.sent = float64(s.q.sent.Load()) / c
	r.receives = float64(s.q.receives.Load()) / c
	r.emptyReceives = float64(s.q.emptyReceives.Load()) / c
	r.deletes = float64(s.q.deletes.Load()) / c
	r.tx = float64(s.tx.Load()) / c
	return r
}

// finishedSagas reads every saga of the stack.
func finishedSagas(s *stack) []saga.Instance {
	ctx := context.Background()
	var out []saga.Instance
	rows, err := s.db.QueryContext(ctx, "SELECT id FROM sagas")
	must(err)
	var ids []string
	for rows.Next() {
		var id string
		must(rows.Scan(&id))
		ids = append(ids, id)
	}
	rows.Close()
	must(s.st.View(ctx, func(ctx context.Context, tx store.Tx) error {
		for _, id := range ids {
			in, err := tx.GetSaga(ctx, id)
			if err != nil {
				return err
			}
			out = append(out, in)
		}
		return nil
	}))
	return out
}

// functionMemoryMB reads the default memory of each function from
// terraform/variables.tf (var.function_memory_mb).
func functionMemoryMB() map[string]float64 {
	out := map[string]float64{"orderapi": 128, "sagaadvancer": 128, "outboxrelay": 128, "sagarecovery": 128}
	raw, err := os.ReadFile("terraform/variables.tf")
	if err != nil {
		return out
	}
	blk := regexp.MustCompile(`(?s)variable "function_memory_mb".*?default\s*=\s*\{(.*?)\}`).FindSubmatch(raw)
	if blk == nil {
		return out
	}
	for _, m := range regexp.MustCompile(`(\w+)\s*=\s*(\d+)`).FindAllSubmatch(blk[1], -1) {
		v, _ := strconv.ParseFloat(string(m[2]), 64)
		out[string(m[1])] = v
	}
	return out
}

func e2eRows(r burstResult, clients int) []row {
	return []row{
		{fmt.Sprintf("e2e burst: POST /orders while sagas run (%d orders, %d clients)", r.orders, clients),
			fmt.Sprintf("%.0f orders/s", r.postRate), "—", "—"},
		{"e2e burst: orders reaching a final state", fmt.Sprintf("%.0f orders/s (%d confirmed, all %d final in %s)", r.finalRate, r.confirmed, r.final, r.took.Round(10*time.Millisecond)),
			fmt.Sprintf("%.0f orders/s POST", r.postRate), fmt.Sprintf("%.2f", r.finalRate/r.postRate)},
		{"e2e burst: created → final p50 / p99", fmt.Sprintf("%s / %s", r.p50.Round(time.Millisecond), r.p99.Round(time.Millisecond)), "—", "—"},
	}
}
