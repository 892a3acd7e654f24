package prommetrics

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"ordersaga/shared/domain/metrics"
)

// value returns the counter/gauge value, or the sample count of a histogram,
// of the series name{labels}; ok is false when there is no such series.
func value(t *testing.T, g prometheus.Gatherer, name string, labels map[string]string) (float64, bool) {
	t.Helper()
	fams, err := g.Gather()
	if err != nil {
		t.Fatalf("Gather: %v", err)
	}
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
	next:
		for _, m := range f.GetMetric() {
			if len(m.GetLabel()) != len(labels) {
				continue
			}
			for _, lp := range m.GetLabel() {
				if v, ok := labels[lp.GetName()]; !ok || v != lp.GetValue() {
					continue next
				}
			}
			return metricValue(m), true
		}
	}
	return 0, false
}

func metricValue(m *dto.Metric) float64 {
	switch {
	case m.Counter != nil:
		return m.GetCounter().GetValue()
	case m.Gauge != nil:
		return m.GetGauge().GetValue()
	case m.Histogram != nil:
		return float64(m.GetHistogram().GetSampleCount())
	}
	return -1
}

func mustValue(t *testing.T, r *Recorder, name string, labels map[string]string, want float64) {
	t.Helper()
	got, ok := value(t, r.Registry(), name, labels)
	if !ok {
		t.Fatalf("no series %s%v", name, labels)
	}
	if got != want {
		t.Errorf("%s%v = %v, want %v", name, labels, got, want)
	}
}

func TestRecordsEachKind(t *testing.T) {
	r := New()
	r.Add(metrics.SagaSteps, 1, "step", "reserve", "direction", "forward", "status", "succeeded")
	r.Add(metrics.SagaSteps, 2, "status", "succeeded", "direction", "forward", "step", "reserve") // any order
	r.Set(metrics.OutboxLag, 42.5)
	r.Set(metrics.BreakerState, metrics.BreakerOpen, "dependency", "payments")
	r.Add(metrics.OutboxPending, 3)
	r.Add(metrics.OutboxPending, -1) // gauges may go down
	r.Observe(metrics.SagaDuration, 12, "saga_type", "order", "outcome", "completed")
	r.Observe(metrics.SagaDuration, 400, "saga_type", "order", "outcome", "completed")
	r.Add(metrics.RecoveryResent, 1)

	mustValue(t, r, metrics.SagaSteps, map[string]string{"step": "reserve", "direction": "forward", "status": "succeeded"}, 3)
	mustValue(t, r, metrics.OutboxLag, nil, 42.5)
	mustValue(t, r, metrics.BreakerState, map[string]string{"dependency": "payments"}, 2)
	mustValue(t, r, metrics.OutboxPending, nil, 2)
	mustValue(t, r, metrics.SagaDuration, map[string]string{"saga_type": "order", "outcome": "completed"}, 2)
	mustValue(t, r, metrics.RecoveryResent, nil, 1)
	mustValue(t, r, metrics.Reconciled, nil, 0) // label-less metrics exist from the start
	mustValue(t, r, metrics.MetricsUnknown, nil, 0)
}

func TestInvalidCallsAreCountedNotPanicking(t *testing.T) {
	tests := []struct {
		name   string
		call   func(r *Recorder)
		reason string // "" = counted as unknown
	}{
		{"unknown name", func(r *Recorder) { r.Add("no_such_total", 1) }, ""},
		{"unknown name on Observe", func(r *Recorder) { r.Observe("nope", 1, "a") }, ""},
		{"odd labels", func(r *Recorder) { r.Add(metrics.Retries, 1, "operation") }, metrics.DropOddLabels},
		{"undeclared label", func(r *Recorder) { r.Add(metrics.Retries, 1, "colour", "red") }, metrics.DropUnknownLabel},
		{"negative counter", func(r *Recorder) { r.Add(metrics.Reconciled, -1) }, metrics.DropInvalidValue},
		{"NaN", func(r *Recorder) { r.Set(metrics.OutboxLag, nan()) }, metrics.DropInvalidValue},
		{"Set on counter", func(r *Recorder) { r.Set(metrics.Reconciled, 1) }, metrics.DropKind},
		{"Observe on gauge", func(r *Recorder) { r.Observe(metrics.OutboxLag, 1) }, metrics.DropKind},
		{"Add on histogram", func(r *Recorder) { r.Add(metrics.SagaDuration, 1) }, metrics.DropKind},
		{"invalid UTF-8 value", func(r *Recorder) { r.Add(metrics.QueueReceives, 1, "queue", "\xff") }, metrics.DropLabelValue},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := New()
			tt.call(r) // must not panic
			if tt.reason == "" {
				mustValue(t, r, metrics.MetricsUnknown, nil, 1)
				return
			}
			mustValue(t, r, metrics.MetricsDropped, map[string]string{"reason": tt.reason}, 1)
			mustValue(t, r, metrics.MetricsUnknown, nil, 0)
		})
	}
}

func TestDroppedCallsRecordNothing(t *testing.T) {
	r := New()
	r.Add(metrics.Reconciled, -5)
	r.Set(metrics.Reconciled, 7)
	mustValue(t, r, metrics.Reconciled, nil, 0)
	r.Add(metrics.Retries, 1, "operation", "charge", "bogus")
	if _, ok := value(t, r.Registry(), metrics.Retries, map[string]string{"operation": "charge", "result": ""}); ok {
		t.Errorf("an odd-label call created a series")
	}
}

func TestHandlerServesExposition(t *testing.T) {
	r := New()
	for _, d := range metrics.Catalog {
		kv := make([]string, 0, 2*len(d.Labels))
		for _, l := range d.Labels {
			kv = append(kv, l, "x")
		}
		switch d.Kind {
		case metrics.Counter:
			r.Add(d.Name, 1, kv...)
		case metrics.Gauge:
			r.Set(d.Name, 1, kv...)
		case metrics.Histogram:
			r.Observe(d.Name, 1, kv...)
		}
	}
	srv := httptest.NewServer(r.Handler())
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") {
		t.Fatalf("status %d, content type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	text := string(body)
	for _, d := range metrics.Catalog {
		if !strings.Contains(text, "# TYPE "+d.Name+" "+d.Kind.String()) {
			t.Errorf("exposition lacks %s of type %s", d.Name, d.Kind)
		}
	}
	for _, line := range []string{
		`saga_steps_total{direction="x",status="x",step="x"} 1`,
		`saga_duration_seconds_bucket{outcome="x",saga_type="x",le="300"} 1`,
		`reconciled_total 1`,
	} {
		if !strings.Contains(text, line+"\n") {
			t.Errorf("exposition lacks line %q", line)
		}
	}
}

func TestRegistriesAreIndependentAndNotGlobal(t *testing.T) {
	a, b := New(), New() // a second New must not panic on duplicate registration
	a.Add(metrics.Reconciled, 1)
	mustValue(t, a, metrics.Reconciled, nil, 1)
	mustValue(t, b, metrics.Reconciled, nil, 0)
	if _, ok := value(t, prometheus.DefaultGatherer, metrics.Reconciled, nil); ok {
		t.Errorf("metrics leaked into the global registry")
	}
}

func TestConcurrentUse(t *testing.T) {
	r := New()
	const workers, each = 8, 200
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				r.Add(metrics.HTTPRequests, 1, "route", "POST /orders", "status", "201")
				r.Observe(metrics.HTTPRequestDuration, 0.01, "route", "POST /orders")
			}
		}()
	}
	wg.Wait()
	mustValue(t, r, metrics.HTTPRequests, map[string]string{"route": "POST /orders", "status": "201"}, workers*each)
	mustValue(t, r, metrics.HTTPRequestDuration, map[string]string{"route": "POST /orders"}, workers*each)
	if err := r.Flush(context.Background()); err != nil {
		t.Errorf("Flush = %v", err)
	}
}

func nan() float64 {
	zero := 0.0
	return zero / zero
}
