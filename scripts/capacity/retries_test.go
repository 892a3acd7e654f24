package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zclconf/go-cty/cty"
)

func deployedLayers(t *testing.T) retryLayers {
	t.Helper()
	d, err := loadDeployment(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	l, err := layersFrom(d)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// The CI check: the worst case computed from the code's defaults,
// terraform/ and triggers/triggers.yaml stays within the bounds
// docs/capacity.md states.
func TestRetryBoundsHoldWithTheDeployedConfiguration(t *testing.T) {
	var out bytes.Buffer
	if code := run([]string{"-root", repoRoot, "-retries"}, &out, &out); code != 0 {
		t.Fatalf("exit %d:\n%s", code, out.String())
	}
	if !strings.Contains(out.String(), "every documented bound holds") {
		t.Fatalf("output:\n%s", out.String())
	}
}

func TestRetryBoundFailsWhenALayerGrows(t *testing.T) {
	for name, grow := range map[string]func(*retryLayers){
		"more refund attempts": func(l *retryLayers) {
			for i := range l.Steps {
				if l.Steps[i].Compensation == "refund_payment" {
					l.Steps[i].MaxCompensationAttempts = 20
				}
			}
		},
		"more call attempts":      func(l *retryLayers) { l.PaymentCallAttempts = 4 },
		"longer outage bound":     func(l *retryLayers) { l.OutageBound = time.Hour },
		"batch past the deadline": func(l *retryLayers) { l.BatchConcurrency = 1 },
	} {
		l := deployedLayers(t)
		l.Steps = append(l.Steps[:0:0], l.Steps...)
		grow(&l)
		if p := l.problems(); len(p) == 0 {
			t.Errorf("%s: no problem reported", name)
		}
	}
}

func TestPaymentCallsAreTheProductOfTheLayers(t *testing.T) {
	l := deployedLayers(t)
	b := l.bounds()[0]
	// Each attempt a guarded call; then one call per hold of the last
	// attempt, one per backoff cap within the outage bound.
	holds := int(l.OutageBound / l.SagaBackoffCap)
	want := l.PaymentCallAttempts*(l.step("process_payment").MaxAttempts+l.compensationOf("refund_payment").MaxCompensationAttempts) + 2*holds
	if b.Calls != want || holds == 0 {
		t.Fatalf("payment calls %d, want %d", b.Calls, want)
	}
	// The time bound covers at least the breaker waits of both steps.
	if b.Duration < 2*l.OutageBound {
		t.Fatalf("duration %s shorter than the breaker waits alone", b.Duration)
	}
}

func TestDocsStateTheCheckedBounds(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join(repoRoot, "docs", "capacity.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"≤ 90 payment-provider calls per order", "ends within 60 minutes"} {
		if !strings.Contains(string(doc), want) {
			t.Errorf("docs/capacity.md does not state %q, the bound TestRetryBoundsHoldWithTheDeployedConfiguration checks", want)
		}
	}
	if PromisedPaymentCallsPerOrder != 90 || PromisedSagaEndWithin != 60*time.Minute {
		t.Fatal("the promised bounds changed: change docs/capacity.md and this test together")
	}
}

func TestQueueWithoutMaxReceiveCountIsRefused(t *testing.T) {
	d, err := loadDeployment(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	for i := range d.Triggers.Queues {
		d.Triggers.Queues[i].MaxReceiveCount = 0
	}
	if _, err := layersFrom(d); err == nil || !strings.Contains(err.Error(), "max_receive_count") {
		t.Fatalf("got %v, want an error naming max_receive_count", err)
	}
}

// The environment Terraform sets reaches the bound: literal values and
// var.X defaults of local.common_environment are read.
func TestTerraformEnvironmentIsRead(t *testing.T) {
	dir := t.TempDir()
	tf := `locals {
  common_environment = merge({
    SAGA_BACKOFF_CAP      = "2m"
    RECOVERY_MAX_RESENDS = var.redrives
    QUEUE_URL             = local.somewhere
  }, var.extra)
}
`
	if err := os.WriteFile(filepath.Join(dir, "functions.tf"), []byte(tf), 0o644); err != nil {
		t.Fatal(err)
	}
	vars, err := variableDefaults(filepath.Join(repoRoot, "terraform", "variables.tf"))
	if err != nil {
		t.Fatal(err)
	}
	vars["redrives"] = cty.NumberIntVal(7)
	env, err := commonEnvironment(filepath.Join(dir, "functions.tf"), vars)
	if err != nil {
		t.Fatal(err)
	}
	if env["SAGA_BACKOFF_CAP"] != "2m" || env["RECOVERY_MAX_RESENDS"] != "7" || env["QUEUE_URL"] != "placeholder" {
		t.Fatalf("env %v", env)
	}
}
