package ydbstore

import (
	"io/fs"
	"regexp"
	"sort"
	"strings"
	"testing"

	"ordersaga/schema"
	ydbschema "ordersaga/schema/ydb"
)

// table is one CREATE TABLE of the migrations, as parsed by parseTable.
type table struct {
	columns map[string]string // name → YQL type
	notNull map[string]bool
	pk      []string
	indexes map[string][]string // index name → columns
	ttl     string              // TTL column, or ""
	// settings are the SET (...) options of later ALTER TABLE statements.
	settings []string
	// indexSettings are the ALTER INDEX ... SET (...) options, by index.
	indexSettings map[string][]string
}

var (
	reCreate  = regexp.MustCompile(`(?s)^CREATE TABLE IF NOT EXISTS (\w+) \((.*?)\)\s*(?:WITH \((.*)\))?;?$`)
	reIndex   = regexp.MustCompile(`^INDEX (\w+) GLOBAL SYNC ON \(([^)]*)\)$`)
	rePK      = regexp.MustCompile(`^PRIMARY KEY \(([^)]*)\)$`)
	reColumn  = regexp.MustCompile("^`?(\\w+)`?\\s+(\\w+)( NOT NULL)?$")
	reTTL     = regexp.MustCompile(`^TTL = Interval\("PT0S"\) ON (\w+)$`)
	reComment = regexp.MustCompile(`--[^\n]*`)
)

// parseTable parses one CREATE TABLE statement of our migrations' dialect.
func parseTable(t *testing.T, stmt string) (string, table) {
	t.Helper()
	m := reCreate.FindStringSubmatch(strings.TrimSpace(reComment.ReplaceAllString(stmt, "")))
	if m == nil {
		t.Fatalf("not a CREATE TABLE IF NOT EXISTS statement:\n%s", stmt)
	}
	tb := table{columns: map[string]string{}, notNull: map[string]bool{}, indexes: map[string][]string{}}
	for _, part := range splitTop(m[2]) {
		switch {
		case reIndex.MatchString(part):
			im := reIndex.FindStringSubmatch(part)
			tb.indexes[im[1]] = names(im[2])
		case rePK.MatchString(part):
			tb.pk = names(rePK.FindStringSubmatch(part)[1])
		case reColumn.MatchString(part):
			cm := reColumn.FindStringSubmatch(part)
			if _, dup := tb.columns[cm[1]]; dup {
				t.Errorf("%s: column %s twice", m[1], cm[1])
			}
			tb.columns[cm[1]], tb.notNull[cm[1]] = cm[2], cm[3] != ""
		default:
			t.Errorf("%s: cannot parse %q", m[1], part)
		}
	}
	if m[3] != "" {
		tm := reTTL.FindStringSubmatch(strings.TrimSpace(m[3]))
		if tm == nil {
			t.Errorf("%s: cannot parse WITH (%s)", m[1], m[3])
		} else {
			tb.ttl = tm[1]
		}
	}
	return m[1], tb
}

// splitTop splits s at commas outside parentheses, trimming the parts.
// reAlter matches the ALTER TABLE forms the migrations use, one action per
// statement (ydb/docs/en/core/yql/reference/syntax/alter_table): ADD
// COLUMN, ADD INDEX ... GLOBAL SYNC ON (...), DROP INDEX, SET (...).
var reAlter = regexp.MustCompile("(?s)^ALTER TABLE (\\w+) (ADD COLUMN `?(\\w+)`? (\\w+)|ADD INDEX (\\w+) GLOBAL SYNC ON \\(([^)]*)\\)|DROP INDEX (\\w+)|ALTER INDEX (\\w+) SET \\(([A-Z_]+ = [A-Z0-9_]+(?:, [A-Z_]+ = [A-Z0-9_]+)*)\\)|SET \\(([A-Z_]+ = [A-Z0-9_]+(?:, [A-Z_]+ = [A-Z0-9_]+)*)\\));?$")

// alterTable applies one ALTER TABLE statement to the parsed schema.
func alterTable(t *testing.T, tables map[string]table, stmt string) {
	t.Helper()
	m := reAlter.FindStringSubmatch(strings.TrimSpace(reComment.ReplaceAllString(stmt, "")))
	tb, ok := tables[m[1]]
	if !ok {
		t.Errorf("ALTER TABLE of unknown table %s", m[1])
		return
	}
	switch {
	case m[3] != "":
		if _, dup := tb.columns[m[3]]; dup {
			t.Errorf("%s: column %s added twice", m[1], m[3])
		}
		tb.columns[m[3]] = m[4]
	case m[5] != "":
		if _, dup := tb.indexes[m[5]]; dup {
			t.Errorf("%s: index %s added twice", m[1], m[5])
		}
		for _, c := range names(m[6]) {
			if _, ok := tb.columns[c]; !ok {
				t.Errorf("%s: index %s on unknown column %s", m[1], m[5], c)
			}
		}
		tb.indexes[m[5]] = names(m[6])
	case m[7] != "":
		if _, ok := tb.indexes[m[7]]; !ok {
			t.Errorf("%s: DROP INDEX of unknown index %s", m[1], m[7])
		}
		delete(tb.indexes, m[7])
	case m[8] != "":
		if _, ok := tb.indexes[m[8]]; !ok {
			t.Errorf("%s: ALTER INDEX of unknown index %s", m[1], m[8])
		}
		if tb.indexSettings == nil {
			tb.indexSettings = map[string][]string{}
		}
		tb.indexSettings[m[8]] = append(tb.indexSettings[m[8]], m[9])
	case m[10] != "":
		tb.settings = append(tb.settings, m[10])
	}
	tables[m[1]] = tb
}

func splitTop(s string) []string {
	var out []string
	depth, start := 0, 0
	for i, c := range s {
		switch c {
		case '(', '<':
			depth++
		case ')', '>':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, strings.TrimSpace(s[start:i]))
				start = i + 1
			}
		}
	}
	if rest := strings.TrimSpace(s[start:]); rest != "" {
		out = append(out, rest)
	}
	return out
}

// names splits a comma-separated identifier list, dropping backquotes.
func names(s string) []string {
	var out []string
	for _, p := range splitTop(s) {
		out = append(out, strings.Trim(p, "`"))
	}
	return out
}

// schemaTables parses every migration plus schema_migrations.
func schemaTables(t *testing.T) map[string]table {
	t.Helper()
	ms, err := LoadMigrations(ydbschema.FS)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]table{}
	stmts := []string{yqlCreateMigrationsTable, yqlCreateMigrationStatementsTable}
	for _, m := range ms {
		stmts = append(stmts, m.Statements...)
	}
	for _, st := range stmts {
		if reAlter.MatchString(strings.TrimSpace(reComment.ReplaceAllString(st, ""))) {
			alterTable(t, out, st)
			continue
		}
		name, tb := parseTable(t, st)
		if _, dup := out[name]; dup {
			t.Errorf("table %s created twice", name)
		}
		out[name] = tb
	}
	return out
}

func TestMigrationsDefineTheSchema(t *testing.T) {
	ms, err := LoadMigrations(ydbschema.FS)
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) == 0 {
		t.Fatal("no migrations embedded")
	}
	for i, m := range ms {
		if m.Version != int64(i+1) {
			t.Errorf("migration %s has version %d, want %d (no gaps)", m.Name, m.Version, i+1)
		}
	}
	tables := schemaTables(t)
	want := []string{"audit", "dead_letters", "idempotency_keys", "inbox", "orders", "outbox", "payments",
		"reservations", "saga_log", "sagas", "schema_migration_statements", "schema_migrations", "stock", "stock_shards"}
	var got []string
	for name := range tables {
		got = append(got, name)
	}
	sort.Strings(got)
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("tables = %v, want %v", got, want)
	}
	wantTTL := map[string]string{"idempotency_keys": "expires_at", "inbox": "expires_at", "outbox": "expire_at"}
	for name, tb := range tables {
		if tb.ttl != wantTTL[name] {
			t.Errorf("%s: TTL on %q, want %q", name, tb.ttl, wantTTL[name])
		}
		if tb.ttl != "" && tb.columns[tb.ttl] != "Timestamp" {
			t.Errorf("%s: TTL column %s is %s, want Timestamp", name, tb.ttl, tb.columns[tb.ttl])
		}
		if len(tb.pk) == 0 {
			t.Errorf("%s: no primary key", name)
		}
		for _, c := range tb.pk {
			if !tb.notNull[c] {
				t.Errorf("%s: primary-key column %s must be NOT NULL", name, c)
			}
		}
		for idx, cols := range tb.indexes {
			for _, c := range cols {
				if _, ok := tb.columns[c]; !ok {
					t.Errorf("%s: index %s on unknown column %s", name, idx, c)
				}
			}
		}
		for c, typ := range tb.columns {
			switch typ {
			case "Utf8", "Int64", "Timestamp", "Json", "String", "Bool":
			default:
				t.Errorf("%s.%s: unexpected type %s", name, c, typ)
			}
		}
	}
}

// TestColumnsMatchSQLite keeps the YDB schema in step with its SQLite twin:
// the same tables with the same column names (YDB adds only outbox.expire_at).
func TestColumnsMatchSQLite(t *testing.T) {
	ydbTables := schemaTables(t)
	reSQLiteTable := regexp.MustCompile(`(?s)CREATE TABLE (\w+) \((.*?)\)\s*STRICT`)
	files, err := fs.Glob(schema.SQLite, "sqlite/*.sql")
	if err != nil || len(files) == 0 {
		t.Fatalf("SQLite migrations: %v %v", files, err)
	}
	seen := map[string]bool{}
	added := map[string][]string{} // table → columns of SQLite ALTER TABLE ... ADD COLUMN
	reSQLiteAdd := regexp.MustCompile(`ALTER TABLE (\w+) ADD COLUMN (\w+)`)
	for _, f := range files {
		text, _ := fs.ReadFile(schema.SQLite, f)
		for _, m := range reSQLiteAdd.FindAllStringSubmatch(reComment.ReplaceAllString(string(text), ""), -1) {
			added[m[1]] = append(added[m[1]], m[2])
		}
	}
	for _, f := range files {
		text, _ := fs.ReadFile(schema.SQLite, f)
		for _, m := range reSQLiteTable.FindAllStringSubmatch(reComment.ReplaceAllString(string(text), ""), -1) {
			name := m[1]
			seen[name] = true
			yt, ok := ydbTables[name]
			if !ok {
				t.Errorf("SQLite table %s has no YDB twin", name)
				continue
			}
			want := map[string]bool{}
			for _, part := range splitTop(m[2]) {
				if f := strings.Fields(part); len(f) > 0 && f[0] != "PRIMARY" {
					want[f[0]] = true
				}
			}
			if name == "outbox" {
				want["expire_at"] = true
			}
			for _, c := range added[name] {
				want[c] = true
			}
			for c := range want {
				if _, ok := yt.columns[c]; !ok {
					t.Errorf("%s.%s exists in SQLite but not in YDB", name, c)
				}
			}
			for c := range yt.columns {
				if !want[c] {
					t.Errorf("%s.%s exists in YDB but not in SQLite", name, c)
				}
			}
		}
	}
	for name := range ydbTables {
		if !seen[name] && !strings.HasPrefix(name, "schema_migration") {
			t.Errorf("YDB table %s has no SQLite twin", name)
		}
	}
}

// TestHotTablesSplitByLoad: every table written on each order or saga step
// has AUTO_PARTITIONING_BY_LOAD enabled by a migration, and so has
// stock_shards (the sub-rows of a hot SKU are adjacent keys).
func TestHotTablesSplitByLoad(t *testing.T) {
	tables := schemaTables(t)
	for _, name := range []string{"orders", "idempotency_keys", "sagas", "saga_log", "outbox", "inbox", "stock_shards"} {
		found := false
		for _, s := range tables[name].settings {
			if strings.Contains(s, "AUTO_PARTITIONING_BY_LOAD = ENABLED") {
				found = true
			}
		}
		if !found {
			t.Errorf("%s: no AUTO_PARTITIONING_BY_LOAD = ENABLED", name)
		}
	}
}

// TestBucketedIndexes: the list indexes of sagas, idempotency keys, orders and the
// outbox start with bucket (migrations 0013, 0015 and 0017), the unbucketed ones
// are gone, and each bucketed index splits by load, so its bucket prefixes
// can move to partitions of their own; every outbox index splits by load
// (each is written by every outbox insert or publish).
func TestBucketedIndexes(t *testing.T) {
	tables := schemaTables(t)
	want := map[string][]string{
		"sagas":            {"idx_bucket_state_next", "idx_bucket_state_updated"},
		"idempotency_keys": {"idx_bucket_status_locked"},
		"outbox":           {"idx_bucket_status_shard_head_next"},
		"orders":           {"idx_bucket_customer_created"},
	}
	for name, idxs := range want {
		tb := tables[name]
		if tb.columns["bucket"] != "Int64" {
			t.Errorf("%s.bucket is %q, want Int64", name, tb.columns["bucket"])
		}
		for idx, cols := range tb.indexes {
			if len(cols) > 1 && (cols[0] == "state" || cols[0] == "status") {
				t.Errorf("%s.%s %v still starts with a state", name, idx, cols)
			}
		}
		for _, idx := range idxs {
			if cols := tb.indexes[idx]; len(cols) == 0 || cols[0] != "bucket" {
				t.Errorf("%s.%s = %v, want a key starting with bucket", name, idx, cols)
			}
			if !strings.Contains(strings.Join(tb.indexSettings[idx], ","), "AUTO_PARTITIONING_BY_LOAD = ENABLED") {
				t.Errorf("%s.%s: no AUTO_PARTITIONING_BY_LOAD = ENABLED", name, idx)
			}
		}
	}
	outbox := tables["outbox"]
	if outbox.columns["head"] != "Bool" {
		t.Errorf("outbox.head is %q, want Bool", outbox.columns["head"])
	}
	for idx := range outbox.indexes {
		if !strings.Contains(strings.Join(outbox.indexSettings[idx], ","), "AUTO_PARTITIONING_BY_LOAD = ENABLED") {
			t.Errorf("outbox.%s: no AUTO_PARTITIONING_BY_LOAD = ENABLED", idx)
		}
	}
}
