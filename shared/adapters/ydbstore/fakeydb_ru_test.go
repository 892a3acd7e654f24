package ydbstore

import (
	"regexp"
	"strings"

	"github.com/ydb-platform/ydb-go-genproto/protos/Ydb"
	"google.golang.org/protobuf/proto"
)

// Request units of what the fake receives: an estimate of the I/O part of
// a query's cost by the published rules (Yandex Cloud, "Rules for
// estimating the cost of YQL queries to YDB",
// https://yandex.cloud/en/docs/ydb/pricing/ru-yql): a request costs the
// larger of its CPU cost and its I/O cost; the I/O cost counts reads
// (max(rows, ceil(bytes / 4 KB)), 1 RU each) and writes (max(rows,
// ceil(bytes / 1 KB)), 2 RU each) on tables and their indexes, deletes by
// their count, and "some row conversions involve data reads or deletes
// before editing". The fake knows no CPU time, so this is the I/O part
// only, counted per statement:
//
//   - a point read or a row of a list: 1 read per row returned (a VIEW row:
//     the index row and the table row it points to, 2 reads); a key looked
//     up and not found: 1 read; a version guard or the batch guard: 1 read
//     per row checked; the per-aggregate sequence (MAX over idx_aggregate):
//     1 read per outbox row of the aggregate the fake holds, at least 1;
//   - an INSERT: 1 write per row (by its bytes) plus 1 write per index row;
//   - an UPSERT or UPDATE of a row: 1 write (by its bytes); on a table with
//     indexes, 1 read of the old row, and for each index whose columns the
//     statement writes with a value different from the stored one, a
//     delete of the old index row and a write of the new one (2 writes; 1
//     when there was no old row);
//   - a DELETE: 1 write per row and per index row, after 1 read.
//
// Rows returned empty by the fake (lists, aggregates the fake does not
// answer) cost nothing here: on YDB they cost at least the CPU minimum.

// RU is a request's estimate: reads, writes and their RU.
type RU struct{ Reads, Writes int }

// Units is the RU of the estimate: 1 per read, 2 per write.
func (r RU) Units() int { return r.Reads + 2*r.Writes }

func (r *RU) add(o RU) { r.Reads += o.Reads; r.Writes += o.Writes }

var (
	reGuardRead  = regexp.MustCompile(`\$stored_version = \(SELECT version FROM (\w+) WHERE`)
	reSeqRead    = regexp.MustCompile(`\$last_seq = \(SELECT MAX\(aggregate_seq\) FROM outbox VIEW idx_aggregate WHERE aggregate_id = (\$\w+)\)`)
	reBatchGuard = regexp.MustCompile(`FROM AS_TABLE\((\$\w+)\) AS e INNER JOIN`)
)

// estimateRU is the I/O estimate of one query text with its parameters and
// the result sets the fake returns, against the rows it holds before the
// query's writes.
func (f *FakeYDB) estimateRU(text string, params map[string]*Ydb.TypedValue, sets []*Ydb.ResultSet) RU {
	ru, _ := f.estimateRUBy(text, params, sets)
	return ru
}

// estimateRUBy is estimateRU with its RU split by where they go: "t" for
// the rows of table t, "t indexes" for its index rows (written, or read by
// a VIEW), "t guard" for version guards on t, "outbox seq" for the
// per-aggregate sequence read.
func (f *FakeYDB) estimateRUBy(text string, params map[string]*Ydb.TypedValue, sets []*Ydb.ResultSet) (RU, map[string]int) {
	var ru RU
	by := map[string]int{}
	for _, st := range splitYQL(text) {
		switch st.kind {
		case "NAMED":
			if m := reGuardRead.FindStringSubmatch(st.text); m != nil {
				ru.Reads++
				by[m[1]+" guard"]++
			}
			if m := reSeqRead.FindStringSubmatch(st.text); m != nil {
				n := max(1, f.countOutbox(params[m[1]].GetValue()))
				ru.Reads += n
				by["outbox seq"] += n
			}
			if m := reBatchGuard.FindStringSubmatch(st.text); m != nil {
				n := len(params[m[1]].GetValue().GetItems())
				ru.Reads += n
				by["outbox guard"] += n
			}
		case "INSERT", "UPSERT", "UPDATE", "DELETE":
			w, idx := f.writeRUBy(st, params)
			ru.add(w)
			if m := reWriteTarget.FindStringSubmatch(st.text); m != nil {
				by[m[1]] += w.Units() - idx.Units()
				if idx.Units() > 0 {
					by[m[1]+" indexes"] += idx.Units()
				}
			}
		}
	}
	// the table the result rows come from: the last SELECT's, else the
	// first table a FROM of the text names (a list of named branches)
	from := ""
	for _, t := range []string{lastSelect(text), text} {
		for _, m := range reFromTable.FindAllStringSubmatch(t, -1) {
			if _, ok := f.tables[m[1]]; ok && from == "" {
				from = m[1]
			}
		}
	}
	for _, rs := range sets {
		per := 1
		if strings.Contains(text, " VIEW ") {
			per = 2
			by[from+" indexes"] += len(rs.GetRows())
		}
		ru.Reads += per * max(len(rs.GetRows()), 0)
		by[from] += len(rs.GetRows())
		if len(rs.GetRows()) == 0 && rePointRead.MatchString(lastSelect(text)) && !strings.Contains(text, " VIEW ") {
			ru.Reads++ // a key looked up and not found
			by[from]++
		}
	}
	for k, v := range by {
		if v == 0 {
			delete(by, k)
		}
	}
	return ru, by
}

var reFromTable = regexp.MustCompile(`(?s)\bFROM\s+(\w+)`)

func lastSelect(text string) string {
	last := ""
	for _, st := range splitYQL(text) {
		if st.kind == "SELECT" {
			last = st.text
		}
	}
	return last
}

// countOutbox counts the outbox rows the fake holds for an aggregate id.
func (f *FakeYDB) countOutbox(agg *Ydb.Value) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, r := range f.rows["outbox"] {
		if proto.Equal(r["aggregate_id"], agg) {
			n++
		}
	}
	return n
}

// writeRU estimates one write statement.
func (f *FakeYDB) writeRU(st yqlStmt, params map[string]*Ydb.TypedValue) RU {
	ru, _ := f.writeRUBy(st, params)
	return ru
}

// writeRUBy is writeRU and the part of it that maintains indexes (the old
// row read for them, index rows written).
func (f *FakeYDB) writeRUBy(st yqlStmt, params map[string]*Ydb.TypedValue) (RU, RU) {
	m := reWriteTarget.FindStringSubmatch(st.text)
	if m == nil {
		return RU{}, RU{}
	}
	tb := f.tables[m[1]]
	// the rows written: one, or one per item of the AS_TABLE list parameter
	written := []map[string]*Ydb.Value{{}}
	if vm := reValues.FindStringSubmatch(st.text); vm != nil {
		cols, vals := names(vm[2]), splitTop(vm[3])
		for i := range min(len(cols), len(vals)) {
			written[0][cols[i]] = params[vals[i]].GetValue()
		}
	}
	for _, pm := range reParamAs.FindAllStringSubmatch(st.text, -1) {
		written[0][pm[2]] = params[pm[1]].GetValue()
	}
	if am := reAsTable.FindStringSubmatch(st.text); am != nil && params[am[1]].GetType().GetListType() != nil {
		list := params[am[1]]
		members := list.GetType().GetListType().GetItem().GetStructType().GetMembers()
		var rows []map[string]*Ydb.Value
		for _, item := range list.GetValue().GetItems() {
			r := map[string]*Ydb.Value{}
			for c, v := range written[0] {
				r[c] = v
			}
			for i, mem := range members {
				r[mem.GetName()] = item.GetItems()[i]
			}
			rows = append(rows, r)
		}
		written = rows
	}
	var ru, idx RU
	for _, w := range written {
		if st.kind == "DELETE" {
			ru.Reads++
			ru.Writes += 1 + len(tb.indexes)
			idx.Writes += len(tb.indexes)
			continue
		}
		bytes := 0
		for _, v := range w {
			bytes += proto.Size(v)
		}
		ru.Writes += max(1, (bytes+1023)/1024)
		if st.kind == "INSERT" {
			ru.Writes += len(tb.indexes)
			idx.Writes += len(tb.indexes)
			continue
		}
		if len(tb.indexes) == 0 {
			continue
		}
		ru.Reads++ // the old row, to maintain the indexes
		idx.Reads++
		old := f.storedRow(m[1], tb, w)
		for _, cols := range tb.indexes {
			changed := false
			for _, c := range cols {
				if v, ok := w[c]; ok && (old == nil || !proto.Equal(v, old[c])) {
					changed = true
				}
			}
			switch {
			case changed && old != nil:
				ru.Writes += 2
				idx.Writes += 2
			case changed:
				ru.Writes++
				idx.Writes++
			}
		}
	}
	return ru, idx
}

// storedRow is the echoed row with w's primary key, or nil.
func (f *FakeYDB) storedRow(table string, tb table, w map[string]*Ydb.Value) echoRow {
	key := ""
	for _, c := range tb.pk {
		key += valueKey(w[c]) + "\x00"
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.rows[table][key]
}
