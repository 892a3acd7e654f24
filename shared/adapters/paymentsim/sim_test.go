package paymentsim_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"ordersaga/shared/adapters/paymentsim"
	"ordersaga/shared/app/payments"
	"ordersaga/shared/domain/apperr"
)

func do(t *testing.T, h http.Handler, method, path, key, body string) (int, map[string]any) {
	t.Helper()
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	if key != "" {
		req.Header.Set(payments.HeaderIdempotencyKey, key)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	var out map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
		t.Fatalf("%s %s: answer is not JSON: %q", method, path, rec.Body.String())
	}
	return rec.Code, out
}

func TestHandler(t *testing.T) {
	sim := mustNew(t, paymentsim.Config{})
	h := sim.Handler()
	tests := []struct {
		name, method, path, key, body string
		want                          int
		wantField, wantValue          string
	}{
		{"charge", "POST", "/charges", "k1", `{"amount_minor":1000000,"currency":"RUB"}`, 201, "status", "succeeded"},
		{"replay", "POST", "/charges", "k1", `{"amount_minor":1000000,"currency":"RUB"}`, 201, "ref", "ch_000001"},
		{"decline above the default limit", "POST", "/charges", "k2", `{"amount_minor":1000001,"currency":"RUB"}`, 402, "status", "declined"},
		{"no key", "POST", "/charges", "", `{"amount_minor":1,"currency":"RUB"}`, 400, "", ""},
		{"malformed", "POST", "/charges", "k3", `{"amount_minor":`, 400, "", ""},
		{"unknown field", "POST", "/charges", "k3", `{"amount_minor":1,"currency":"RUB","x":1}`, 400, "", ""},
		{"trailing data", "POST", "/charges", "k3", `{"amount_minor":1,"currency":"RUB"} {}`, 400, "", ""},
		{"zero amount", "POST", "/charges", "k3", `{"amount_minor":0,"currency":"RUB"}`, 422, "", ""},
		{"refund", "POST", "/refunds", "r1", `{"charge_key":"k1","amount_minor":1000000,"currency":"RUB"}`, 200, "refunded", "true"},
		{"refund replay", "POST", "/refunds", "r1", `{"charge_key":"k1","amount_minor":1000000,"currency":"RUB"}`, 200, "refunded", "true"},
		{"second refund under another key", "POST", "/refunds", "r2", `{"charge_key":"k1","amount_minor":1000000,"currency":"RUB"}`, 422, "", ""},
		{"refund of nothing voids", "POST", "/refunds", "r3", `{"charge_key":"k9","amount_minor":5,"currency":"RUB"}`, 200, "refunded", "false"},
		{"voided key declines", "POST", "/charges", "k9", `{"amount_minor":5,"currency":"RUB"}`, 402, "status", "declined"},
		{"bad faults", "PUT", "/faults", "", `{"failure_rate":2}`, 400, "", ""},
		{"faults", "PUT", "/faults", "", `{"failure_rate":0,"lost_answer_rate":0,"latency_ms":0}`, 200, "", ""},
		{"stats", "GET", "/stats", "", ``, 200, "charges", "1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, out := do(t, h, tc.method, tc.path, tc.key, tc.body)
			if code != tc.want {
				t.Fatalf("got %d %v, want %d", code, out, tc.want)
			}
			if tc.wantField != "" && fmt.Sprint(out[tc.wantField]) != tc.wantValue {
				t.Errorf("%s = %v, want %s", tc.wantField, out[tc.wantField], tc.wantValue)
			}
		})
	}
	c := sim.Counters()
	if c.Charges != 1 || c.Refunds != 1 || c.Voids != 1 || c.ChargedMinor != 1_000_000 || c.RefundedMinor != 1_000_000 {
		t.Errorf("counters: %+v", c)
	}
}

func TestInjectedFaultsAreSeededAndEffectful(t *testing.T) {
	ctx := context.Background()
	run := func(seed uint64) (pattern string, c paymentsim.Counters) {
		sim := mustNew(t, paymentsim.Config{FailureRate: 0.3, LostAnswerRate: 0.2, Seed: seed})
		var b strings.Builder
		for i := 0; i < 200; i++ {
			_, err := sim.Charge(ctx, fmt.Sprintf("k%d", i), 10, "RUB")
			switch {
			case err == nil:
				b.WriteByte('.')
			case apperr.Is(err, apperr.Transient):
				b.WriteByte('x')
			default:
				t.Fatalf("charge %d: %v", i, err)
			}
		}
		return b.String(), sim.Counters()
	}
	p1, c1 := run(42)
	p2, _ := run(42)
	p3, _ := run(43)
	if p1 != p2 {
		t.Error("same seed, different fault pattern")
	}
	if p1 == p3 {
		t.Error("different seeds, same fault pattern")
	}
	if c1.Failures < 30 || c1.Failures > 90 || c1.LostAnswers == 0 {
		t.Errorf("fault counts look wrong for rates 0.3/0.2: %+v", c1)
	}
	// A failure has no effect; a lost answer has: charges = requests - failures.
	if c1.Charges != c1.Requests-c1.Failures || c1.ChargedMinor != int64(c1.Charges)*10 {
		t.Errorf("effects: %+v", c1)
	}
}

func TestLatencyUsesInjectedSleep(t *testing.T) {
	var slept []time.Duration
	sim := mustNew(t, paymentsim.Config{Latency: 250 * time.Millisecond,
		Sleep: func(_ context.Context, d time.Duration) error { slept = append(slept, d); return nil }})
	if _, err := sim.Charge(context.Background(), "k", 1, "RUB"); err != nil {
		t.Fatal(err)
	}
	if len(slept) != 1 || slept[0] != 250*time.Millisecond {
		t.Errorf("slept %v, want [250ms]", slept)
	}
	sim = mustNew(t, paymentsim.Config{Latency: time.Hour})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := sim.Charge(ctx, "k", 1, "RUB"); !apperr.Is(err, apperr.Transient) {
		t.Errorf("canceled during latency: got %v, want Transient", err)
	}
}

// TestSetFailureRateKeepsOtherFaults: the local runner turns the provider's
// failures on and off at run time; the lost-answer rate must survive it.
func TestSetFailureRateKeepsOtherFaults(t *testing.T) {
	ctx := context.Background()
	sim := mustNew(t, paymentsim.Config{LostAnswerRate: 1})
	sim.SetFailureRate(1)
	if got := sim.FailureRate(); got != 1 {
		t.Fatalf("FailureRate = %v, want 1", got)
	}
	if _, err := sim.Charge(ctx, "k1", 100, "RUB"); !apperr.Is(err, apperr.Transient) {
		t.Fatalf("charge with failure rate 1 = %v, want a transient failure", err)
	}
	if c := sim.Counters(); c.Failures != 1 || c.Charges != 0 {
		t.Fatalf("after an injected failure: %+v, want 1 failure and no charge", c)
	}
	sim.SetFailureRate(0)
	if _, err := sim.Charge(ctx, "k2", 100, "RUB"); !apperr.Is(err, apperr.Transient) {
		t.Fatalf("charge with lost-answer rate 1 = %v, want the lost answer (transient)", err)
	}
	if c := sim.Counters(); c.Charges != 1 || c.LostAnswers != 1 {
		t.Fatalf("after failure rate 0: %+v, want the charge made and its answer lost", c)
	}
}
