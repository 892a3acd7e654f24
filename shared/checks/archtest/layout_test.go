// Package archtest holds the layout rules of the shared/ packages as a test.
// The layer of a package is the first folder of its path under shared/:
//
//	domain/     types, rules, ports and error kinds; no I/O
//	kit/        small libraries with no domain (resilience, strict JSON, text, config, clock)
//	app/        use cases, one folder each
//	app/jobs/   the work of one trigger or timer function, composed of use cases
//	adapters/   one folder per outside dependency, implementing the ports
//	transport/  platform envelopes and HTTP: decode, call a use case, encode
//	wiring/     the composition root: builds everything from one Config
//	checks/     tests of the whole tree (layout, docs, deployment, wiring, chaos)
//
// The rules (rules below) say which layer may import which; an import that
// breaks one fails the test with the offending file. Only non-test files
// are checked: tests may reach further (fixtures, fakes).
package archtest

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

const module = "ordersaga/shared/"

// layers are the folders directly under shared/; every package lives in one.
var layers = map[string]bool{
	"domain": true, "kit": true, "app": true, "adapters": true,
	"transport": true, "wiring": true, "checks": true,
}

// ioPackages are the standard packages that talk to the outside world. A
// domain package imports none of them, nor any module outside the standard
// library (SDKs, drivers) but the ones in pureModules.
var ioPackages = []string{"net", "os", "database/sql", "syscall", "os/exec", "io/fs", "plugin"}

// pureModules are third-party modules that do no I/O of their own.
var pureModules = map[string]bool{"github.com/google/uuid": true}

// exceptions are deliberate breaks of a rule, each with its reason, keyed
// "from -> to" (paths under shared/, or a standard package for the I/O
// rule). An exception that no longer matches any import fails the test, so
// the list only shrinks.
var exceptions = map[string]string{
	"domain/store/storetest -> app/stock": "the conservation suite drives the stock use case on each store adapter",
	"adapters/paymentsim -> app/payments": "the simulator serves the wire format the payments use case defines",
	"app/orders -> transport/identity":    "the create command carries the caller's identity.Identity",
	"kit/config -> domain/dlq":            "the redrive loop limit defaults to dlq.DefaultLoopLimit",
	"domain/store -> database/sql":        "store.SQLTx lets the embedded queue write in the SQLite store's transaction",
}

// jobsFolder holds the use cases that run one function's work by calling
// other use cases (a trigger's batch, the recovery timer's jobs, the
// operator's dead-letter command). A job may import use cases; no use case
// imports a job, and jobs do not import each other, so the composition has
// one level and no cycles.
const jobsFolder = "app/jobs"

// layerOf returns the layer of a package path under shared/ and, for an
// adapter or a use case, its unit (adapters/ydbstore for
// adapters/ydbstore/sub, app/jobs/sagabatch for a job): sub-packages belong
// to their folder's unit.
func layerOf(rel string) (layer, unit string) {
	parts := strings.Split(rel, "/")
	layer = parts[0]
	unit = rel
	if (layer == "adapters" || layer == "app") && len(parts) > 1 {
		unit = parts[0] + "/" + parts[1]
	}
	if unit == jobsFolder && len(parts) > 2 {
		unit = jobsFolder + "/" + parts[2]
	}
	return layer, unit
}

// isJob reports whether unit is a job (a folder under app/jobs).
func isJob(unit string) bool { return strings.HasPrefix(unit, jobsFolder+"/") }

func isIO(imp string) bool {
	first, _, _ := strings.Cut(imp, "/")
	if strings.Contains(first, ".") {
		return !pureModules[moduleOf(imp)]
	}
	for _, p := range ioPackages {
		if imp == p || strings.HasPrefix(imp, p+"/") {
			return true
		}
	}
	return false
}

// moduleOf returns the first three elements of a host-based import path.
func moduleOf(imp string) string {
	parts := strings.SplitN(imp, "/", 4)
	if len(parts) > 3 {
		parts = parts[:3]
	}
	return strings.Join(parts, "/")
}

// rule checks one import of package from (a path under shared/). to is
// either a path under shared/ (internal true) or any other import path.
// It returns "" when the import is allowed, else the rule it breaks.
func rule(from, to string, internal bool) string {
	fl, fu := layerOf(from)
	if !internal {
		if fl == "domain" && isIO(to) {
			return "a domain package imports no I/O package (net, os, database/sql, SDKs)"
		}
		return ""
	}
	tl, tu := layerOf(to)
	if !layers[tl] {
		return "imports a package outside the layer folders"
	}
	switch fl {
	case "domain":
		if tl != "domain" && tl != "kit" {
			return "a domain package imports only domain and kit packages"
		}
	case "kit":
		if tl != "kit" && to != "domain/apperr" {
			return "kit imports no domain (only the error kinds, domain/apperr) and no other layer"
		}
	case "app":
		if tl == "app" && tu != fu && isJob(tu) {
			return "no use case imports a job (app/jobs), and no job another job"
		}
		if tl == "app" && tu != fu && !isJob(fu) {
			return "a use case imports no other use case (only a job in app/jobs composes use cases)"
		}
		if tl != "domain" && tl != "kit" && tl != "app" {
			return "a use case imports only domain and kit packages (no adapter, transport or wiring)"
		}
	case "adapters":
		if tl == "adapters" && tu != fu {
			return "adapters never import each other"
		}
		if tl != "domain" && tl != "kit" && tl != "adapters" {
			return "an adapter imports only domain and kit packages"
		}
	case "transport":
		if tl == "adapters" || tl == "wiring" || tl == "checks" {
			return "transport imports domain, kit, use cases and transport only: only the composition root imports adapters"
		}
	case "wiring":
		if tl == "checks" {
			return "only checks import checks"
		}
	case "checks":
	}
	return ""
}

func TestLayout(t *testing.T) {
	sharedDir, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	dirs := packageDirs(t, sharedDir)
	if len(dirs) < 10 {
		t.Fatalf("found only %d packages under %s: is the test in shared/checks/archtest?", len(dirs), sharedDir)
	}
	used := map[string]bool{}
	var violations []string
	for _, from := range dirs {
		if l, _ := layerOf(from); !layers[l] {
			violations = append(violations, "shared/"+from+": not in a layer folder (domain, kit, app, adapters, transport, wiring, checks)")
			continue
		}
		for imp, file := range importsOf(t, sharedDir, from) {
			to, internal := strings.CutPrefix(imp, module)
			if internal && to == from {
				continue
			}
			if !internal && strings.HasPrefix(imp, "ordersaga/") {
				continue // schema and other repository packages outside shared/
			}
			why := rule(from, to, internal)
			if why == "" {
				continue
			}
			if _, ok := exceptions[from+" -> "+to]; ok {
				used[from+" -> "+to] = true
				continue
			}
			violations = append(violations, file+": "+from+" imports "+to+": "+why)
		}
	}
	for e := range exceptions {
		if !used[e] {
			violations = append(violations, "exception "+e+" matches no import that breaks a rule: remove it")
		}
	}
	sort.Strings(violations)
	for _, v := range violations {
		t.Error(v)
	}
}

// packageDirs lists every folder under sharedDir that holds Go files, as
// slash paths relative to sharedDir.
func packageDirs(t *testing.T, sharedDir string) []string {
	t.Helper()
	var dirs []string
	err := filepath.WalkDir(sharedDir, func(path string, d os.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		if name := d.Name(); path != sharedDir && (name == "testdata" || strings.HasPrefix(name, ".")) {
			return filepath.SkipDir
		}
		if files, _ := filepath.Glob(filepath.Join(path, "*.go")); len(files) > 0 && path != sharedDir {
			rel, _ := filepath.Rel(sharedDir, path)
			dirs = append(dirs, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return dirs
}

// importsOf returns every import of the non-test Go files of package rel
// (its path under sharedDir), with the first file that makes it.
func importsOf(t *testing.T, sharedDir, rel string) map[string]string {
	t.Helper()
	out := map[string]string{}
	files, err := filepath.Glob(filepath.Join(sharedDir, filepath.FromSlash(rel), "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		parsed, err := parser.ParseFile(fset, f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, s := range parsed.Imports {
			p, _ := strconv.Unquote(s.Path.Value)
			if _, seen := out[p]; !seen {
				out[p] = "shared/" + rel + "/" + filepath.Base(f)
			}
		}
	}
	return out
}
