package localwiring

import (
	"context"
	"database/sql"
	"io/fs"
	"strconv"
	"strings"
	"time"

	"ordersaga/schema"
	"ordersaga/shared/adapters/sqlitestore"
	"ordersaga/shared/app/selfcheck"
	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/store"
)

// Probe returns the self-check's database probe for a store OpenStore
// opened: SQLite's clock (the machine's own, so the skew measures the
// round trip) and its schema_migrations against the embedded migrations.
// A store of another kind gets nil (the self-check reports it).
func Probe(st store.Store) selfcheck.Database {
	s, ok := st.(*sqlitestore.Store)
	if !ok {
		return nil
	}
	return sqliteProbe{db: s.DB()}
}

type sqliteProbe struct{ db *sql.DB }

var _ selfcheck.Database = sqliteProbe{}

// ServerTime implements selfcheck.Database.
func (p sqliteProbe) ServerTime(ctx context.Context) (time.Time, error) {
	var s string
	if err := p.db.QueryRowContext(ctx, `SELECT strftime('%Y-%m-%dT%H:%M:%fZ', 'now')`).Scan(&s); err != nil {
		return time.Time{}, apperr.Wrap(apperr.Transient, err, "selfcheck: read the SQLite clock")
	}
	t, err := time.Parse("2006-01-02T15:04:05.999Z", s)
	if err != nil {
		return time.Time{}, apperr.Wrap(apperr.Internal, err, "selfcheck: parse the SQLite clock %q", s)
	}
	return t, nil
}

// Schema implements selfcheck.Database.
func (p sqliteProbe) Schema(ctx context.Context) (selfcheck.Schema, error) {
	rows, err := p.db.QueryContext(ctx, `SELECT version FROM schema_migrations`)
	if err != nil {
		return selfcheck.Schema{}, apperr.Wrap(apperr.Transient, err, "selfcheck: read schema_migrations")
	}
	defer rows.Close()
	applied := map[int64]bool{}
	for rows.Next() {
		var v int64
		if err := rows.Scan(&v); err != nil {
			return selfcheck.Schema{}, apperr.Wrap(apperr.Internal, err, "selfcheck: scan schema_migrations")
		}
		applied[v] = true
	}
	if err := rows.Err(); err != nil {
		return selfcheck.Schema{}, apperr.Wrap(apperr.Transient, err, "selfcheck: read schema_migrations")
	}
	entries, err := fs.ReadDir(schema.SQLite, "sqlite")
	if err != nil {
		return selfcheck.Schema{}, apperr.Wrap(apperr.Internal, err, "selfcheck: list the embedded migrations")
	}
	var s selfcheck.Schema
	for _, e := range entries {
		num, _, _ := strings.Cut(e.Name(), "_")
		v, err := strconv.ParseInt(num, 10, 64)
		if err != nil || !strings.HasSuffix(e.Name(), ".sql") {
			continue
		}
		if !applied[v] {
			s.Pending = append(s.Pending, e.Name())
			continue
		}
		s.Applied++
		s.Latest = max(s.Latest, v)
	}
	return s, nil
}
