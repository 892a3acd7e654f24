// Command soak runs the local runner as a user would — a child process on a
// loopback port and a fresh data folder — with real time, placing orders at
// a fixed rate from concurrent, retrying clients, through scripted
// incidents: a lone order while the payment provider is down, a payment
// outage entered and left at a person's pace, an outage of order-events,
// dead events piling past the relay's claim window and then redriven, a
// saga-command backlog longer than the recovery window, and a kill -9 with a
// restart. At the end it checks the README's guarantees (no order cancelled
// by an outage within the documented bound, every event published once and
// in order, stock and money conserved, every saga ended) and the histories
// of concurrent POST and GET requests for linearizability per idempotency
// key and per order (porcupine). docs/soak.md.
//
//	go run ./scripts/soak [-duration 3m] [-rate 4] [-seed 1] [-out report.json] [-keep]
//
// It prints one PASS or FAIL line per check and exits 1 if any check
// failed, 2 if the run could not be carried out.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// soak is one run.
type soak struct {
	dur         time.Duration
	out         io.Writer
	runner      *runner
	api         *api
	prov        *provider
	load        *load
	incidents   []*incident
	interrupted []*orderRec
	restartedAt time.Duration
	redriven    int
}

// runnerEnv are the settings the runner gets besides its defaults: a short
// recovery window (stuck 5 s, then 2 resends 5 s apart) and a small claim
// window (4 × 5 rows), so a 3-minute run reaches past both; the README
// tour's quick settings (dead events within seconds, sagas retrying within a
// second, the breaker probing every 5 s: 120 breaker waits are 10 minutes);
// one saga at a time per batch and a provider timeout above the backlog's
// latency, so a slow provider makes a backlog.
var runnerEnv = []string{
	"RELAY_MAX_ATTEMPTS=3", "RELAY_BACKOFF_CAP=2s", "RELAY_BATCH_SIZE=5",
	"RECOVERY_STUCK_AFTER=5s", "RECOVERY_MAX_RESENDS=2",
	"SAGA_BACKOFF_CAP=1s", "PAYMENT_BREAKER_OPEN_FOR=5s",
	"SAGA_BATCH_CONCURRENCY=1", "PAYMENT_TIMEOUT=5s",
}

// soakSKUs are the SKUs the orders buy, each set to soakStock units first.
var soakSKUs = []string{"sku-soak", "sku-1", "sku-2", "sku-3", "sku-4"}

const soakStock = 1_000_000

func main() {
	dur := flag.Duration("duration", 3*time.Minute, "length of the run (CI: 3m; the full soak: 30m or more)")
	rate := flag.Float64("rate", 4, "orders placed per second")
	seed := flag.Uint64("seed", 1, "seed of the workload's random choices (keys, items, duplicate clients)")
	outPath := flag.String("out", "", "write the report (checks, incidents, counts, settings) as JSON to this file")
	keep := flag.Bool("keep", false, "keep the data folder and the runner's log (printed at the end)")
	flag.Parse()
	if *dur < 2*time.Minute || *rate < 0.5 || *rate > 50 {
		fmt.Fprintln(os.Stderr, "soak: -duration must be at least 2m and -rate between 0.5 and 50")
		os.Exit(2)
	}
	res, err := run(*dur, *rate, *seed, *outPath, *keep, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		os.Exit(2)
	}
	for _, r := range res {
		if !r.Pass {
			os.Exit(1)
		}
	}
}

// report is the -out file.
type report struct {
	Duration  string      `json:"duration"`
	Rate      float64     `json:"rate"`
	Seed      uint64      `json:"seed"`
	Settings  []string    `json:"settings"`
	Orders    int         `json:"orders"`
	Requests  int         `json:"requests"`
	Incidents []*incident `json:"incidents"`
	Checks    []result    `json:"checks"`
	Elapsed   string      `json:"elapsed"`
}

func run(dur time.Duration, rate float64, seed uint64, outPath string, keep bool, out io.Writer) ([]result, error) {
	began := time.Now()
	if _, err := os.Stat("triggers/triggers.yaml"); err != nil {
		return nil, errors.New("run it from the repository root (triggers/triggers.yaml not found)")
	}
	work, err := os.MkdirTemp("", "soak-")
	if err != nil {
		return nil, err
	}
	if !keep {
		defer os.RemoveAll(work)
	}
	bin, err := buildRunner(work)
	if err != nil {
		return nil, err
	}
	prov, err := startProvider(seed)
	if err != nil {
		return nil, err
	}
	defer prov.close()
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	env := append([]string{"PAYMENT_PROVIDER_URL=" + prov.url}, runnerEnv...)
	r := &runner{bin: bin, data: filepath.Join(work, "data"), addr: addr, triggers: "triggers/triggers.yaml",
		env: env, logPath: filepath.Join(work, "runner.log")}
	if err := r.start(); err != nil {
		return nil, err
	}
	defer r.stop()
	// Ctrl-C or SIGTERM stops the runner and the provider before the soak
	// exits, so no child process outlives it.
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-sig
		fmt.Fprintln(os.Stderr, "soak: interrupted; stopping the runner")
		r.stop()
		prov.close()
		if !keep {
			_ = os.RemoveAll(work)
		}
		os.Exit(2)
	}()
	s := &soak{dur: dur, out: out, runner: r, api: newAPI(addr), prov: prov}
	s.load = &load{api: s.api, rate: rate, rnd: rand.New(rand.NewPCG(seed, seed^0x50a4))}
	ctx := context.Background()
	initial := map[string]int64{"sku-5": 100, "sku-out": 0}
	for _, sku := range soakSKUs {
		if err := s.api.admin(ctx, "PUT", "/admin/stock/"+sku, map[string]int64{"available": soakStock}, nil); err != nil {
			return nil, err
		}
		initial[sku] = soakStock
	}
	fmt.Fprintf(out, "soak: runner on %s, provider on %s, %s at %.1f orders/s, seed %d\n", addr, prov.url, dur, rate, seed)
	s.load.t0 = time.Now()

	loadCtx, stopLoad := context.WithCancel(ctx)
	pollCtx, stopPoll := context.WithCancel(ctx)
	defer stopPoll()
	go s.load.run(loadCtx)
	go s.load.poll(pollCtx, 2*time.Second)
	scripted := make(chan struct{})
	go func() { defer close(scripted); s.script(ctx) }()
	s.at(ctx, atLoadStop)
	stopLoad()
	<-scripted
	s.logf("load stopped after %d orders; draining", s.load.count())

	in := s.begin("drain")
	if n, err := s.redriveOutbox(ctx); err == nil && n > 0 {
		s.logf("operator sweep: %d outbox dead letters redriven", n)
		s.redriven += n
	}
	deadline := max(dur, s.restartedAt+50*time.Second)
	for s.load.since() < deadline && (s.load.unfinished(false) > 0 || s.outboxPending(ctx) != 0) {
		time.Sleep(500 * time.Millisecond)
	}
	s.end(in)
	waitPosters(s.load, 30*time.Second)
	stopPoll()
	f := finalState{initial: initial, deadline: deadline}
	for _, o := range s.load.snapshotOrders() {
		s.load.get(o)
	}
	var stock struct {
		Stock []stockRow `json:"stock"`
	}
	if err := s.api.admin(ctx, "GET", "/admin/stock", nil, &stock); err != nil {
		return nil, err
	}
	f.stock, f.money = stock.Stock, prov.sim.Counters()
	r.stop()
	db := filepath.Join(r.data, "ordersaga.db")
	if f.events, err = readOrderEvents(ctx, db); err != nil {
		return nil, err
	}
	if f.unsent, err = outboxLeft(ctx, db); err != nil {
		return nil, err
	}

	c := &checker{s: s, f: f}
	res := c.run()
	fmt.Fprintln(out)
	for _, x := range res {
		word := "PASS"
		if !x.Pass {
			word = "FAIL"
		}
		fmt.Fprintf(out, "%s %-32s %s\n", word, x.Name, x.Detail)
	}
	if keep {
		fmt.Fprintf(out, "data folder and runner log kept in %s\n", work)
	}
	if outPath != "" {
		rep := report{Duration: dur.String(), Rate: rate, Seed: seed, Settings: runnerEnv, Orders: s.load.count(),
			Requests: len(s.load.history), Incidents: s.incidents, Checks: res, Elapsed: time.Since(began).Round(time.Second).String()}
		b, _ := json.MarshalIndent(rep, "", "  ")
		if err := os.WriteFile(outPath, append(b, '\n'), 0o644); err != nil {
			return res, err
		}
	}
	return res, nil
}

// outboxPending is the runner's outbox_pending gauge (-1 if unreadable).
func (s *soak) outboxPending(ctx context.Context) float64 {
	rep := s.api.do(ctx, "GET", "/metrics", "dev-admin", "", nil)
	if rep.err != nil || rep.code != 200 {
		return -1
	}
	for _, line := range strings.Split(string(rep.body), "\n") {
		if f := strings.Fields(line); len(f) == 2 && (f[0] == "outbox_pending" || strings.HasPrefix(f[0], "outbox_pending{")) {
			if v, err := strconv.ParseFloat(f[1], 64); err == nil {
				return v
			}
		}
	}
	return -1
}

// waitPosters waits for the clients still retrying a POST, at most d.
func waitPosters(l *load, d time.Duration) {
	done := make(chan struct{})
	go func() { l.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(d):
	}
}
