package deploycheck

import (
	"bytes"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"ordersaga/shared/wiring/triggers"
)

// load parses terraform/ and the local modules it calls.
func load(t *testing.T) deployment {
	t.Helper()
	root := loadModule(t, filepath.Join(repoRoot, "terraform"))
	mods, calls := childModules(t, root)
	return deployment{Root: root, Mods: mods, Calls: calls}
}

func report(t *testing.T, problems []string) {
	t.Helper()
	for _, p := range problems {
		t.Error(p)
	}
}

func TestEveryFunctionFolderIsDeployed(t *testing.T) {
	d := load(t)
	refs, problems := d.functionRefs(t)
	report(t, problems)
	folders := functionFolders(t)
	deployed := map[string][]string{}
	for ref, name := range refs {
		deployed[name] = append(deployed[name], ref)
		if !folders[name] {
			t.Errorf("%s deploys %q, which is not a folder under functions/", ref, name)
		}
	}
	for name := range folders {
		switch n := len(deployed[name]); {
		case n == 0:
			t.Errorf("functions/%s has no yandex_function in terraform/ (add a module \"%s\" block to functions.tf)", name, name)
		case n > 1:
			t.Errorf("functions/%s is deployed %d times: %v", name, n, deployed[name])
		}
	}
}

func TestTriggersNameFunctionsAndQueues(t *testing.T) {
	tf, err := triggers.Load(filepath.Join(repoRoot, "triggers", "triggers.yaml"))
	if err != nil {
		t.Fatal(err) // includes: queue triggers and dead-letter queues name defined queues
	}
	folders := functionFolders(t)
	queues := map[string]triggers.Queue{}
	for _, q := range tf.Queues {
		queues[q.Name] = q
	}
	d := load(t)
	timeouts := numberMap(t, d.Root, "function_timeout_seconds")
	for _, tm := range tf.Timers {
		if !folders[tm.Function] {
			t.Errorf("timer %s: function %q is not a folder under functions/", tm.Name, tm.Function)
		}
		if f := strings.Fields(tm.Cron); len(f) != 6 || (f[2] != "?") == (f[4] != "?") {
			t.Errorf("timer %s: cron %q: want 6 fields (Min Hour DoM Mon DoW Year) with exactly one of DoM/DoW \"?\"", tm.Name, tm.Cron)
		}
	}
	for _, qt := range tf.QueueTriggers {
		if !folders[qt.Function] {
			t.Errorf("queue trigger %s: function %q is not a folder under functions/", qt.Name, qt.Function)
		}
		limit, ok := timeouts[qt.Function]
		if !ok {
			t.Errorf("queue trigger %s: function_timeout_seconds has no %q", qt.Name, qt.Function)
		}
		if qt.VisibilityTimeoutSeconds < limit || queues[qt.Queue].VisibilityTimeoutSeconds < limit {
			t.Errorf("queue trigger %s: visibility timeouts (trigger %ds, queue %s %ds) must be ≥ %s's execution timeout %ds",
				qt.Name, qt.VisibilityTimeoutSeconds, qt.Queue, queues[qt.Queue].VisibilityTimeoutSeconds, qt.Function, limit)
		}
	}
	for _, v := range []string{"function_timeout_seconds", "function_memory_mb"} {
		if got, want := sortedKeys(numberMap(t, d.Root, v)), sortedKeys(folders); !equal(got, want) {
			t.Errorf("variable %s has entries for %v, want one per function folder %v", v, got, want)
		}
	}
	// Queues the Terraform code looks up by logical name must be in triggers.yaml.
	for _, f := range d.Root.Files {
		for _, m := range regexp.MustCompile(`local\.queue_(?:urls|arns)\["([^"]+)"\]`).FindAllSubmatch(f.Src, -1) {
			if _, ok := queues[string(m[1])]; !ok {
				t.Errorf("%s: queue %q is not defined in triggers.yaml", f.Path, m[1])
			}
		}
	}
}

func TestAPIOperationsNameFunctions(t *testing.T) {
	d := load(t)
	refs, _ := d.functionRefs(t)
	gws := d.Root.blocks("resource", "yandex_api_gateway")
	if len(gws) != 1 {
		t.Fatalf("want one yandex_api_gateway, found %d", len(gws))
	}
	vars, specPath := templateVars(t, gws[0], refs)
	spec, err := os.ReadFile(filepath.Join(d.Root.Dir, specPath))
	if err != nil {
		t.Fatal(err)
	}
	report(t, checkSpec(spec, vars))
}

func TestNoFunctionIsPublic(t *testing.T) {
	d := load(t)
	report(t, publicGrants(d.Root))
	for _, m := range d.Mods {
		report(t, publicGrants(m))
	}
}

func TestNoSecretInVariablesOrOutputs(t *testing.T) {
	d := load(t)
	report(t, secretVariables(t, d.Root))
	report(t, d.secretOutputs(d.Root, sensitiveVariables(d.Root)))
	for _, m := range d.Mods {
		report(t, secretVariables(t, m))
		report(t, d.secretOutputs(m, sensitiveVariables(m)))
	}
}

// TestTerraformFilesAreFormatted checks the layout rules of `terraform fmt`
// that can be checked without hclwrite (which needs github.com/google/go-cmp,
// not in go.sum): two-space indentation, no tabs, no trailing blanks, one
// final newline. Alignment of "=" is left to `terraform fmt -check`.
func TestTerraformFilesAreFormatted(t *testing.T) {
	d := load(t)
	for _, m := range append([]tfModule{d.Root}, modulesOf(d)...) {
		for _, f := range m.Files {
			report(t, layoutProblems(f.Path, f.Src))
		}
	}
}

// layoutProblems reports the fmt layout rules src breaks.
func layoutProblems(path string, src []byte) []string {
	var problems []string
	if !bytes.HasSuffix(src, []byte("\n")) || bytes.HasSuffix(src, []byte("\n\n")) {
		problems = append(problems, path+": must end with exactly one newline")
	}
	heredoc := ""
	for i, line := range strings.Split(string(src), "\n") {
		if heredoc != "" {
			if strings.TrimSpace(line) == heredoc {
				heredoc = ""
			}
			continue
		}
		if m := regexp.MustCompile(`<<-?([A-Z_]+)$`).FindStringSubmatch(line); m != nil {
			heredoc = m[1]
		}
		indent := len(line) - len(strings.TrimLeft(line, " "))
		if strings.Contains(line, "\t") {
			problems = append(problems, fmt.Sprintf("%s:%d: tab (terraform fmt indents with two spaces)", path, i+1))
		}
		if strings.TrimRight(line, " ") != line {
			problems = append(problems, fmt.Sprintf("%s:%d: trailing blanks", path, i+1))
		}
		if indent%2 != 0 {
			problems = append(problems, fmt.Sprintf("%s:%d: indentation is not a multiple of two spaces", path, i+1))
		}
	}
	return problems
}

func modulesOf(d deployment) []tfModule {
	var out []tfModule
	for _, name := range sortedKeys(d.Mods) {
		out = append(out, d.Mods[name])
	}
	return out
}

// numberMap evaluates the default of variable name (a map of numbers).
func numberMap(t *testing.T, m tfModule, name string) map[string]int {
	t.Helper()
	vs := m.blocks("variable", name)
	if len(vs) != 1 {
		t.Fatalf("variable %s: found %d declarations", name, len(vs))
	}
	a, ok := vs[0].Body.Attributes["default"]
	if !ok {
		t.Fatalf("variable %s has no default", name)
	}
	v, diags := a.Expr.Value(nil)
	if diags.HasErrors() || !v.CanIterateElements() {
		t.Fatalf("variable %s: default must be a literal map", name)
	}
	out := map[string]int{}
	for k, e := range v.AsValueMap() {
		f, _ := e.AsBigFloat().Int64()
		out[k] = int(f)
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

func equal(a, b []string) bool {
	return strings.Join(a, ",") == strings.Join(b, ",")
}
