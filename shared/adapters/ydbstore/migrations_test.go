package ydbstore

import (
	"strings"
	"testing"
	"testing/fstest"

	"ordersaga/shared/domain/apperr"
)

func TestSplitStatements(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{"two", "CREATE TABLE a (x Int64, PRIMARY KEY (x));\nCREATE TABLE b (y Int64, PRIMARY KEY (y));\n",
			[]string{"CREATE TABLE a (x Int64, PRIMARY KEY (x))", "CREATE TABLE b (y Int64, PRIMARY KEY (y))"}},
		{"no final semicolon", "SELECT 1", []string{"SELECT 1"}},
		{"comment-only text dropped", "-- just a comment;\n/* and; another */\n", nil},
		{"semicolons in comments and literals", "-- a; b\nSELECT 'x;y', \"p;q\", `c;d` /* ; */;",
			[]string{"-- a; b\nSELECT 'x;y', \"p;q\", `c;d` /* ; */"}},
		{"escaped quote", `SELECT 'it\'s;'; SELECT 2;`, []string{`SELECT 'it\'s;'`, "SELECT 2"}},
		{"empty statements", ";;  ;", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := SplitStatements(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(got, "|") != strings.Join(tt.want, "|") || len(got) != len(tt.want) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
	for _, bad := range []string{"SELECT 'open", "SELECT `open", "/* open"} {
		if _, err := SplitStatements(bad); err == nil {
			t.Errorf("SplitStatements(%q): want an error", bad)
		}
	}
}

func TestLoadMigrations(t *testing.T) {
	good := fstest.MapFS{
		"0002_b.sql":   {Data: []byte("CREATE TABLE b (x Int64, PRIMARY KEY (x));")},
		"0001_a.sql":   {Data: []byte("-- a\nCREATE TABLE a (x Int64, PRIMARY KEY (x));\nCREATE TABLE c (x Int64, PRIMARY KEY (x));")},
		"README.md":    {Data: []byte("not a migration")},
		"sub/0003.sql": {Data: []byte("ignored: not at the root")},
	}
	ms, err := LoadMigrations(good)
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 2 || ms[0].Name != "0001_a.sql" || ms[0].Version != 1 || len(ms[0].Statements) != 2 ||
		ms[1].Version != 2 {
		t.Errorf("got %+v", ms)
	}
	bad := map[string]fstest.MapFS{
		"bad name":          {"1_a.sql": {Data: []byte("SELECT 1;")}},
		"duplicate version": {"0001_a.sql": {Data: []byte("SELECT 1;")}, "0001_b.sql": {Data: []byte("SELECT 1;")}},
		"empty":             {"0001_a.sql": {Data: []byte("-- nothing\n")}},
		"unterminated":      {"0001_a.sql": {Data: []byte("SELECT 'x;")}},
	}
	for name, fsys := range bad {
		if _, err := LoadMigrations(fsys); !apperr.Is(err, apperr.Invalid) {
			t.Errorf("%s: got %v, want Invalid", name, err)
		}
	}
}
