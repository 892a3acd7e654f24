package metrics

import (
	"context"
	"regexp"
	"slices"
	"strings"
	"testing"
)

var (
	promName  = regexp.MustCompile(`^[a-zA-Z_:][a-zA-Z0-9_:]*$`)
	promLabel = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*$`)
	// Yandex Monitoring: starts with a letter; letters, digits, '.', '_'; at most 32 characters.
	ycLabel = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9_.]{0,31}$`)
)

// Labels the adapters add themselves or the backends reserve.
var reserved = []string{"le", "bin", "function", "name", "service", "folderId", "cloudId", "job", "instance"}

func TestCatalogIsWellFormed(t *testing.T) {
	seen := map[string]bool{}
	for _, d := range Catalog {
		t.Run(d.Name, func(t *testing.T) {
			if seen[d.Name] {
				t.Fatalf("duplicate name")
			}
			seen[d.Name] = true
			if !promName.MatchString(d.Name) {
				t.Errorf("name is not a valid Prometheus name")
			}
			if d.Help == "" {
				t.Errorf("no Help")
			}
			if got := strings.HasSuffix(d.Name, "_total"); got != (d.Kind == Counter) {
				t.Errorf("kind %v but _total suffix = %v", d.Kind, got)
			}
			if d.Kind < Counter || d.Kind > Histogram {
				t.Errorf("bad kind %d", d.Kind)
			}
			if len(d.Labels) > MaxLabels {
				t.Errorf("%d labels > MaxLabels", len(d.Labels))
			}
			for _, l := range d.Labels {
				if !promLabel.MatchString(l) || !ycLabel.MatchString(l) || strings.HasPrefix(l, "__") {
					t.Errorf("label %q invalid for Prometheus or Yandex Monitoring", l)
				}
				if slices.Contains(reserved, l) {
					t.Errorf("label %q is reserved", l)
				}
			}
			if (d.Kind == Histogram) != (len(d.Buckets) > 0) {
				t.Errorf("kind %v with %d buckets", d.Kind, len(d.Buckets))
			}
			if !slices.IsSorted(d.Buckets) || len(slices.Compact(slices.Clone(d.Buckets))) != len(d.Buckets) {
				t.Errorf("buckets not strictly ascending: %v", d.Buckets)
			}
			got, ok := Lookup(d.Name)
			if !ok || got.Name != d.Name {
				t.Errorf("Lookup(%q) = %v, %v", d.Name, got, ok)
			}
		})
	}
}

// The product's metric set (requirements.md item 9) must all be catalogued
// with these label sets.
func TestCatalogHasTheRequiredSet(t *testing.T) {
	want := map[string][]string{
		"saga_steps_total":              {"step", "direction", "status"},
		"saga_duration_seconds":         {"saga_type", "outcome"},
		"compensations_total":           {"step", "status"},
		"outbox_lag_seconds":            nil,
		"outbox_pending":                nil,
		"outbox_published_total":        {"destination"},
		"outbox_failed_total":           {"destination"},
		"dlq_size":                      {"queue"},
		"dlq_additions_total":           {"queue", "error_type"},
		"retries_total":                 {"operation", "result"},
		"idempotency_requests_total":    {"outcome"},
		"http_requests_total":           {"route", "status"},
		"http_request_duration_seconds": {"route"},
		"queue_sends_total":             {"queue", "result"},
		"queue_receives_total":          {"queue"},
		"breaker_state":                 {"dependency"},
		"breaker_transitions_total":     {"dependency", "from", "to"},
		"bulkhead_rejections_total":     {"dependency"},
		"redrive_actions_total":         {"action", "outcome"},
		"saga_messages_total":           {"result"},
		"recovery_resent_total":         nil,
		"reconciled_total":              nil,
	}
	for name, labels := range want {
		d, ok := Lookup(name)
		if !ok {
			t.Errorf("%s missing from Catalog", name)
			continue
		}
		if !slices.Equal(d.Labels, labels) {
			t.Errorf("%s labels = %v, want %v", name, d.Labels, labels)
		}
	}
	if _, ok := Lookup("no_such_metric"); ok {
		t.Errorf("Lookup of an unknown name succeeded")
	}
	if d, _ := Lookup(SagaDuration); !slices.Contains(d.Buckets, 300) {
		t.Errorf("saga buckets lack the 300 s alert boundary: %v", d.Buckets)
	}
}

func TestResolve(t *testing.T) {
	d := &Def{Name: "x_total", Kind: Counter, Labels: []string{"a", "b", "c"}}
	tests := []struct {
		name   string
		kv     []string
		want   Values
		reason string
	}{
		{"none", nil, Values{}, ""},
		{"in order", []string{"a", "1", "b", "2", "c", "3"}, Values{"1", "2", "3"}, ""},
		{"any order", []string{"c", "3", "a", "1"}, Values{"1", "", "3"}, ""},
		{"repeated key keeps last", []string{"b", "x", "b", "y"}, Values{"", "y", ""}, ""},
		{"odd", []string{"a", "1", "b"}, Values{}, DropOddLabels},
		{"single", []string{"a"}, Values{}, DropOddLabels},
		{"unknown key", []string{"a", "1", "zzz", "2"}, Values{}, DropUnknownLabel},
		{"value used as key", []string{"1", "a"}, Values{}, DropUnknownLabel},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, reason := d.Resolve(tt.kv)
			if reason != tt.reason {
				t.Fatalf("reason = %q, want %q", reason, tt.reason)
			}
			if reason == "" && got != tt.want {
				t.Errorf("values = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestResolveNeverIndexesPastMaxLabels(t *testing.T) {
	d := &Def{Name: "wide_total", Labels: []string{"a", "b", "c", "d", "e"}}
	if _, reason := d.Resolve([]string{"e", "1"}); reason != DropUnknownLabel {
		t.Errorf("reason = %q, want %q", reason, DropUnknownLabel)
	}
}

func TestResolveDoesNotAllocate(t *testing.T) {
	d, _ := Lookup(SagaSteps)
	kv := []string{"step", "s", "direction", "forward", "status", "succeeded"}
	if n := testing.AllocsPerRun(100, func() { _, _ = d.Resolve(kv) }); n != 0 {
		t.Errorf("Resolve allocates %v times", n)
	}
}

func TestNop(t *testing.T) {
	var r Recorder = Nop{}
	r.Add(SagaSteps, 1, "odd")
	r.Set("unknown", 1)
	r.Observe(SagaDuration, 1)
	if err := r.Flush(context.Background()); err != nil {
		t.Errorf("Flush = %v", err)
	}
}

func TestKindString(t *testing.T) {
	for k, want := range map[Kind]string{Counter: "counter", Gauge: "gauge", Histogram: "histogram", 0: "unknown"} {
		if got := k.String(); got != want {
			t.Errorf("%d.String() = %q, want %q", k, got, want)
		}
	}
}
