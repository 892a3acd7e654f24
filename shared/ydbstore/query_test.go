package ydbstore

import (
	"regexp"
	"sort"
	"strings"
	"testing"
)

var (
	reDeclare   = regexp.MustCompile(`DECLARE (\$\w+) AS ([^;]+);`)
	reParam     = regexp.MustCompile(`\$\w+`)
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
	for name, yql := range packageQueries(t) {
		body := reComment.ReplaceAllString(reDeclare.ReplaceAllString(yql, ""), "")
		decl := declares(yql)
		used := map[string]bool{}
		for _, p := range reParam.FindAllString(body, -1) {
			used[p] = true
			if _, ok := decl[p]; !ok {
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
	for name, yql := range packageQueries(t) {
		for _, m := range reWriteCols.FindAllStringSubmatch(yql, -1) {
			written := names(m[2])
			sort.Strings(written)
			var all []string
			for c := range tables[m[1]].columns {
				all = append(all, c)
			}
			sort.Strings(all)
			if strings.Join(written, ",") != strings.Join(all, ",") {
				t.Errorf("%s writes %v, table %s has %v", name, written, m[1], all)
			}
		}
	}
}

func TestDeclaresParser(t *testing.T) {
	d := declares("DECLARE $a AS Optional<Timestamp>;\nDECLARE $k AS List<Struct<'x': Utf8, 'y': Utf8>>;\nSELECT 1;")
	if d["$a"] != "Optional<Timestamp>" || d["$k"] != "List<Struct<'x':Utf8,'y':Utf8>>" || len(d) != 2 {
		t.Errorf("declares = %v", d)
	}
}
