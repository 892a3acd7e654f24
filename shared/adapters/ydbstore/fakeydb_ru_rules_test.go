package ydbstore

import (
	"testing"

	"github.com/ydb-platform/ydb-go-genproto/protos/Ydb"
)

func text(s string) *Ydb.TypedValue {
	return &Ydb.TypedValue{Type: &Ydb.Type{Type: &Ydb.Type_TypeId{TypeId: Ydb.Type_UTF8}},
		Value: &Ydb.Value{Value: &Ydb.Value_TextValue{TextValue: s}}}
}

// TestRequestUnitRules: the estimate follows its stated rules on known
// statements.
func TestRequestUnitRules(t *testing.T) {
	f := &FakeYDB{t: t, tables: schemaTables(t)}
	ins := "DECLARE $id AS Utf8;\nDECLARE $aggregate_id AS Utf8;\nDECLARE $status AS Utf8;\n" +
		"INSERT INTO outbox (id, aggregate_id, status) VALUES ($id, $aggregate_id, $status);"
	ps := map[string]*Ydb.TypedValue{"$id": text("e1"), "$aggregate_id": text("a1"), "$status": text("pending")}
	if got := f.estimateRU(ins, ps, nil); got != (RU{Writes: 3}) { // the row and its two index rows
		t.Errorf("INSERT into outbox: %+v, want 3 writes", got)
	}
	f.echoWrite(splitYQL(ins)[3], ps)
	up := "DECLARE $id AS Utf8;\nDECLARE $aggregate_id AS Utf8;\nDECLARE $status AS Utf8;\n" +
		"UPSERT INTO outbox (id, aggregate_id, status) VALUES ($id, $aggregate_id, $status);"
	ps2 := map[string]*Ydb.TypedValue{"$id": text("e1"), "$aggregate_id": text("a1"), "$status": text("published")}
	// the row, the old row read, and both indexes (each holds status) rewritten: delete + write
	if got := f.estimateRU(up, ps2, nil); got != (RU{Reads: 1, Writes: 5}) {
		t.Errorf("UPSERT changing status: %+v, want 1 read, 5 writes", got)
	}
	if got := f.estimateRU(up, ps, nil); got != (RU{Reads: 1, Writes: 1}) {
		t.Errorf("UPSERT changing no indexed column: %+v, want 1 read, 1 write", got)
	}
	get := "DECLARE $id AS Utf8;\nSELECT id, version FROM orders WHERE id = $id;"
	if got := f.estimateRU(get, map[string]*Ydb.TypedValue{"$id": text("o")}, []*Ydb.ResultSet{{}}); got != (RU{Reads: 1}) {
		t.Errorf("a key not found: %+v, want 1 read", got)
	}
	if got := (RU{Reads: 3, Writes: 2}).Units(); got != 7 {
		t.Errorf("units %d, want 7 (1 per read, 2 per write)", got)
	}
}
