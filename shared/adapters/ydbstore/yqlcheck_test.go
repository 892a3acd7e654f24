package ydbstore

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// The statement check: what the YQL translator and the schema would refuse
// in a text the adapter sends, for the subset of YQL the adapter writes.
//
// The rules (ydb-platform/ydb, yql/essentials/sql/v1):
//   - sql_query.cpp, TSqlQuery::Statement: SELECT, a named expression
//     ($x = ...), INSERT/UPSERT/REPLACE INTO, UPDATE, DELETE, COMMIT and
//     the DDL statements call Ctx.BodyPart(); PRAGMA, USE, DECLARE, IMPORT
//     and EXPORT do not. DeclareStatement refuses a DECLARE once
//     !Ctx.IsParseHeading() ("DECLARE statement should be in beginning of
//     query, but it's possible to use PRAGMA or USE before it"; context.h:
//     BodyPart() clears IntoHeading). A duplicate DECLARE is only a warning
//     there (YQL_DUPLICATE_DECLARE); here it is an error, one name one type.
//   - a parameter the query uses must be declared (or be a named
//     expression defined before it); one declared must be bound by the
//     caller with exactly the declared type (the server checks the bound
//     value's type against the DECLARE).
//
// And the schema (schemaTables: every migration applied in order): tables,
// VIEW indexes and columns exist; a parameter compared with, or written
// to, a column has the column's type (Optional<T> allowed only where the
// column may be NULL); a LIMITed VIEW branch sorts by the index's columns.

// yqlStmt is one statement of a query text: its kind and its text with
// comments removed.
type yqlStmt struct {
	kind string // PRAGMA, USE, DECLARE, NAMED ($x = ...), or the leading keyword
	text string
}

// splitYQL removes comments and splits text into statements at the
// semicolons that lie outside string literals and quoted identifiers.
func splitYQL(text string) []yqlStmt {
	var stmts []yqlStmt
	var cur strings.Builder
	flush := func() {
		s := strings.TrimSpace(cur.String())
		cur.Reset()
		if s == "" {
			return
		}
		kind := strings.ToUpper(strings.Fields(s)[0])
		if strings.HasPrefix(s, "$") && reNamedHead.MatchString(s) {
			kind = "NAMED"
		}
		stmts = append(stmts, yqlStmt{kind: kind, text: s})
	}
	for i := 0; i < len(text); i++ {
		c := text[i]
		switch {
		case c == '-' && i+1 < len(text) && text[i+1] == '-':
			for i < len(text) && text[i] != '\n' {
				i++
			}
			cur.WriteByte('\n')
		case c == '/' && i+1 < len(text) && text[i+1] == '*':
			end := strings.Index(text[i+2:], "*/")
			if end < 0 {
				i = len(text)
			} else {
				i += end + 3
			}
			cur.WriteByte(' ')
		case c == '"' || c == '\'' || c == '`':
			j := i + 1
			for j < len(text) && text[j] != c {
				if text[j] == '\\' {
					j++
				}
				j++
			}
			cur.WriteString(text[i:min(j+1, len(text))])
			i = j
		case c == ';':
			flush()
		default:
			cur.WriteByte(c)
		}
	}
	flush()
	return stmts
}

var (
	reNamedHead   = regexp.MustCompile(`^\$\w+\s*=`)
	reDeclareStmt = regexp.MustCompile(`(?s)^DECLARE\s+(\$\w+)\s+AS\s+(.+)$`)
	reParamUse    = regexp.MustCompile(`\$\w+`)
	reTableName   = regexp.MustCompile("(?:^|[^$\\w])(?:FROM|INTO|UPDATE|JOIN)\\s+`?(\\w+)`?(\\s*\\()?(?:\\s+VIEW\\s+(\\w+))?")
	reCompare     = regexp.MustCompile("(?:^|[^$\\w.])(?:(\\w+)\\.)?`?([a-z_]\\w*)`?\\s*(=|<=|>=|<>|!=|<|>|\\bIN\\b)\\s*(\\$\\w+)")
	reParamAs     = regexp.MustCompile("(\\$\\w+)\\s+AS\\s+`?(\\w+)`?")
	reWriteTarget = regexp.MustCompile("(?i)^(?:INSERT\\s+INTO|UPSERT\\s+INTO|REPLACE\\s+INTO|UPDATE|DELETE\\s+FROM)\\s+`?(\\w+)`?")
	reValues      = regexp.MustCompile(`(?s)^(?:INSERT|UPSERT|REPLACE)\s+INTO\s+(\w+)\s*\(([^)]*)\)\s*VALUES\s*\((.*)\)\s*$`)
	reAsTable     = regexp.MustCompile(`AS_TABLE\((\$\w+)\)`)
	reStructField = regexp.MustCompile(`'(\w+)':(\w+(?:<[^<>]*>)?)`)
)

// checkYQL returns what a server (translator and schema) would refuse in
// text. bound are the parameters the caller binds, name → YQL type as
// the SDK writes it; nil skips the binding rule (a text checked before any
// caller binds it).
func checkYQL(text string, bound map[string]string, tables map[string]table) []string {
	var issues []string
	bad := func(format string, a ...any) { issues = append(issues, fmt.Sprintf(format, a...)) }
	stmts := splitYQL(text)
	declared := map[string]string{}
	named := map[string]bool{}
	used := map[string]bool{}
	inBody := false
	for i, st := range stmts {
		switch st.kind {
		case "PRAGMA", "USE":
			continue
		case "DECLARE":
			m := reDeclareStmt.FindStringSubmatch(st.text)
			if m == nil {
				bad("statement %d: cannot read %q", i+1, st.text)
				continue
			}
			typ := strings.Join(strings.Fields(m[2]), "")
			if inBody {
				bad("DECLARE %s after the body: the translator refuses a DECLARE after a body statement", m[1])
			}
			if prev, dup := declared[m[1]]; dup {
				if prev != typ {
					bad("%s declared twice, as %s and %s", m[1], prev, typ)
				} else {
					bad("%s declared twice", m[1])
				}
			}
			declared[m[1]] = typ
			continue
		}
		inBody = true
		body := st.text
		if st.kind == "NAMED" {
			eq := strings.Index(body, "=")
			name := strings.TrimSpace(body[:eq])
			body = body[eq+1:]
			for _, p := range reParamUse.FindAllString(body, -1) {
				checkUse(p, declared, named, used, bad)
			}
			named[name] = true
		} else {
			for _, p := range reParamUse.FindAllString(body, -1) {
				checkUse(p, declared, named, used, bad)
			}
		}
		checkSchema(st.text, declared, tables, bad)
	}
	checkBranches(text, tables, bad)
	for p := range declared {
		if !used[p] {
			bad("%s is declared but not used", p)
		}
	}
	if bound != nil {
		for p, typ := range declared {
			switch got, ok := bound[p]; {
			case !ok:
				bad("%s is declared %s but not bound", p, typ)
			case sdkType(got) != typ:
				bad("%s is declared %s but bound as %s", p, typ, got)
			}
		}
		for p, typ := range bound {
			if _, ok := declared[p]; !ok {
				bad("%s (%s) is bound but not declared", p, typ)
			}
		}
	}
	sort.Strings(issues)
	return issues
}

func checkUse(p string, declared map[string]string, named, used map[string]bool, bad func(string, ...any)) {
	used[p] = true
	if _, ok := declared[p]; !ok && !named[p] {
		bad("%s is used but neither declared nor defined before", p)
	}
}

// sdkType writes a type as declared types are normalised here (no spaces).
func sdkType(t string) string { return strings.Join(strings.Fields(t), "") }

// checkBranches: every LIMITed read of an index sorts by index columns only
// (the index's own, then the primary key it carries), and fixes every index
// column before the first sorted one by an equality or IS NULL (or IN a
// list: point prefixes), so the branch is a key range read in index order
// that stops after LIMIT rows. No query has an optional "$x IS NULL OR"
// filter or an ORDER BY expression. It returns the number of branches.
func checkBranches(yql string, tables map[string]table, bad func(string, ...any)) int {
	if reOptOr.MatchString(yql) || reOrderBy.MatchString(yql) {
		bad("optional filter or ORDER BY expression")
	}
	n := 0
	for _, m := range reBranch.FindAllStringSubmatch(yql, -1) {
		n++
		tb := tables[m[1]]
		cols := append(append([]string{}, tb.indexes[m[2]]...), tb.pk...)
		fixed := map[string]bool{}
		for _, part := range reAnd.Split(m[3], -1) {
			if em := reEqPart.FindStringSubmatch(strings.TrimSpace(part)); em != nil {
				fixed[em[1]] = true
			}
		}
		var order []string
		for _, item := range splitTop(m[4]) {
			order = append(order, strings.Trim(strings.TrimSuffix(item, " DESC"), "`"))
		}
		start := slicesIndex(cols, order[0])
		if start < 0 {
			bad("ORDER BY %s is not a column of %s or the key", order[0], m[2])
			continue
		}
		for _, c := range cols[:start] {
			if !fixed[c] {
				bad("%s sorts by %s but does not fix %s", m[2], order[0], c)
			}
		}
		for i, c := range order {
			if start+i >= len(cols) || cols[start+i] != c {
				bad("ORDER BY %v is not in %s's column order %v", order, m[2], cols)
				break
			}
		}
	}
	return n
}

// checkSchema checks one body statement against the schema.
func checkSchema(stmt string, declared map[string]string, tables map[string]table, bad func(string, ...any)) {
	var stmtTables []string
	aliases := map[string]string{}
	for _, m := range reTableName.FindAllStringSubmatch(stmt, -1) {
		name := m[1]
		if strings.EqualFold(name, "AS_TABLE") && m[2] != "" {
			continue
		}
		tb, ok := tables[name]
		if !ok {
			bad("unknown table %s", name)
			continue
		}
		stmtTables = append(stmtTables, name)
		if m[3] != "" {
			if _, ok := tb.indexes[m[3]]; !ok {
				bad("table %s has no index %s", name, m[3])
			}
		}
	}
	for _, m := range regexp.MustCompile(`\b(\w+)\s+AS\s+(\w+)\b`).FindAllStringSubmatch(stmt, -1) {
		if _, ok := tables[m[1]]; ok {
			aliases[m[2]] = m[1]
		}
	}
	colType := func(qual, col string) (string, string, bool) {
		if qual != "" {
			if tn, ok := aliases[qual]; ok {
				c, ok := tables[tn].columns[col]
				return tn, c, ok
			}
			if _, ok := tables[qual]; ok {
				c, ok := tables[qual].columns[col]
				return qual, c, ok
			}
		}
		for _, tn := range stmtTables {
			if c, ok := tables[tn].columns[col]; ok {
				return tn, c, true
			}
		}
		return "", "", false
	}
	// value types of the parameters compared with a column
	for _, m := range reCompare.FindAllStringSubmatch(stmt, -1) {
		qual, col, op, p := m[1], m[2], m[3], m[4]
		typ, ok := declared[p]
		if !ok || len(stmtTables) == 0 {
			continue
		}
		tn, ctype, ok := colType(qual, col)
		if !ok {
			if qual == "" || aliases[qual] != "" {
				bad("%s %s %s: no column %s in %v", col, op, p, col, stmtTables)
			}
			continue
		}
		vt := typ
		if strings.EqualFold(op, "IN") {
			inner, ok := unwrap(vt, "List")
			if !ok {
				bad("%s IN %s: %s is %s, not a List", col, p, p, typ)
				continue
			}
			vt = inner
		}
		if inner, ok := unwrap(vt, "Optional"); ok {
			vt = inner
		}
		if vt != ctype {
			bad("%s.%s (%s) compared with %s (%s)", tn, col, ctype, p, typ)
		}
	}
	target := ""
	if m := reWriteTarget.FindStringSubmatch(stmt); m != nil {
		target = m[1]
	}
	tb, ok := tables[target]
	if !ok {
		return
	}
	write := func(col, p, typ string) {
		ctype, ok := tb.columns[col]
		if !ok {
			bad("%s has no column %s (written from %s)", target, col, p)
			return
		}
		vt := typ
		if inner, ok := unwrap(vt, "Optional"); ok {
			if tb.notNull[col] {
				bad("%s.%s is NOT NULL, written from %s (%s)", target, col, p, typ)
			}
			vt = inner
		}
		if vt != ctype {
			bad("%s.%s (%s) written from %s (%s)", target, col, ctype, p, typ)
		}
	}
	for _, m := range reParamAs.FindAllStringSubmatch(stmt, -1) {
		if typ, ok := declared[m[1]]; ok {
			write(m[2], m[1], typ)
		}
	}
	if m := reValues.FindStringSubmatch(stmt); m != nil {
		cols, vals := names(m[2]), splitTop(m[3])
		if len(cols) != len(vals) {
			bad("%s: %d columns, %d values", target, len(cols), len(vals))
		}
		for i := range min(len(cols), len(vals)) {
			if typ, ok := declared[vals[i]]; ok {
				write(cols[i], vals[i], typ)
			}
		}
	}
	for _, m := range reAsTable.FindAllStringSubmatch(stmt, -1) {
		typ, ok := declared[m[1]]
		if !ok {
			continue
		}
		for _, f := range reStructField.FindAllStringSubmatch(typ, -1) {
			if _, isCol := tb.columns[f[1]]; isCol {
				write(f[1], m[1]+"."+f[1], f[2])
			}
		}
	}
}

// unwrap returns T of wrapper<T>.
func unwrap(t, wrapper string) (string, bool) {
	if strings.HasPrefix(t, wrapper+"<") && strings.HasSuffix(t, ">") {
		return t[len(wrapper)+1 : len(t)-1], true
	}
	return t, false
}
