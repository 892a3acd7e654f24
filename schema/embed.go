// Package schema holds the database schemas of ordersaga as data: the SQLite
// migrations (applied by package sqlitestore when it opens a database) and
// the YDB schema twin.
package schema

import "embed"

// SQLite holds the SQLite migrations, sqlite/NNNN_name.sql, applied in
// lexical (= numeric) order, each in its own transaction.
//
//go:embed sqlite/*.sql
var SQLite embed.FS
