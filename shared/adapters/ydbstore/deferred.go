package ydbstore

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/ydb-platform/ydb-go-genproto/protos/Ydb"
	"github.com/ydb-platform/ydb-go-sdk/v3"

	"ordersaga/shared/domain/apperr"
)

// Deferred writes.
//
// A read-write transaction sends its writes together: every INSERT, UPSERT
// and DELETE of the closure is queued and sent as one multi-statement query
// just before the next read of a table it touches (so the transaction reads
// its own writes) or, usually, with the commit (query.WithCommit), so a
// closure of k reads and any number of writes costs k+1 round trips
// (lazy begin: no BeginTransaction; committing statement: no
// CommitTransaction).
//
// YQL runs the statements of one query in one transaction and fails the
// whole query when one fails (ydb/docs/en/core/yql/reference/syntax/commit:
// "the entire YQL query is executed within a single transaction"), so the
// checks travel with the writes:
//
//   - an INSERT fails on an existing key with issue 2012;
//   - an update of a row this transaction has not read is guarded: the
//     query reads the row's stored version and fails through Ensure unless
//     it is the expected one (ydb/docs/en/core/yql/reference/builtins/
//     basic.md, Ensure: "If the check fails, the entire query fails").
//
// Either failure means the closure saw an optimistic "ok" that was wrong.
// Nothing was committed, so InTx runs the closure again in immediate mode,
// where each write is checked when it is made and Conflict / NotFound
// come back at the call, exactly as the port promises (errOptimisticMiss).

// errOptimisticMiss voids an optimistic attempt (see above).
var errOptimisticMiss = errors.New("ydbstore: a deferred write's precondition failed; rerun with immediate checks")

// guardMarker is the Ensure message of a version guard.
const guardMarker = "ordersaga-version-guard"

// writeSeparator separates the statement groups of a flush.
const writeSeparator = "\n-- ordersaga:write\n"

// guarded prefixes upsertYQL with a guard built from versionYQL (a
// "SELECT version FROM t WHERE <key>" const over the same key parameters):
// the query fails unless the stored version is $expected_version. A
// missing row fails too (NULL version); the immediate rerun tells NotFound
// from Conflict.
func guarded(versionYQL, upsertYQL string) string {
	declares, body := splitDeclares(upsertYQL)
	_, sel := splitDeclares(versionYQL)
	sel = strings.TrimSuffix(strings.TrimSpace(sel), ";")
	return declares + "DECLARE $expected_version AS Int64;\n" +
		"$stored_version = (" + sel + ");\n" +
		"SELECT Ensure(0, COALESCE($stored_version = $expected_version, false), \"" + guardMarker + "\") AS guard;\n" +
		body
}

// splitDeclares returns the DECLARE lines of a query and the rest.
func splitDeclares(yql string) (declares, body string) {
	var d, b strings.Builder
	for _, line := range strings.Split(yql, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "DECLARE ") {
			d.WriteString(strings.TrimSpace(line) + "\n")
		} else if strings.TrimSpace(line) != "" {
			b.WriteString(line + "\n")
		}
	}
	return d.String(), b.String()
}

var reParamName = regexp.MustCompile(`\$([A-Za-z_][A-Za-z0-9_]*)`)

// joinWrites renders deferred writes as one query: group i's parameters
// and named expressions are renamed $w<i>_<name>, so the groups cannot
// clash, and every group's DECLAREs are hoisted to the start (hoistDeclares).
// The text depends only on which consts are joined, never on values.
func joinWrites(ws []write) (string, *paramList, string, error) {
	if len(ws) == 1 {
		return ws[0].yql, ws[0].ps, ws[0].what, nil
	}
	var b strings.Builder
	all := newParams()
	whats := make([]string, 0, len(ws))
	for i, w := range ws {
		prefix := "$w" + strconv.Itoa(i) + "_"
		b.WriteString(writeSeparator)
		b.WriteString(reParamName.ReplaceAllString(w.yql, "$$w"+strconv.Itoa(i)+"_${1}"))
		for _, p := range w.ps.ps {
			all.add(prefix+strings.TrimPrefix(p.name, "$"), p.v)
		}
		whats = append(whats, w.what)
	}
	yql, err := hoistDeclares(b.String())
	if err != nil {
		return "", nil, "", apperr.Wrap(apperr.Internal, err, "ydbstore: join %s", strings.Join(whats, "; "))
	}
	return yql, all, strings.Join(whats, "; "), nil
}

var reDeclareLine = regexp.MustCompile(`^DECLARE\s+(\$\w+)\s+AS\s+(.+?);?$`)

// hoistDeclares moves every DECLARE line of yql to its start, in order of
// appearance, each name once: YQL refuses a DECLARE after the first
// statement of the body (a SELECT, a named expression, a write;
// yql/essentials/sql/v1/sql_query.cpp in ydb-platform/ydb, "DECLARE
// statement should be in beginning of query"). A name declared twice with
// two types is an error. The other lines keep their order.
func hoistDeclares(yql string) (string, error) {
	var d, b strings.Builder
	types := map[string]string{}
	for _, line := range strings.Split(yql, "\n") {
		m := reDeclareLine.FindStringSubmatch(strings.TrimSpace(line))
		if m == nil {
			b.WriteString(line + "\n")
			continue
		}
		typ := strings.Join(strings.Fields(m[2]), "")
		if prev, dup := types[m[1]]; dup {
			if prev != typ {
				return "", fmt.Errorf("%s declared as %s and as %s", m[1], prev, typ)
			}
			continue
		}
		types[m[1]] = typ
		d.WriteString(strings.TrimSpace(line) + "\n")
	}
	return d.String() + strings.TrimLeft(b.String(), "\n"), nil
}

var reTables = regexp.MustCompile(`(?i)\b(?:FROM|INTO|UPDATE)\s+` + "`?" + `([A-Za-z_][A-Za-z0-9_]*)`)

// tablesOf lists the tables a statement names after FROM, INTO or UPDATE.
func tablesOf(yql string) []string {
	var out []string
	for _, m := range reTables.FindAllStringSubmatch(yql, -1) {
		if !strings.EqualFold(m[1], "AS_TABLE") {
			out = append(out, m[1])
		}
	}
	return out
}

// optimisticMiss reports whether a flush failed on a deferred precondition:
// PRECONDITION_FAILED with issue 2012, or the guard's Ensure message (our
// own marker, the only message text ever matched).
func optimisticMiss(err error) bool {
	if ydb.IsOperationError(err, Ydb.StatusIds_PRECONDITION_FAILED) && hasIssue(err, issueConstraintViolation) {
		return true
	}
	found := false
	ydb.IterateByIssues(err, func(message string, _ Ydb.StatusIds_StatusCode, _ uint32) {
		if strings.Contains(message, guardMarker) {
			found = true
		}
	})
	return found || strings.Contains(err.Error(), guardMarker)
}
