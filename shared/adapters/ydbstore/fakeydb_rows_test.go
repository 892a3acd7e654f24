package ydbstore

import (
	"regexp"
	"strings"

	"github.com/ydb-platform/ydb-go-genproto/protos/Ydb"
	"google.golang.org/protobuf/encoding/prototext"
)

// The fake's echo: so that a use case can read back what it wrote (a saga
// step reads the saga the new order inserted), FakeYDB keeps the values of
// the parameters each INSERT or UPSERT wrote, and of each UPDATE ON that
// sets columns of rows listed in an AS_TABLE parameter, by primary key, and
// answers a point read (SELECT columns FROM table WHERE every key column =
// $param) with them. That is all it does: no other read sees these rows
// (lists, joins, aggregates answer empty unless Answer says otherwise),
// nothing is ever checked or locked. It exercises the SDK's decoding of
// result sets typed as YDB types them (a nullable column is Optional<T>);
// it says nothing about what YDB would return.

var (
	rePointRead = regexp.MustCompile(`(?s)^SELECT\s+(.*?)\s+FROM\s+(\w+)\s+WHERE\s+(.*)$`)
	reKeyEq     = regexp.MustCompile("^`?(\\w+)`?\\s*=\\s*(\\$\\w+)$")
)

type echoRow map[string]*Ydb.Value

func valueKey(v *Ydb.Value) string { return prototext.Format(v) }

// echoWrite records the rows stmt writes.
func (f *FakeYDB) echoWrite(stmt yqlStmt, params map[string]*Ydb.TypedValue) {
	m := reWriteTarget.FindStringSubmatch(stmt.text)
	if m == nil {
		return
	}
	tb, ok := f.tables[m[1]]
	if !ok {
		return
	}
	row := echoRow{}
	if vm := reValues.FindStringSubmatch(stmt.text); vm != nil {
		cols, vals := names(vm[2]), splitTop(vm[3])
		for i := range min(len(cols), len(vals)) {
			if p, ok := params[vals[i]]; ok {
				row[cols[i]] = p.GetValue()
			}
		}
	}
	for _, pm := range reParamAs.FindAllStringSubmatch(stmt.text, -1) {
		if p, ok := params[pm[1]]; ok {
			row[pm[2]] = p.GetValue()
		}
	}
	var rows []echoRow
	if am := reAsTable.FindStringSubmatch(stmt.text); am != nil && stmt.kind == "UPDATE" {
		list := params[am[1]]
		members := list.GetType().GetListType().GetItem().GetStructType().GetMembers()
		for _, item := range list.GetValue().GetItems() {
			r := echoRow{}
			for c, v := range row {
				r[c] = v
			}
			for i, mem := range members {
				r[mem.GetName()] = item.GetItems()[i]
			}
			rows = append(rows, r)
		}
	} else if len(row) > 0 {
		rows = []echoRow{row}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.rows == nil {
		f.rows = map[string]map[string]echoRow{}
	}
	if f.rows[m[1]] == nil {
		f.rows[m[1]] = map[string]echoRow{}
	}
	for _, r := range rows {
		key := ""
		for _, c := range tb.pk {
			key += valueKey(r[c]) + "\x00"
		}
		stored := f.rows[m[1]][key]
		if stored == nil || stmt.kind == "INSERT" {
			stored = echoRow{}
		}
		for c, v := range r {
			stored[c] = v
		}
		f.rows[m[1]][key] = stored
	}
}

// echoRead answers a point read by primary key from the echoed rows; ok is
// false for any other statement.
func (f *FakeYDB) echoRead(stmt yqlStmt, params map[string]*Ydb.TypedValue) (*Ydb.ResultSet, bool) {
	m := rePointRead.FindStringSubmatch(stmt.text)
	if m == nil {
		return nil, false
	}
	tb, ok := f.tables[m[2]]
	if !ok {
		return nil, false
	}
	eq := map[string]*Ydb.Value{}
	for _, part := range reAnd.Split(m[3], -1) {
		km := reKeyEq.FindStringSubmatch(strings.TrimSpace(part))
		if km == nil {
			return nil, false
		}
		p, ok := params[km[2]]
		if !ok {
			return nil, false
		}
		eq[km[1]] = p.GetValue()
	}
	key := ""
	for _, c := range tb.pk {
		v, ok := eq[c]
		if !ok {
			return nil, false
		}
		key += valueKey(v) + "\x00"
	}
	if len(eq) != len(tb.pk) {
		return nil, false
	}
	f.mu.Lock()
	row := f.rows[m[2]][key]
	f.mu.Unlock()
	return f.ResultSet(m[2], names(m[1]), row), true
}

// ResultSet builds a result set of table's columns cols (typed from the
// schema: Optional<T> unless NOT NULL) holding rows (a missing column is
// NULL); a nil row is no row.
func (f *FakeYDB) ResultSet(table string, cols []string, rows ...echoRow) *Ydb.ResultSet {
	tb := f.tables[table]
	rs := &Ydb.ResultSet{}
	for _, c := range cols {
		t := &Ydb.Type{Type: &Ydb.Type_TypeId{TypeId: primitiveOf[tb.columns[c]]}}
		if !tb.notNull[c] {
			t = &Ydb.Type{Type: &Ydb.Type_OptionalType{OptionalType: &Ydb.OptionalType{Item: t}}}
		}
		rs.Columns = append(rs.Columns, &Ydb.Column{Name: c, Type: t})
	}
	for _, r := range rows {
		if r == nil {
			continue
		}
		v := &Ydb.Value{}
		for _, c := range cols {
			item, ok := r[c]
			if !ok || item == nil {
				item = &Ydb.Value{Value: &Ydb.Value_NullFlagValue{}}
			}
			v.Items = append(v.Items, item)
		}
		rs.Rows = append(rs.Rows, v)
	}
	return rs
}

var primitiveOf = map[string]Ydb.Type_PrimitiveTypeId{
	"Utf8": Ydb.Type_UTF8, "String": Ydb.Type_STRING, "Json": Ydb.Type_JSON, "Int64": Ydb.Type_INT64,
	"Timestamp": Ydb.Type_TIMESTAMP, "Bool": Ydb.Type_BOOL, "Uint64": Ydb.Type_UINT64,
}

// AnswerOutboxDue makes the relay's due lists (ListOutboxDue,
// ListOutboxDueFrom) return every echoed outbox row whose status is
// pending, and EarliestPending return the same rows (each is then the
// earliest of its aggregate). Nothing is filtered by time or lease.
func (f *FakeYDB) AnswerOutboxDue() {
	f.Answer = func(text string, _ map[string]*Ydb.TypedValue) []*Ydb.ResultSet {
		if !strings.Contains(text, "FROM outbox VIEW idx_bucket_status_shard_head_next") && !strings.Contains(text, "FROM outbox VIEW idx_aggregate") ||
			!strings.Contains(text, "SELECT * FROM") && !strings.Contains(text, "$aggregate_ids") {
			return nil
		}
		var rows []echoRow
		f.mu.Lock()
		for _, r := range f.rows["outbox"] {
			if r["status"].GetTextValue() == "pending" {
				rows = append(rows, r)
			}
		}
		f.mu.Unlock()
		cols := names(strings.Join(strings.Fields(outboxColumns), " "))
		if strings.Contains(text, "$aggregate_ids") {
			cols = []string{"aggregate_id", "id", "aggregate_seq", "created_at"}
		}
		return []*Ydb.ResultSet{f.ResultSet("outbox", cols, rows...)}
	}
}
