package ydbstore

import (
	"strconv"
	"strings"

	"ordersaga/shared/domain/store/bucket"
)

// bucketCond stands for the bucket condition in a branch template:
// bucketed replaces it by "bucket = <b>l" for every bucket and by
// "bucket IS NULL" (schema/ydb/0013_buckets.sql).
const bucketCond = "{bucket}"

// bucketConds are the conditions bucketCond is replaced by, in order: an
// Int64 literal per bucket (the "l" suffix: ydb/docs/en/core/yql/reference/
// syntax/lexer.md, "Numeric literals"), each the leading key column of a
// bucketed index, so every branch is a key range of its own; and the NULL
// bucket, a point prefix holding the rows written before the column
// existed (and any a writer older than migration 0013 still writes).
func bucketConds() []string {
	out := make([]string, 0, bucket.N+1)
	for b := range bucket.N {
		out = append(out, "bucket = "+strconv.Itoa(b)+"l")
	}
	return append(out, "bucket IS NULL")
}

// bucketed builds one query from declares and branch templates: each
// template, with bucketCond replaced by each of bucketConds, becomes a
// named subquery $b<i> = <branch>; and the query returns their UNION ALL.
// The templates are fixed strings, so the result is too: it is built once
// per query at package initialisation (builtQueries lists every one, and
// the package's tests check each like a yql const).
func bucketed(declares string, templates []string) string {
	var b strings.Builder
	b.WriteString(declares)
	var names []string
	for _, cond := range bucketConds() {
		for _, tpl := range templates {
			name := "$b" + strconv.Itoa(len(names))
			names = append(names, name)
			b.WriteString(name + " = " + strings.ReplaceAll(tpl, bucketCond, cond) + ";\n")
		}
	}
	for i, name := range names {
		if i > 0 {
			b.WriteString(" UNION ALL ")
		}
		b.WriteString("SELECT * FROM " + name)
	}
	b.WriteString(";")
	return b.String()
}
