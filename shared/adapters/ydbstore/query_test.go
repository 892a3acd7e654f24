package ydbstore

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"ordersaga/shared/domain/store/bucket"
)

var (
	reDeclare   = regexp.MustCompile(`DECLARE (\$\w+) AS ([^;]+);`)
	reParam     = regexp.MustCompile(`\$\w+`)
	reNamedExpr = regexp.MustCompile(`(?m)^(\$\w+) = `)
	reTableRef  = regexp.MustCompile(`\b(?:FROM|INTO)\s+(\w+)(\s*\()?`)
	reView      = regexp.MustCompile(`\bFROM (\w+) VIEW (\w+)`)
	reWriteCols = regexp.MustCompile(`\b(?:INSERT|UPSERT) INTO (\w+) \(([^)]*)\)`)
	reSelect    = regexp.MustCompile(`(?s)\bSELECT\s+(.*?)\s+FROM\s+(\w+)`)
	reIdent     = regexp.MustCompile("^`?(\\w+)`?$")
	// A keyword-named column written without backquotes.
	reBareKeyword = regexp.MustCompile("(?:^|[^`'\\w$])(type|data|error|source|queue|action|at|consumer|count)(?:[^`'\\w]|$)")
)

// declares returns a query's DECLAREd parameters and their types (spaces
// removed, as the SDK writes types).
func declares(yql string) map[string]string {
	out := map[string]string{}
	for _, m := range reDeclare.FindAllStringSubmatch(yql, -1) {
		out[m[1]] = strings.ReplaceAll(m[2], " ", "")
	}
	return out
}

// checkDeclares fails unless ps binds exactly the parameters yql DECLAREs,
// each with the declared type.
func checkDeclares(t *testing.T, what, yql string, ps *paramList) {
	t.Helper()
	if ps.err != nil {
		t.Errorf("%s: parameters failed to build: %v", what, ps.err)
		return
	}
	want := declares(yql)
	got := map[string]string{}
	for _, p := range ps.ps {
		if _, dup := got[p.name]; dup {
			t.Errorf("%s: %s bound twice", what, p.name)
		}
		got[p.name] = p.v.Type().Yql()
	}
	for name, typ := range want {
		if got[name] == "" {
			t.Errorf("%s: %s is declared %s but not bound", what, name, typ)
		} else if got[name] != typ {
			t.Errorf("%s: %s is declared %s but bound as %s", what, name, typ, got[name])
		}
	}
	for name, typ := range got {
		if _, ok := want[name]; !ok {
			t.Errorf("%s: %s (%s) is bound but not declared", what, name, typ)
		}
	}
}

// TestQueriesAgainstSchema checks every yql const statically: each table it
// names exists, each VIEW names an index of that table, written and
// selected columns exist, every $parameter is declared and every
// declaration used, and keyword-named columns are always backquoted.
func TestQueriesAgainstSchema(t *testing.T) {
	tables := schemaTables(t)
	for name, yql := range allQueries(t) {
		body := reComment.ReplaceAllString(reDeclare.ReplaceAllString(yql, ""), "")
		decl := declares(yql)
		used := map[string]bool{}
		named := map[string]bool{} // $x = (...) named expressions defined in the query
		for _, m := range reNamedExpr.FindAllStringSubmatch(body, -1) {
			named[m[1]] = true
		}
		for _, p := range reParam.FindAllString(body, -1) {
			used[p] = true
			if _, ok := decl[p]; !ok && !named[p] {
				t.Errorf("%s: %s is used but not declared", name, p)
			}
		}
		for p := range decl {
			if !used[p] {
				t.Errorf("%s: %s is declared but not used", name, p)
			}
		}
		if m := reBareKeyword.FindStringSubmatch(body); m != nil {
			t.Errorf("%s: column %q must be written `%s`", name, m[1], m[1])
		}
		for _, m := range reTableRef.FindAllStringSubmatch(body, -1) {
			if m[1] == "AS_TABLE" && m[2] != "" {
				continue
			}
			if _, ok := tables[m[1]]; !ok {
				t.Errorf("%s: unknown table %s", name, m[1])
			}
		}
		for _, m := range reView.FindAllStringSubmatch(body, -1) {
			if _, ok := tables[m[1]].indexes[m[2]]; !ok {
				t.Errorf("%s: table %s has no index %s", name, m[1], m[2])
			}
		}
		for _, m := range reWriteCols.FindAllStringSubmatch(body, -1) {
			for _, c := range names(m[2]) {
				if _, ok := tables[m[1]].columns[c]; !ok {
					t.Errorf("%s: %s has no column %s", name, m[1], c)
				}
			}
		}
		for _, m := range reSelect.FindAllStringSubmatch(body, -1) {
			tb, ok := tables[m[2]]
			if !ok {
				continue // AS_TABLE
			}
			for _, item := range splitTop(m[1]) {
				if im := reIdent.FindStringSubmatch(item); im != nil {
					if _, ok := tb.columns[im[1]]; !ok {
						t.Errorf("%s: %s has no column %s", name, m[2], im[1])
					}
				}
			}
		}
	}
}

// TestEveryWriteNamesAllColumns: INSERT and UPSERT statements write whole
// rows (UPSERT leaves unlisted columns unchanged, so a missing column would
// keep a stale value after an update).
func TestEveryWriteNamesAllColumns(t *testing.T) {
	tables := schemaTables(t)
	for name, yql := range allQueries(t) {
		for _, m := range reWriteCols.FindAllStringSubmatch(yql, -1) {
			written := names(m[2])
			sort.Strings(written)
			var all []string
			for c := range tables[m[1]].columns {
				if writtenOnce[m[1]+"."+c] && !strings.Contains(yql, "INSERT INTO") {
					continue // an update keeps it
				}
				all = append(all, c)
			}
			sort.Strings(all)
			if strings.Join(written, ",") != strings.Join(all, ",") {
				t.Errorf("%s writes %v, table %s has %v", name, written, m[1], all)
			}
		}
	}
}

// writtenOnce are columns set by the INSERT and never by an UPSERT
// (outbox bucket and head change only through yqlSetOutboxHeads).
var writtenOnce = map[string]bool{"outbox.aggregate_seq": true, "outbox.bucket": true, "outbox.head": true}

func TestDeclaresParser(t *testing.T) {
	d := declares("DECLARE $a AS Optional<Timestamp>;\nDECLARE $k AS List<Struct<'x': Utf8, 'y': Utf8>>;\nSELECT 1;")
	if d["$a"] != "Optional<Timestamp>" || d["$k"] != "List<Struct<'x':Utf8,'y':Utf8>>" || len(d) != 2 {
		t.Errorf("declares = %v", d)
	}
}

// packageQueries returns every package-level const whose name starts with
// "yql", evaluated from the package's (non-test) source: the queries a
// reviewer reads are exactly the ones checked here.
func packageQueries(t *testing.T) map[string]string {
	t.Helper()
	fset := token.NewFileSet()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	exprs := map[string]ast.Expr{}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range af.Decls {
			if gd, ok := d.(*ast.GenDecl); ok && gd.Tok == token.CONST {
				for _, sp := range gd.Specs {
					vs := sp.(*ast.ValueSpec)
					for i, n := range vs.Names {
						if i < len(vs.Values) {
							exprs[n.Name] = vs.Values[i]
						}
					}
				}
			}
		}
	}
	var eval func(ast.Expr) (string, bool)
	eval = func(e ast.Expr) (string, bool) {
		switch e := e.(type) {
		case *ast.BasicLit:
			if e.Kind != token.STRING {
				return "", false
			}
			s, err := strconv.Unquote(e.Value)
			return s, err == nil
		case *ast.Ident:
			if x, ok := exprs[e.Name]; ok {
				return eval(x)
			}
		case *ast.ParenExpr:
			return eval(e.X)
		case *ast.BinaryExpr:
			if e.Op == token.ADD {
				a, ok1 := eval(e.X)
				b, ok2 := eval(e.Y)
				return a + b, ok1 && ok2
			}
		}
		return "", false
	}
	out := map[string]string{}
	for name, e := range exprs {
		if strings.HasPrefix(name, "yql") {
			s, ok := eval(e)
			if !ok {
				t.Fatalf("const %s is not a plain string concatenation", name)
			}
			out[name] = s
		}
	}
	if len(out) < 40 {
		t.Fatalf("found only %d yql consts", len(out))
	}
	return out
}

// allQueries is every statement the package can send: its yql consts, the
// queries built once from fragments (builtQueries), and the dead-letter
// list of every filter shape (deadLetterListYQL's whole domain), so the
// schema, DECLARE and bind-and-scan checks cover each generated text.
func allQueries(t *testing.T) map[string]string {
	t.Helper()
	out := packageQueries(t)
	for name, yql := range builtQueries() {
		out[name] = yql
	}
	texts := map[string]string{}
	for _, s := range allDeadLetterShapes() {
		yql := deadLetterListYQL(s)
		if yql == "" {
			continue
		}
		if _, dup := texts[yql]; dup {
			continue // a filter the shape ignores (To after an undated cursor)
		}
		name := deadLetterShapeName(s)
		texts[yql] = name
		out[name] = yql
	}
	return out
}

// allDeadLetterShapes enumerates deadLetterShape: 2^8 filter sets x 3 cursor kinds.
func allDeadLetterShapes() []deadLetterShape {
	var out []deadLetterShape
	for bits := range 1 << 8 {
		on := func(i int) bool { return bits&(1<<i) != 0 }
		for _, c := range []cursorKind{noCursor, afterDated, afterUndated} {
			out = append(out, deadLetterShape{status: on(0), source: on(1), errorType: on(2), orderID: on(3),
				sagaID: on(4), from: on(5), to: on(6), flagged: on(7), cursor: c})
		}
	}
	return out
}

func deadLetterShapeName(s deadLetterShape) string {
	return fmt.Sprintf("deadLetterListYQL%+v", s)
}

var (
	reBranch  = regexp.MustCompile(`(?s)FROM (\w+) VIEW (\w+)\s+WHERE (.*?)\s+ORDER BY (.*?)\s+LIMIT \$limit`)
	reEqPart  = regexp.MustCompile("^`?(\\w+)`? (?:= \\S+|IS NULL|IN \\$\\w+)$")
	reOptOr   = regexp.MustCompile(`\$\w+ IS NULL OR`)
	reAnd     = regexp.MustCompile(`\s+AND\s+`)
	reOrderBy = regexp.MustCompile(`ORDER BY \(`)
)

// TestListsReadKeyRanges: every LIMITed read of an index
// sorts by index columns only (the index's own, then the primary key it
// carries), and fixes every index column before the first sorted one by an
// equality or IS NULL (or IN a list: point prefixes), so the branch is a key range read in index order
// that stops after LIMIT rows. No query has an optional "$x IS NULL OR"
// filter or an ORDER BY expression.
func TestListsReadKeyRanges(t *testing.T) {
	tables := schemaTables(t)
	branches := 0
	for name, yql := range allQueries(t) {
		branches += checkBranches(yql, tables, func(format string, a ...any) {
			t.Errorf("%s: %s", name, fmt.Sprintf(format, a...))
		})
	}
	if branches < 100 {
		t.Errorf("found only %d LIMITed index branches", branches)
	}
}

func slicesIndex(s []string, v string) int {
	for i, x := range s {
		if x == v {
			return i
		}
	}
	return -1
}

// TestBucketedListsReadEveryBucket: each built list repeats its branches for
// bucket 0..N-1 and the NULL bucket (rows written before migration 0013),
// each reading an index that starts with bucket.
func TestBucketedListsReadEveryBucket(t *testing.T) {
	tables := schemaTables(t)
	for name, yql := range builtQueries() {
		for _, cond := range bucketConds() {
			if !strings.Contains(yql, "WHERE "+cond+" AND ") {
				t.Errorf("%s: no branch for %s", name, cond)
			}
		}
		ms := reBranch.FindAllStringSubmatch(yql, -1)
		if len(ms) == 0 || len(ms)%(bucket.N+1) != 0 {
			t.Errorf("%s: %d branches, want a multiple of %d", name, len(ms), bucket.N+1)
		}
		for _, m := range ms {
			if idx := tables[m[1]].indexes[m[2]]; len(idx) == 0 || idx[0] != "bucket" {
				t.Errorf("%s: reads %s %v, which does not start with bucket", name, m[2], idx)
			}
		}
	}
	if n := len(bucketConds()); n != bucket.N+1 {
		t.Errorf("%d bucket conditions, want %d", n, bucket.N+1)
	}
}

// TestReadBoundsNameRealQueries: every ReadBounds row names a statement the
// package sends, and every list (a statement with LIMIT $limit) has a row.
func TestReadBoundsNameRealQueries(t *testing.T) {
	qs := allQueries(t)
	listed := map[string]bool{}
	for _, b := range ReadBounds() {
		listed[b.Query] = true
		if _, ok := qs[b.Query]; !ok && !strings.HasPrefix(b.Query, "deadLetterListYQL ") {
			t.Errorf("ReadBounds names %s, which is no query of the package", b.Query)
		}
	}
	for name, yql := range qs {
		if strings.Contains(yql, "LIMIT $limit") && !listed[name] && !strings.HasPrefix(name, "deadLetterListYQL") {
			t.Errorf("%s is a list without a ReadBounds row", name)
		}
	}
}
