// Package ydbschema holds the YDB schema of ordersaga as data: YQL
// migrations NNNN_name.sql, applied in numeric order, each once, by
// ydbstore.Migrate (through scripts/migrate or the YDB conformance test).
//
// The tables mirror the SQLite twin in schema/sqlite column for column
// (same names, same meaning); the differences are types (Utf8, Int64,
// Timestamp, Json, String), NULL standing for Go's zero time, TTLs and
// global secondary indexes. See shared/adapters/ydbstore/README.md.
package ydbschema

import "embed"

// FS holds the migrations, NNNN_name.sql at its root.
//
//go:embed *.sql
var FS embed.FS
