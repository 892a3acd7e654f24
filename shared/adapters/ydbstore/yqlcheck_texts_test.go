package ydbstore

import (
	"sort"
	"strings"
	"testing"
)

// writeTexts are the statement groups a deferred flush can join: every
// yql const that writes, and every guarded(version, upsert) pair.
func writeTexts(t *testing.T) map[string]string {
	t.Helper()
	qs := packageQueries(t)
	out := map[string]string{}
	for name, yql := range qs {
		for _, st := range splitYQL(yql) {
			if st.kind == "INSERT" || st.kind == "UPSERT" || st.kind == "UPDATE" || st.kind == "DELETE" {
				out[name] = yql
				break
			}
		}
	}
	guards := map[string]string{}
	withGuards(qs, guards)
	for yql, name := range guards {
		// guarded pairs a table's version read with the same table's upsert
		vn, un, _ := strings.Cut(name, "|")
		if tablesOf(qs[vn])[0] == tablesOf(qs[un])[0] {
			out["guarded("+name+")"] = yql
		}
	}
	return out
}

// TestEveryTextPassesTheServerCheck runs checkYQL over every text the
// adapter can send: the consts, the texts built at run time (bucketed
// lists, every dead-letter filter shape), every version guard, and every
// deferred flush of two groups (each ordered pair of write texts, so each
// group is seen first and later) and of all of them at once.
func TestEveryTextPassesTheServerCheck(t *testing.T) {
	tables := schemaTables(t)
	texts := allQueries(t)
	writes := writeTexts(t)
	var wnames []string
	for name, yql := range writes {
		texts[name] = yql
		wnames = append(wnames, name)
	}
	sort.Strings(wnames)
	join := func(names ...string) string {
		ws := make([]write, len(names))
		for i, n := range names {
			ws[i] = write{what: n, yql: writes[n], ps: newParams()}
		}
		yql, _, _, err := joinWrites(ws)
		if err != nil {
			t.Fatalf("join %v: %v", names, err)
		}
		return yql
	}
	for _, a := range wnames {
		for _, b := range wnames {
			texts["flush("+a+", "+b+")"] = join(a, b)
		}
	}
	texts["flush(all writes)"] = join(wnames...)
	if len(writes) < 20 {
		t.Fatalf("found only %d write texts", len(writes))
	}
	names := make([]string, 0, len(texts))
	for name := range texts {
		names = append(names, name)
	}
	sort.Strings(names)
	failed, flushes := 0, 0
	for _, name := range names {
		issues := checkYQL(texts[name], nil, tables)
		if len(issues) == 0 {
			continue
		}
		failed++
		if strings.HasPrefix(name, "flush(") {
			if flushes++; flushes > 3 {
				continue
			}
		}
		t.Errorf("%s:\n  %s", name, strings.Join(issues, "\n  "))
	}
	if failed > 0 {
		t.Errorf("%d of %d texts fail the check", failed, len(texts))
	}
	t.Logf("%d texts checked (%d write groups)", len(texts), len(writes))
}

// TestServerCheckRefuses: each rule of checkYQL fails on a text that
// breaks it and passes the text that keeps it.
func TestServerCheckRefuses(t *testing.T) {
	tables := schemaTables(t)
	good := "DECLARE $id AS Utf8;\nSELECT id, version FROM orders WHERE id = $id;"
	if issues := checkYQL(good, map[string]string{"$id": "Utf8"}, tables); len(issues) != 0 {
		t.Fatalf("a good text fails: %v", issues)
	}
	cases := []struct {
		name, yql string
		bound     map[string]string
		want      string
	}{
		{"DECLARE after a named expression", "DECLARE $id AS Utf8;\n$v = (SELECT version FROM orders WHERE id = $id);\nDECLARE $x AS Int64;\nSELECT $v = $x AS ok;",
			nil, "DECLARE $x after the body"},
		{"DECLARE after a write", "DECLARE $id AS Utf8;\nDELETE FROM orders WHERE id = $id;\nDECLARE $id2 AS Utf8;\nDELETE FROM orders WHERE id = $id2;",
			nil, "DECLARE $id2 after the body"},
		{"PRAGMA before DECLARE is fine, DECLARE twice is not", "PRAGMA TablePathPrefix(\"/x\");\nDECLARE $id AS Utf8;\nDECLARE $id AS Utf8;\nSELECT id FROM orders WHERE id = $id;",
			nil, "$id declared twice"},
		{"one name two types", "DECLARE $id AS Utf8;\nDECLARE $id AS Int64;\nSELECT id FROM orders WHERE id = $id;", nil, "$id declared twice, as Utf8 and Int64"},
		{"undeclared", "SELECT id FROM orders WHERE id = $id;", nil, "$id is used but neither declared"},
		{"unused", "DECLARE $id AS Utf8;\nDECLARE $x AS Utf8;\nSELECT id FROM orders WHERE id = $id;", nil, "$x is declared but not used"},
		{"not bound", good, map[string]string{}, "$id is declared Utf8 but not bound"},
		{"bound as another type", good, map[string]string{"$id": "Optional<Utf8>"}, "bound as Optional<Utf8>"},
		{"bound, not declared", good, map[string]string{"$id": "Utf8", "$y": "Int64"}, "$y (Int64) is bound but not declared"},
		{"unknown table", "DECLARE $id AS Utf8;\nSELECT id FROM nowhere WHERE id = $id;", nil, "unknown table nowhere"},
		{"unknown index", "DECLARE $id AS Utf8;\nSELECT id FROM orders VIEW idx_nope WHERE id = $id;", nil, "has no index idx_nope"},
		{"unknown column", "DECLARE $id AS Utf8;\nSELECT id FROM orders WHERE idd = $id;", nil, "no column idd"},
		{"compared with another type", "DECLARE $id AS Int64;\nSELECT id FROM orders WHERE id = $id;", nil, "orders.id (Utf8) compared with $id (Int64)"},
		{"IN needs a list", "DECLARE $id AS Utf8;\nSELECT id FROM orders WHERE id IN $id;", nil, "not a List"},
		{"written with another type", "DECLARE $id AS Utf8;\nDECLARE $v AS Utf8;\nUPSERT INTO orders (id, version) VALUES ($id, $v);", nil, "orders.version (Int64) written from $v (Utf8)"},
		{"Optional into NOT NULL", "DECLARE $id AS Optional<Utf8>;\nUPSERT INTO orders (id) VALUES ($id);", nil, "orders.id is NOT NULL"},
		{"struct field type", "DECLARE $rows AS List<Struct<'id':Utf8,'version':Utf8>>;\nUPDATE outbox ON SELECT id, version FROM AS_TABLE($rows);", nil, "outbox.version (Int64) written from $rows.version (Utf8)"},
		{"LIMITed branch out of index order", "DECLARE $limit AS Uint64;\nDECLARE $p AS Utf8;\nSELECT id FROM dead_letters VIEW idx_status_last_failed WHERE status = $p ORDER BY id LIMIT $limit;",
			nil, "idx_status_last_failed sorts by id but does not fix last_failed_at"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			issues := checkYQL(c.yql, c.bound, tables)
			if !strings.Contains(strings.Join(issues, "\n"), c.want) {
				t.Errorf("got %v, want an issue containing %q", issues, c.want)
			}
		})
	}
}
