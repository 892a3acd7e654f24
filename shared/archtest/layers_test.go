// Package archtest holds the layer rules of the shared/ packages as a test:
// a table of package ranks and the ranks each may import. An import that
// points outward (a use case reaching into another use case, a transport
// reaching past the use cases into a port, one adapter importing another)
// fails the test with the offending file.
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

// rank of a package under shared/. The naming rule behind it (docs/architecture.md,
// "Architecture"): a domain package is a singular noun (order, saga,
// outbox); a use case is named for its role (orders, orchestrator, relay,
// redrive, stock, payments); an adapter is named for its dependency
// (sqlitestore, ydbstore, ymq, sqlitequeue, prommetrics, ycmetrics).
type rank string

const (
	domain    rank = "domain"    // types, rules, error kinds, resilience primitives; no I/O
	port      rank = "port"      // interfaces the use cases consume (store, queue)
	usecase   rank = "usecase"   // one application service each; depends on domain and ports
	adapter   rank = "adapter"   // one package per outside dependency; implements ports
	transport rank = "transport" // platform envelopes and HTTP; decodes, calls a use case, encodes
	contract  rank = "contract"  // conformance suites every adapter of a port runs
	root      rank = "root"      // composition: builds everything from a Config
)

// ranks lists every package under shared/, keyed by its path under shared/
// (a sub-package such as ydbstore/ydbtrips has its own entry). A new
// package must be added here: the test fails on an unknown one, so its
// place is decided once.
var ranks = map[string]rank{
	"apperr": domain, "fakeclock": domain, "metrics": domain, "order": domain, "outbox": domain,
	"saga": domain, "payment": domain, "inventory": domain, "idempotency": domain, "dlq": domain,
	"identity": domain, "resilience": domain, "config": domain, "triggers": domain,
	"textrule": domain, "textcut": domain, "jsonstrict": domain,

	"store": port, "queue": port,

	"orders": usecase, "orchestrator": usecase, "relay": usecase, "stock": usecase,
	"payments": usecase, "redrive": usecase,
	// The self-check reads the configuration, the store and the queue
	// ports, and a database probe port of its own.
	"selfcheck": usecase,

	"sqlitestore": adapter, "ydbstore": adapter, "sqlitequeue": adapter, "ymq": adapter,
	"prommetrics": adapter, "ycmetrics": adapter, "paymentsim": adapter,

	"httpapi": transport, "adminapi": transport, "console": transport, "yc": transport,

	"storetest": contract, "queuetest": contract,

	"app": root, "chaos": root, "deploycheck": root, "archtest": root, "doccheck": root,
	"cloudwiring": root, "localwiring": root, "wiringtest": root,
	// The function bodies: each gets the App (and the local target's
	// wiring for the runner's registry), decodes, calls one use case and
	// encodes, so they compose rather than transport.
	"handlers": root,
	// The YDB round-trip recorder builds a whole App over the adapter; only
	// scripts/bench and its own test import it.
	"ydbstore/ydbtrips": root,
	// The local Message Queue trigger: drives the queue port and invokes a
	// function with the platform's envelope (scripts/localcloud, scripts/bench).
	"mqtrigger": root,
	// The index bucket of a row (a pure function of its primary key) that
	// every store adapter writes alike, so it lives beside the port.
	"store/bucket": domain,
	// Test helpers over the local store's database file (row counts for
	// "bad input changes nothing"); imported by tests only.
	"sqlitestore/sqlitetest": contract,
}

// allowed says which ranks a rank may import (besides its own package).
var allowed = map[rank][]rank{
	domain:    {domain},
	port:      {domain, port},
	usecase:   {domain, port},
	adapter:   {domain, port},
	transport: {domain, usecase, transport},
	contract:  {domain, port},
	root:      {domain, port, usecase, adapter, transport, contract, root},
}

// sameRankOK lists the ranks whose packages may import each other. Use cases
// may not (orchestrator → orders was the example: a use case that needs
// another's helper means the helper belongs in the domain), nor adapters.
var sameRankOK = map[rank]bool{domain: true, port: true, transport: true, root: true}

// extraAllowed are deliberate exceptions, each with its reason.
var extraAllowed = map[string]string{
	// The payment simulator is the local stand-in for the provider: it speaks
	// the provider's wire format, which the payments use case defines.
	"paymentsim -> payments": "the simulator serves the wire format payments defines",
	// confirm_order sells the reserved units in the saga's own save
	// transaction: stock.Settle is a function on the caller's transaction,
	// not a call to the stock participant.
	"orchestrator -> stock": "confirm_order runs stock.Settle inside its save transaction",
	// The conservation suite checks, on every store adapter, that the stock
	// use case never creates or loses units under concurrent reservations.
	"storetest -> stock": "the conservation suite drives the stock use case on each adapter",
}

func TestLayers(t *testing.T) {
	sharedDir, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	err = filepath.WalkDir(sharedDir, func(path string, d os.DirEntry, err error) error {
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
	var violations []string
	for _, from := range dirs {
		fromRank, ok := ranks[from]
		if !ok {
			violations = append(violations, "shared/"+from+": not in the rank table (archtest/layers_test.go)")
			continue
		}
		for imp, file := range importsOf(t, sharedDir, from) {
			to, ok := strings.CutPrefix(imp, "ordersaga/shared/")
			if !ok || to == from {
				continue
			}
			toRank, ok := ranks[to]
			if !ok {
				violations = append(violations, file+": imports unranked shared/"+to)
				continue
			}
			if ok, why := permitted(from, fromRank, to, toRank); !ok {
				violations = append(violations, file+": "+from+" ("+string(fromRank)+") imports "+to+" ("+string(toRank)+"): "+why)
			}
		}
	}
	sort.Strings(violations)
	for _, v := range violations {
		t.Error(v)
	}
}

func permitted(from string, fromRank rank, to string, toRank rank) (bool, string) {
	if _, ok := extraAllowed[from+" -> "+to]; ok {
		return true, ""
	}
	if fromRank == toRank {
		if sameRankOK[fromRank] {
			return true, ""
		}
		return false, "two " + string(fromRank) + " packages may not import each other"
	}
	for _, r := range allowed[fromRank] {
		if r == toRank {
			return true, ""
		}
	}
	return false, "points outward"
}

// importsOf returns every import of the non-test Go files of package rel
// (its path under sharedDir), with the first file that makes it. Test files
// may reach further (fixtures, fakes).
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
