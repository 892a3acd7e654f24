package prommetrics

import (
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"ordersaga/shared/domain/metrics"
)

const alertsFile = "../../../ops/prometheus/alerts.yml"

type ruleFile struct {
	Groups []struct {
		Name  string `yaml:"name"`
		Rules []rule `yaml:"rules"`
	} `yaml:"groups"`
}

type rule struct {
	Alert       string            `yaml:"alert"`
	Expr        string            `yaml:"expr"`
	For         string            `yaml:"for"`
	Labels      map[string]string `yaml:"labels"`
	Annotations map[string]string `yaml:"annotations"`
}

var (
	reString   = regexp.MustCompile(`"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'`)
	reRange    = regexp.MustCompile(`\[[^\]]*\]`)
	reGrouping = regexp.MustCompile(`\b(by|without|on|ignoring|group_left|group_right)\s*\(([^)]*)\)`)
	reSelector = regexp.MustCompile(`([a-zA-Z_:][a-zA-Z0-9_:]*)\s*\{([^}]*)\}`)
	reMatcher  = regexp.MustCompile(`([a-zA-Z_][a-zA-Z0-9_]*)\s*(?:=~|!~|!=|=)`)
	reIdent    = regexp.MustCompile(`[a-zA-Z_:][a-zA-Z0-9_:]*`)
	keywords   = []string{"and", "or", "unless", "bool", "offset", "by", "without", "on", "ignoring", "group_left", "group_right", "inf", "nan"}
)

// exprRefs is what one PromQL expression references.
type exprRefs struct {
	metrics  []string            // metric names, as written (may carry _bucket/_sum/_count)
	matchers map[string][]string // metric -> label keys in its selector
	grouping []string            // label keys in by/without/on/ignoring clauses
}

// parseExpr extracts metric names and label keys from a PromQL expression.
// It is a small lexer-level approximation, enough for the rules we write:
// identifiers followed by '(' are functions, keywords are skipped, and
// strings, range selectors and label sets are removed first.
func parseExpr(expr string) exprRefs {
	refs := exprRefs{matchers: map[string][]string{}}
	for _, m := range reSelector.FindAllStringSubmatch(expr, -1) {
		for _, k := range reMatcher.FindAllStringSubmatch(reString.ReplaceAllString(m[2], `""`), -1) {
			refs.matchers[m[1]] = append(refs.matchers[m[1]], k[1])
		}
	}
	s := reString.ReplaceAllString(expr, " ")
	s = regexp.MustCompile(`\{[^}]*\}`).ReplaceAllString(s, " ")
	s = reRange.ReplaceAllString(s, " ")
	for _, m := range reGrouping.FindAllStringSubmatch(s, -1) {
		for _, l := range strings.Split(m[2], ",") {
			if l = strings.TrimSpace(l); l != "" {
				refs.grouping = append(refs.grouping, l)
			}
		}
	}
	s = reGrouping.ReplaceAllString(s, " ")
	for _, loc := range reIdent.FindAllStringIndex(s, -1) {
		id := s[loc[0]:loc[1]]
		if slices.Contains(keywords, strings.ToLower(id)) {
			continue
		}
		if rest := strings.TrimLeft(s[loc[1]:], " \t\n"); strings.HasPrefix(rest, "(") {
			continue // a function call
		}
		if loc[0] > 0 && (s[loc[0]-1] >= '0' && s[loc[0]-1] <= '9' || s[loc[0]-1] == '.') {
			continue // the exponent or suffix of a number such as 1e3
		}
		refs.metrics = append(refs.metrics, id)
	}
	return refs
}

// catalogued resolves a referenced series name to its Def, accepting the
// _bucket/_sum/_count series of histograms; extra holds labels the series adds.
func catalogued(name string) (d *metrics.Def, extra []string, ok bool) {
	if d, ok := metrics.Lookup(name); ok {
		return d, nil, true
	}
	for suffix, add := range map[string][]string{"_bucket": {"le"}, "_sum": nil, "_count": nil} {
		if base, found := strings.CutSuffix(name, suffix); found {
			if d, ok := metrics.Lookup(base); ok && d.Kind == metrics.Histogram {
				return d, add, true
			}
		}
	}
	return nil, nil, false
}

func loadRules(t *testing.T) []rule {
	t.Helper()
	data, err := os.ReadFile(alertsFile)
	if err != nil {
		t.Fatalf("read %s: %v", alertsFile, err)
	}
	var f ruleFile
	dec := yaml.NewDecoder(strings.NewReader(string(data)))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil {
		t.Fatalf("parse %s: %v", alertsFile, err)
	}
	var rules []rule
	for _, g := range f.Groups {
		if g.Name == "" {
			t.Errorf("group without a name")
		}
		rules = append(rules, g.Rules...)
	}
	return rules
}

func TestAlertRulesReferenceOnlyCataloguedMetrics(t *testing.T) {
	rules := loadRules(t)
	var names []string
	for _, r := range rules {
		names = append(names, r.Alert)
		t.Run(r.Alert, func(t *testing.T) {
			if r.Alert == "" || strings.TrimSpace(r.Expr) == "" || r.For == "" {
				t.Fatalf("rule needs alert, expr and for: %+v", r)
			}
			if s := r.Labels["severity"]; s != "warning" && s != "critical" {
				t.Errorf("severity = %q, want warning or critical", s)
			}
			if r.Annotations["summary"] == "" || r.Annotations["runbook"] == "" {
				t.Errorf("annotations need summary and runbook")
			}
			refs := parseExpr(r.Expr)
			if len(refs.metrics) == 0 {
				t.Fatalf("no metric found in expr %q", r.Expr)
			}
			known := map[string]bool{}
			for _, m := range slices.Compact(slices.Sorted(slices.Values(refs.metrics))) {
				d, extra, ok := catalogued(m)
				if !ok {
					t.Errorf("expr references %q, which is not in metrics.Catalog", m)
					continue
				}
				for _, l := range append(slices.Clone(d.Labels), extra...) {
					known[l] = true
				}
				for _, k := range refs.matchers[m] {
					if !slices.Contains(d.Labels, k) && !slices.Contains(extra, k) {
						t.Errorf("selector of %s uses label %q; it has %v", m, k, d.Labels)
					}
				}
			}
			for _, l := range refs.grouping {
				if !known[l] {
					t.Errorf("grouping by %q, which no referenced metric has", l)
				}
			}
		})
	}
	want := []string{"CircuitBreakerOpen", "CompensationFailureRate", "DeadLetterGrowth", "OutboxBacklogOld", "SagaDurationHigh"}
	sort.Strings(names)
	for _, w := range want {
		if !slices.Contains(names, w) {
			t.Errorf("alert %s missing (have %v)", w, names)
		}
	}
}

// The checker itself must catch the mistakes it exists for.
func TestParseExpr(t *testing.T) {
	tests := []struct {
		expr     string
		metrics  []string
		grouping []string
		bad      bool // some reference is not catalogued
	}{
		{`max(outbox_lag_seconds) > 300`, []string{"outbox_lag_seconds"}, nil, false},
		{`histogram_quantile(0.99, sum by (le, saga_type) (rate(saga_duration_seconds_bucket[15m]))) > 3e2`,
			[]string{"saga_duration_seconds_bucket"}, []string{"le", "saga_type"}, false},
		{`sum(rate(compensations_total{status=~"failed|gave_up"}[30m])) / sum(rate(compensations_total[30m]))`,
			[]string{"compensations_total", "compensations_total"}, nil, false},
		{`a_metric_we_never_defined > 1 and on (queue) dlq_size > 0`,
			[]string{"a_metric_we_never_defined", "dlq_size"}, []string{"queue"}, true},
		{`outbox_lag_seconds_bucket > 1`, []string{"outbox_lag_seconds_bucket"}, nil, true}, // not a histogram
	}
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			refs := parseExpr(tt.expr)
			if !slices.Equal(refs.metrics, tt.metrics) {
				t.Errorf("metrics = %v, want %v", refs.metrics, tt.metrics)
			}
			if !slices.Equal(refs.grouping, tt.grouping) {
				t.Errorf("grouping = %v, want %v", refs.grouping, tt.grouping)
			}
			bad := false
			for _, m := range refs.metrics {
				if _, _, ok := catalogued(m); !ok {
					bad = true
				}
			}
			if bad != tt.bad {
				t.Errorf("uncatalogued reference = %v, want %v", bad, tt.bad)
			}
		})
	}
	if got := parseExpr(`compensations_total{status="x", colour!="y"}`).matchers["compensations_total"]; !slices.Equal(got, []string{"status", "colour"}) {
		t.Errorf("matchers = %v", got)
	}
}
