package ydbstore

import (
	"context"
	"fmt"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/ydb-platform/ydb-go-genproto/protos/Ydb_Query"
	"github.com/ydb-platform/ydb-go-sdk/v3"
	"github.com/ydb-platform/ydb-go-sdk/v3/query"
	"google.golang.org/protobuf/proto"
)

// recorder is a conn that executes nothing. For every statement a tx method
// sends it checks that the text is one of the package's yql consts, that
// the bound parameters match the DECLAREs (names and YQL types), and that
// every column the method scans is selected by the query and scanned into
// a Go type the SDK can decode the column's YQL type into. found decides
// whether reads see one (empty) row or none. This is not a fake YDB: it
// returns no data and tests only what can be known without a server.
type recorder struct {
	t       *testing.T
	queries map[string]string // text → const name
	tables  map[string]table
	found   bool
	version int64 // what a "version" column reads as
	ran     map[string]bool
	byCanon map[string]string
}

func (r *recorder) check(yql string, p ydb.Params) string {
	got := map[string]string{}
	for n, v := range p.Range() {
		got[n] = v.Type().Yql()
	}
	if err := marshalParams(p); err != nil {
		r.t.Errorf("%s: the SDK could not send these parameters: %v", yql, err)
	}
	if r.tables != nil {
		if issues := checkYQL(yql, got, r.tables); len(issues) > 0 {
			r.t.Errorf("the server would refuse this text:\n  %s\n%s", strings.Join(issues, "\n  "), yql)
		}
	}
	if !strings.Contains(yql, writeSeparator) {
		return r.checkOne(yql, got)
	}
	// A flush of deferred writes: every group's DECLAREs first, then group
	// i's body, a const (or a guarded const) with every $name renamed
	// $w<i>_name.
	parts := strings.Split(yql, writeSeparator)
	var names []string
	for i, part := range parts[1:] {
		prefix := fmt.Sprintf("$w%d_", i)
		sub := map[string]string{}
		for n, ty := range got {
			if strings.HasPrefix(n, prefix) {
				sub["$"+strings.TrimPrefix(n, prefix)] = ty
			}
		}
		var decl strings.Builder
		for _, line := range strings.Split(parts[0], "\n") {
			if strings.HasPrefix(line, "DECLARE "+prefix) {
				decl.WriteString(line + "\n")
			}
		}
		names = append(names, r.checkOne(strings.ReplaceAll(decl.String()+part, prefix, "$"), sub))
	}
	return strings.Join(names, "+")
}

// canonical is a text with its DECLAREs sorted first and blank lines
// dropped: a group of a flush and the const it came from compare equal.
func canonical(yql string) string {
	d, b := splitDeclares(yql)
	lines := strings.Split(strings.TrimSpace(d), "\n")
	sort.Strings(lines)
	return strings.Join(lines, "\n") + "\n" + b
}

func (r *recorder) checkOne(yql string, got map[string]string) string {
	name, ok := r.queries[yql]
	if !ok {
		name, ok = r.canon()[canonical(yql)]
	}
	if !ok {
		r.t.Errorf("a statement that is not a yql const was executed:\n%s", yql)
		return "?"
	}
	for _, n := range strings.Split(name, "|") {
		r.ran[n] = true
	}
	want := declares(yql)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		r.t.Errorf("%s: bound %v, declared %v", name, got, want)
	}
	return name
}

// canon indexes r.queries by canonical text.
func (r *recorder) canon() map[string]string {
	if r.byCanon == nil {
		r.byCanon = map[string]string{}
		for yql, name := range r.queries {
			r.byCanon[canonical(yql)] = name
		}
	}
	return r.byCanon
}

func (r *recorder) Exec(_ context.Context, yql string, p ydb.Params, _ bool) error {
	r.check(yql, p)
	return nil
}

func (r *recorder) QueryRow(_ context.Context, yql string, p ydb.Params) (query.Row, error) {
	name := r.check(yql, p)
	if !r.found {
		return nil, query.ErrNoRows
	}
	return &fakeRow{r: r, name: name, yql: yql}, nil
}

func (r *recorder) Each(_ context.Context, yql string, p ydb.Params, fn func(query.Row) error) error {
	name := r.check(yql, p)
	if !r.found {
		return nil
	}
	return fn(&fakeRow{r: r, name: name, yql: yql})
}

func (r *recorder) Snapshot(ctx context.Context, yql string, p ydb.Params, fn func(query.Row) error) error {
	return r.Each(ctx, yql, p, fn)
}

func (r *recorder) Commit(context.Context) error { return nil }

// withGuards adds to byText every guarded(version const, upsert const)
// pair, named "<version>|<upsert>".
func withGuards(queries map[string]string, byText map[string]string) {
	for vn, v := range queries {
		if !strings.Contains(v, "SELECT version FROM") {
			continue
		}
		for un, u := range queries {
			if strings.Contains(u, "UPSERT INTO") {
				byText[guarded(v, u)] = vn + "|" + un
			}
		}
	}
}

// marshalParams encodes p exactly as the SDK sends it: ToYDB (what
// internal/query's execute request is built from) inside an
// Ydb_Query.ExecuteQueryRequest, through proto.Marshal, which refuses a
// string field holding invalid UTF-8.
func marshalParams(p ydb.Params) error {
	m, err := p.ToYDB()
	if err != nil {
		return err
	}
	_, err = proto.Marshal(&Ydb_Query.ExecuteQueryRequest{Parameters: m})
	return err
}

// fakeRow is a row whose columns all read as NULL, except "version".
type fakeRow struct {
	query.Row // not implemented: only ScanNamed is used
	r         *recorder
	name, yql string
}

var goTypeOf = map[string]reflect.Type{
	"Utf8":      reflect.TypeOf((*string)(nil)),
	"Json":      reflect.TypeOf((*string)(nil)),
	"Int64":     reflect.TypeOf((*int64)(nil)),
	"String":    reflect.TypeOf((*[]byte)(nil)),
	"Bool":      reflect.TypeOf((*bool)(nil)),
	"Timestamp": reflect.TypeOf((**time.Time)(nil)),
}

// addedLater are columns added by ALTER TABLE: rows written before the
// migration hold NULL, so they are scanned as Optional (**int64, **string).
var addedLater = map[string]reflect.Type{
	"sold":          reflect.TypeOf((**int64)(nil)),
	"aggregate_seq": reflect.TypeOf((**int64)(nil)),
	"shards":        reflect.TypeOf((**int64)(nil)),
	"takes":         reflect.TypeOf((**string)(nil)),
}

// aliasTypes are the computed columns some queries select.
var aliasTypes = map[string]reflect.Type{
	"pending": reflect.TypeOf((*uint64)(nil)), // COUNT(*)
	"dated":   reflect.TypeOf((*uint64)(nil)), // COUNT(col)
	"oldest":  reflect.TypeOf((**time.Time)(nil)),
	"total":   reflect.TypeOf((*int64)(nil)), // SUM(Int64)
}

var reSelectAny = regexp.MustCompile(`(?s)\bSELECT\s+(.*?)\s+FROM\s+(\$?\w+)`)

func (f *fakeRow) ScanNamed(dst ...query.NamedDestination) error {
	// Every projection of the query counts (a named subquery $x = SELECT
	// ... FROM table, then SELECT ... FROM $x); the table is the first one
	// read from.
	ms := reSelectAny.FindAllStringSubmatch(reDeclare.ReplaceAllString(f.yql, ""), -1)
	var tb table
	tableName := ""
	selected := map[string]bool{}
	for _, m := range ms {
		if t, ok := f.r.tables[m[2]]; ok && tableName == "" {
			tb, tableName = t, m[2]
		}
		for _, item := range splitTop(m[1]) {
			fields := strings.Fields(item)
			selected[strings.Trim(fields[len(fields)-1], "`")] = true // a column, or the alias after AS
		}
	}
	if tableName == "" {
		f.r.t.Errorf("%s: scanned, but it selects nothing", f.name)
		return nil
	}
	m := []string{"", "", tableName}
	for _, d := range dst {
		col, ref := d.Name(), reflect.TypeOf(d.Ref())
		if !selected[col] {
			f.r.t.Errorf("%s: scans %s, which it does not select", f.name, col)
		}
		want, ok := goTypeOf[tb.columns[col]]
		if later, ok := addedLater[col]; ok {
			want = later
		}
		if alias, isAlias := aliasTypes[col]; isAlias && tb.columns[col] == "" {
			want, ok = alias, true
		}
		if !ok {
			f.r.t.Errorf("%s: scans %s, unknown in %s", f.name, col, m[2])
		} else if ref != want {
			f.r.t.Errorf("%s: scans %s (%s) into %v, want %v", f.name, col, tb.columns[col], ref, want)
		}
		if col == "version" {
			if p, ok := d.Ref().(*int64); ok {
				*p = f.r.version
			}
		}
	}
	return nil
}
