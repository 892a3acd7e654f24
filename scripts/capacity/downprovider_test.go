package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// downProvider answers every payment call 503 and counts the calls per
// order: the idempotency keys are "<saga id>:charge" and "<saga id>:refund".
type downProvider struct {
	mu    sync.Mutex
	calls map[string]map[string]int // saga id → path → calls
}

func (p *downProvider) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	saga, _, _ := strings.Cut(r.Header.Get("Idempotency-Key"), ":")
	p.mu.Lock()
	if p.calls[saga] == nil {
		p.calls[saga] = map[string]int{}
	}
	p.calls[saga][r.URL.Path]++
	p.mu.Unlock()
	http.Error(w, "provider down", http.StatusServiceUnavailable)
}

func (p *downProvider) snapshot() map[string]map[string]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := map[string]map[string]int{}
	for k, v := range p.calls {
		out[k] = map[string]int{}
		for path, n := range v {
			out[k][path] = n
		}
	}
	return out
}

// TestDownProviderCallsStayWithinTheBound runs the local runner (the same
// functions, triggers and timers as the cloud, on SQLite and the embedded
// queue) against a payment provider that answers every call 503, and counts
// the calls each order makes. The breaker is kept closed
// (PAYMENT_BREAKER_THRESHOLD very high) so every step attempt reaches the
// provider — the worst case for calls: with the default breaker, refused
// attempts never reach it. The saga backoff is shortened so the whole
// budget (5 charge attempts, 10 refund attempts) is spent in seconds, and
// the outage bound (SAGA_OUTAGE_BOUND=2s) so each step holds its last
// attempt once or twice, a second apart, instead of 20 times a minute
// apart; the calls of the attempts do not depend on these settings, those
// of the holds are computed by the same model for both
// (docs/capacity.md, "Retry amplification", scales it to the defaults).
// Every order must end, and each must have made at most the computed
// worst case of calls for these settings, and at least every attempt's
// calls and one call after each step's holds.
func TestDownProviderCallsStayWithinTheBound(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the local runner")
	}
	l := deployedLayers(t)
	if worst := l.bounds()[0].Calls; worst > PromisedPaymentCallsPerOrder {
		t.Fatalf("computed worst case %d exceeds the documented %d", worst, PromisedPaymentCallsPerOrder)
	}
	l.SagaBackoffBase, l.SagaBackoffCap, l.OutageBound = 10*time.Millisecond, 100*time.Millisecond, 2*time.Second
	worst := l.bounds()[0].Calls
	least := l.PaymentCallAttempts*(l.step("process_payment").MaxAttempts+l.compensationOf("refund_payment").MaxCompensationAttempts) + 2

	prov := &downProvider{calls: map[string]map[string]int{}}
	srv := httptest.NewServer(prov)
	defer srv.Close()

	bin := filepath.Join(t.TempDir(), "localcloud")
	build := exec.Command("go", "build", "-o", bin, "../localcloud")
	build.Env = append(os.Environ(), "GOTOOLCHAIN=local")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "-addr", "127.0.0.1:0", "-data", t.TempDir(), "-triggers", "../../triggers/triggers.yaml", "-quiet")
	cmd.Env = append(os.Environ(),
		"PAYMENT_PROVIDER_URL="+srv.URL,
		"PAYMENT_BREAKER_THRESHOLD=1000000",
		"PAYMENT_TIMEOUT=1s",
		"SAGA_BACKOFF_BASE=10ms",
		"SAGA_BACKOFF_CAP=100ms",
		"SAGA_OUTAGE_BOUND=2s",
	)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	base := ""
	lines := bufio.NewScanner(stdout)
	urlRe := regexp.MustCompile(`API:\s+(http://\S+)`)
	for base == "" && lines.Scan() {
		if m := urlRe.FindStringSubmatch(lines.Text()); m != nil {
			base = m[1]
		}
	}
	if base == "" {
		t.Fatal("the runner never printed its URL")
	}
	go func() { _, _ = io.Copy(io.Discard, stdout) }()

	const orders = 4
	ids := make([]string, orders)
	for i := range ids {
		body := fmt.Sprintf(`{"customer_id":"c-%d","currency":"RUB","items":[{"sku":"sku-%d","quantity":1,"unit_price_minor":100}]}`, i, i%5+1)
		if ids[i], err = postOrder(base, fmt.Sprintf("down-%d", i), body); err != nil {
			t.Fatal(err)
		}
	}
	start := time.Now()
	deadline := start.Add(55 * time.Second)
	final := map[string]string{}
	for len(final) < orders && time.Now().Before(deadline) {
		time.Sleep(250 * time.Millisecond)
		for _, id := range ids {
			if st, err := orderStatus(base, id); err == nil && (st == "CONFIRMED" || st == "CANCELLED" || st == "FAILED") {
				final[id] = st
			}
		}
	}
	took := time.Since(start)
	calls := prov.snapshot()
	if len(final) < orders {
		t.Fatalf("%d of %d orders ended within 55 s; calls so far: %v", len(final), orders, calls)
	}
	for id, st := range final {
		if st == "CONFIRMED" {
			t.Errorf("order %s CONFIRMED with the provider down", id)
		}
	}
	if len(calls) != orders {
		t.Fatalf("calls for %d sagas, want %d: %v", len(calls), orders, calls)
	}
	for saga, byPath := range calls {
		n := 0
		for _, c := range byPath {
			n += c
		}
		if n > worst || n < least {
			t.Errorf("saga %s: %d calls (%v), want from %d (every attempt's calls, one after each step's holds) to the computed worst case %d", saga, n, byPath, least, worst)
		}
	}
	t.Logf("%d orders ended in %s (%v); calls per order: %v; computed worst case %d for these settings", orders, took.Round(100*time.Millisecond), final, calls, worst)
}

func postOrder(base, key, body string) (string, error) {
	req, _ := http.NewRequest("POST", base+"/orders", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer dev-user")
	req.Header.Set("Idempotency-Key", key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var o struct{ ID string }
	if err := json.NewDecoder(resp.Body).Decode(&o); err != nil || resp.StatusCode != 201 {
		return "", fmt.Errorf("POST /orders = %d, %v", resp.StatusCode, err)
	}
	return o.ID, nil
}

func orderStatus(base, id string) (string, error) {
	req, _ := http.NewRequest("GET", base+"/orders/"+id, nil)
	req.Header.Set("Authorization", "Bearer dev-user")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var o struct{ Status string }
	err = json.NewDecoder(resp.Body).Decode(&o)
	return o.Status, err
}
