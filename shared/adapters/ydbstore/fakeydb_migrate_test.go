package ydbstore

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ydb-platform/ydb-go-genproto/protos/Ydb"

	ydbschema "ordersaga/schema/ydb"
)

// TestMigrateResumesInsideAMigration: a run interrupted after statement k
// of a migration (its statements 1..k recorded, the migration not) sends
// only statements k+1.. of it on the next run, then records it; earlier
// migrations send nothing.
func TestMigrateResumesInsideAMigration(t *testing.T) {
	ms, err := LoadMigrations(ydbschema.FS)
	if err != nil {
		t.Fatal(err)
	}
	var target Migration
	for _, m := range ms {
		if len(m.Statements) >= 3 && strings.Contains(strings.Join(m.Statements, ""), "ALTER TABLE") {
			target = m
		}
	}
	if target.Version == 0 {
		t.Fatal("no migration with three ALTER statements")
	}
	const k = 2 // statements of target applied and recorded before the interruption
	f := StartFakeYDB(t)
	f.Answer = func(text string, _ map[string]*Ydb.TypedValue) []*Ydb.ResultSet {
		switch {
		case strings.Contains(text, "FROM schema_migrations"):
			var rows []echoRow
			for _, m := range ms {
				if m.Version < target.Version {
					rows = append(rows, echoRow{"version": &Ydb.Value{Value: &Ydb.Value_Int64Value{Int64Value: m.Version}}})
				}
			}
			return []*Ydb.ResultSet{f.ResultSet("schema_migrations", []string{"version", "name", "applied_at"}, rows...)}
		case strings.Contains(text, "FROM schema_migration_statements"):
			var rows []echoRow
			for i := int64(1); i <= k; i++ {
				rows = append(rows, echoRow{"version": &Ydb.Value{Value: &Ydb.Value_Int64Value{Int64Value: target.Version}},
					"statement": &Ydb.Value{Value: &Ydb.Value_Int64Value{Int64Value: i}}})
			}
			return []*Ydb.ResultSet{f.ResultSet("schema_migration_statements", []string{"version", "statement"}, rows...)}
		}
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := Open(ctx, Config{ConnectionString: f.DSN, Auth: AuthAnonymous})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	applied, err := s.Migrate(ctx, ms, MigrateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(applied) == 0 || applied[0].Version != target.Version {
		t.Fatalf("applied %v, want %s first", applied, target.Name)
	}
	sent := map[string]int{}
	for _, r := range f.Take() {
		sent[strings.TrimSpace(r.Text)]++
	}
	for _, m := range ms {
		for i, st := range m.Statements {
			want := 1
			if m.Version < target.Version || m.Version == target.Version && i < k {
				want = 0
			}
			if got := sent[strings.TrimSpace(st)]; got != want {
				t.Errorf("%s statement %d sent %d times, want %d", m.Name, i+1, got, want)
			}
		}
	}
}
