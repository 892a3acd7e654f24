package deploycheck

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"

	"ordersaga/shared/domain/metrics"
)

// Rules the yandex provider (v0.222.0) and the platform impose that
// `terraform validate` cannot see. Each returns one line per problem.

// ydbGrantProblems: the provider has no yandex_ydb_database_iam_member, and
// yandex_ydb_database_iam_binding is authoritative for one role on one
// database, so a binding inside a module that is called several times would
// overwrite the other calls' members: bindings only in the root module, one
// per (database, role).
func ydbGrantProblems(root tfModule, mods map[string]tfModule) []string {
	var problems []string
	for _, m := range append([]tfModule{root}, sortedModules(mods)...) {
		for _, b := range m.blocks("resource", "yandex_ydb_database_iam_member") {
			problems = append(problems, fmt.Sprintf("%s: yandex_ydb_database_iam_member.%s: the provider has no such resource; use one yandex_ydb_database_iam_binding per role with every member, in the root module", m.Dir, b.Labels[1]))
		}
	}
	for call, m := range mods {
		for _, b := range m.blocks("resource", "yandex_ydb_database_iam_binding") {
			problems = append(problems, fmt.Sprintf("module %s: yandex_ydb_database_iam_binding.%s is authoritative per role: inside a module called once per function the calls overwrite each other; bind at the root with every member", call, b.Labels[1]))
		}
	}
	seen := map[string]string{}
	for _, b := range root.blocks("resource", "yandex_ydb_database_iam_binding") {
		key := sourceOf(root, b.Body.Attributes["database_id"].Expr.Range()) + " " + sourceOf(root, b.Body.Attributes["role"].Expr.Range())
		if other, ok := seen[key]; ok {
			problems = append(problems, fmt.Sprintf("yandex_ydb_database_iam_binding.%s and .%s bind the same role on the same database: the second removes the first's members", other, b.Labels[1]))
		}
		seen[key] = b.Labels[1]
	}
	return problems
}

// grantWaitProblems: every IAM grant (…_iam_member, …_iam_binding) sets
// sleep_after to something other than a literal 0, because what uses it is
// created right after it and IAM takes seconds to propagate.
func grantWaitProblems(m tfModule) []string {
	var problems []string
	for _, f := range m.Files {
		for _, b := range f.Body.Blocks {
			if b.Type != "resource" || len(b.Labels) < 2 || !(strings.HasSuffix(b.Labels[0], "_iam_member") || strings.HasSuffix(b.Labels[0], "_iam_binding")) {
				continue
			}
			a, ok := b.Body.Attributes["sleep_after"]
			if !ok {
				problems = append(problems, fmt.Sprintf("%s: %s.%s has no sleep_after: what uses the grant is created before IAM has propagated it", f.Path, b.Labels[0], b.Labels[1]))
				continue
			}
			if v, diags := a.Expr.Value(nil); !diags.HasErrors() && v.Type() == cty.Number && v.AsBigFloat().Sign() == 0 {
				problems = append(problems, fmt.Sprintf("%s: %s.%s: sleep_after = 0 does not wait", f.Path, b.Labels[0], b.Labels[1]))
			}
		}
	}
	return problems
}

// functionVersionProblems: the provider reports a failed version build as a
// warning only and never reads user_hash back, so every yandex_function
// tags its version with its code and has a postcondition that reads the
// version and the tags back.
func functionVersionProblems(m tfModule) []string {
	var problems []string
	for _, b := range m.blocks("resource", "yandex_function") {
		where := fmt.Sprintf("%s: yandex_function.%s", m.Dir, b.Labels[1])
		if _, ok := b.Body.Attributes["tags"]; !ok {
			problems = append(problems, where+": no tags naming the code (the postcondition has nothing to compare)")
		}
		var conds []string
		for _, lc := range b.Body.Blocks {
			if lc.Type != "lifecycle" {
				continue
			}
			for _, pc := range lc.Body.Blocks {
				if pc.Type == "postcondition" {
					if a, ok := pc.Body.Attributes["condition"]; ok {
						conds = append(conds, sourceOf(m, a.Expr.Range()))
					}
				}
			}
		}
		if len(conds) == 0 {
			problems = append(problems, where+": no lifecycle postcondition that its version exists (a failed build is only a warning)")
			continue
		}
		all := strings.Join(conds, " ")
		for _, want := range []string{"self.version", "self.tags"} {
			if !strings.Contains(all, want) {
				problems = append(problems, fmt.Sprintf("%s: postcondition does not check %s", where, want))
			}
		}
	}
	return problems
}

// staticKeyProblems: a static key whose replacement would otherwise delete
// the key in use first must be create_before_destroy.
func staticKeyProblems(m tfModule) []string {
	var problems []string
	for _, b := range m.blocks("resource", "yandex_iam_service_account_static_access_key") {
		ok := false
		for _, lc := range b.Body.Blocks {
			if a, has := lc.Body.Attributes["create_before_destroy"]; lc.Type == "lifecycle" && has {
				v, diags := a.Expr.Value(nil)
				ok = !diags.HasErrors() && v.Type() == cty.Bool && v.True()
			}
		}
		if !ok {
			problems = append(problems, fmt.Sprintf("%s: yandex_iam_service_account_static_access_key.%s: no create_before_destroy = true (rotation would delete the key in use first)", m.Dir, b.Labels[1]))
		}
	}
	return problems
}

// fileFunctions read files; their path must not depend on the working directory.
var fileFunctions = map[string]bool{"file": true, "filesha256": true, "filebase64sha256": true, "filebase64": true,
	"filemd5": true, "fileexists": true, "templatefile": true, "filesha1": true, "filesha512": true}

// pathProblems: every file path (the argument of a file function, and
// content.zip_filename) is built from path.module or path.root — directly,
// through locals, or through a module input that its caller built that way
// (callerRooted; nil for the root module).
func pathProblems(m tfModule, callerRooted func(variable string) bool) []string {
	var problems []string
	locals := m.locals()
	check := func(where string, e hclsyntax.Expression) {
		if !isRooted(e, locals, callerRooted, 0) {
			problems = append(problems, fmt.Sprintf("%s: path %s is not built from path.module or path.root (it would depend on the working directory)", where, sourceOf(m, e.Range())))
		}
	}
	for _, f := range m.Files {
		hclsyntax.VisitAll(f.Body, func(n hclsyntax.Node) hcl.Diagnostics {
			switch n := n.(type) {
			case *hclsyntax.FunctionCallExpr:
				if fileFunctions[n.Name] && len(n.Args) > 0 {
					check(fmt.Sprintf("%s: %s()", n.Range(), n.Name), n.Args[0])
				}
			case *hclsyntax.Block:
				if a, ok := n.Body.Attributes["zip_filename"]; ok && n.Type == "content" {
					check(fmt.Sprintf("%s: zip_filename", a.Range()), a.Expr)
				}
			}
			return nil
		})
	}
	return problems
}

// isRooted tells whether e references path.module or path.root, directly or
// through locals or (callerRooted) module inputs.
func isRooted(e hclsyntax.Expression, locals map[string]hclsyntax.Expression, callerRooted func(string) bool, depth int) bool {
	if depth > 8 {
		return false
	}
	for _, tr := range traversals(e) {
		s := steps(tr)
		switch {
		case len(s) >= 2 && s[0] == "path" && (s[1] == "module" || s[1] == "root"):
			return true
		case len(s) >= 2 && s[0] == "local":
			if le, ok := locals[s[1]]; ok && isRooted(le, locals, callerRooted, depth+1) {
				return true
			}
		case len(s) >= 2 && s[0] == "var" && callerRooted != nil && callerRooted(s[1]):
			return true
		}
	}
	return false
}

// rootedCallArgs tells, for a module call in root, whether the expression
// passed for an input variable is built from path.module or path.root.
func rootedCallArgs(root tfModule, call *hclsyntax.Block) func(string) bool {
	locals := root.locals()
	return func(variable string) bool {
		a, ok := call.Body.Attributes[variable]
		return ok && isRooted(a.Expr, locals, nil, 0)
	}
}

func sortedModules(mods map[string]tfModule) []tfModule {
	var out []tfModule
	for _, k := range sortedKeys(mods) {
		out = append(out, mods[k])
	}
	return out
}

// panel is one chart of the operations dashboard (dashboard.tf).
type panel struct {
	ID, Section string
	Queries     []string
}

// dashboardPanels evaluates local.dashboard_sections of m, with local.m (the
// stand's selector) set to a placeholder.
func dashboardPanels(m tfModule) ([]panel, error) {
	e, ok := m.locals()["dashboard_sections"]
	if !ok {
		return nil, fmt.Errorf("%s: no local dashboard_sections (dashboard.tf)", m.Dir)
	}
	ctx := &hcl.EvalContext{Variables: map[string]cty.Value{
		"local": cty.ObjectVal(map[string]cty.Value{"m": cty.StringVal(`folderId="f", service="custom"`)}),
	}}
	v, diags := e.Value(ctx)
	if diags.HasErrors() {
		return nil, fmt.Errorf("local.dashboard_sections: %s", diags.Error())
	}
	var out []panel
	for it := v.ElementIterator(); it.Next(); {
		_, s := it.Element()
		section := s.GetAttr("title").AsString()
		for pit := s.GetAttr("panels").ElementIterator(); pit.Next(); {
			_, p := pit.Element()
			pn := panel{ID: p.GetAttr("id").AsString(), Section: section}
			for qit := p.GetAttr("queries").ElementIterator(); qit.Next(); {
				_, q := qit.Element()
				pn.Queries = append(pn.Queries, q.AsString())
			}
			out = append(out, pn)
		}
	}
	return out, nil
}

var (
	// "name"{labels}: a series selector of the Monitoring query language.
	selectorRe = regexp.MustCompile(`"([A-Za-z0-9_]+)"\{([^}]*)\}`)
	// series_sum("label", "name"{...}) / series_max(...): grouping by a label.
	groupRe = regexp.MustCompile(`series_(?:sum|max|min|avg)\("([A-Za-z0-9_]+)",\s*"([A-Za-z0-9_]+)"`)
	labelRe = regexp.MustCompile(`([A-Za-z0-9_]+)\s*=`)
	// Labels every pushed point carries besides the metric's own.
	commonLabels = map[string]bool{"folderId": true, "service": true, "cloudId": true, "function": true}
)

// pushedDef maps a pushed series name to its catalogue entry: histogram H is
// pushed as H_count, H_sum, H_max and H_bucket{bin} (shared/adapters/ycmetrics).
func pushedDef(name string) (*metrics.Def, []string, bool) {
	if d, ok := metrics.Lookup(name); ok && d.Kind != metrics.Histogram {
		return d, d.Labels, true
	}
	for _, suffix := range []string{"_count", "_sum", "_max", "_bucket"} {
		if base, ok := strings.CutSuffix(name, suffix); ok {
			if d, ok := metrics.Lookup(base); ok && d.Kind == metrics.Histogram {
				labels := d.Labels
				if suffix == "_bucket" {
					labels = append(slices.Clone(labels), "bin")
				}
				return d, labels, true
			}
		}
	}
	return nil, nil, false
}

// dashboardProblems: every series a panel queries is one the code pushes,
// with labels it has; panel ids are unique; the five concerns each have a
// panel; every panel the runbook names exists and each concern is named.
func dashboardProblems(panels []panel, runbook string) []string {
	var problems []string
	bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	ids := map[string]bool{}
	covered := map[string]bool{}
	for _, p := range panels {
		if ids[p.ID] {
			bad("dashboard: panel id %q twice", p.ID)
		}
		ids[p.ID] = true
		if len(p.Queries) == 0 {
			bad("dashboard: panel %s has no query", p.ID)
		}
		for _, q := range p.Queries {
			sels := selectorRe.FindAllStringSubmatch(q, -1)
			if len(sels) == 0 {
				bad("dashboard: panel %s: query %q selects no named series", p.ID, q)
			}
			for _, s := range sels {
				def, labels, ok := pushedDef(s[1])
				if !ok {
					bad("dashboard: panel %s: %q is not a metric the code pushes (shared/domain/metrics/catalog.go)", p.ID, s[1])
					continue
				}
				for _, prefix := range []string{"saga_", "outbox_", "dlq_", "breaker_", "http_"} {
					if strings.HasPrefix(def.Name, prefix) {
						covered[prefix] = true
					}
				}
				for _, l := range labelRe.FindAllStringSubmatch(s[2], -1) {
					if !commonLabels[l[1]] && !slices.Contains(labels, l[1]) {
						bad("dashboard: panel %s: %s has no label %q", p.ID, s[1], l[1])
					}
				}
				if !strings.Contains(s[2], `folderId=`) || !strings.Contains(s[2], `service="custom"`) {
					bad("dashboard: panel %s: selector of %s lacks folderId and service=\"custom\"", p.ID, s[1])
				}
			}
			for _, g := range groupRe.FindAllStringSubmatch(q, -1) {
				if _, labels, ok := pushedDef(g[2]); ok && !commonLabels[g[1]] && !slices.Contains(labels, g[1]) {
					bad("dashboard: panel %s: groups %s by %q, which it does not have", p.ID, g[2], g[1])
				}
			}
		}
	}
	for _, prefix := range []string{"saga_", "outbox_", "dlq_", "breaker_", "http_"} {
		if !covered[prefix] {
			bad("dashboard: no panel shows a %s* metric", prefix)
		}
	}
	named := map[string]bool{}
	for _, m := range runbookPanelRe.FindAllStringSubmatch(runbook, -1) {
		named[m[1]] = true
		if !ids[m[1]] {
			bad("runbook: panel `%s` is not on the dashboard", m[1])
		}
	}
	for _, prefix := range []string{"saga-", "outbox-", "dlq-", "breaker-", "http-"} {
		found := false
		for id := range named {
			found = found || strings.HasPrefix(id, prefix)
		}
		if !found {
			bad("runbook: no entry points to a %s* panel", prefix)
		}
	}
	return problems
}

// runbookPanelRe finds the runbook's references to dashboard panels.
var runbookPanelRe = regexp.MustCompile("panel `([a-z0-9-]+)`")
