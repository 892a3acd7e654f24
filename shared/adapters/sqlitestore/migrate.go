package sqlitestore

import (
	"context"
	"database/sql"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"

	"ordersaga/shared/domain/apperr"
)

const (
	sqlCreateMigrations = `CREATE TABLE IF NOT EXISTS schema_migrations (
		version    INTEGER NOT NULL PRIMARY KEY,
		name       TEXT    NOT NULL,
		applied_at INTEGER NOT NULL
	) STRICT`
	sqlMigrationApplied = `SELECT COUNT(*) FROM schema_migrations WHERE version = ?`
	sqlRecordMigration  = `INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)`
)

// migration is one NNNN_name.sql file.
type migration struct {
	version int
	name    string // file name
}

// migrate applies, in version order, every migration in fsys's directory dir
// that schema_migrations does not list. Each runs in its own (immediate)
// transaction together with its schema_migrations row, so a failed migration
// leaves no trace and a concurrent Open of the same file applies it once.
func migrate(ctx context.Context, db *sql.DB, fsys fs.FS, dir string, now func() time.Time) error {
	if _, err := db.ExecContext(ctx, sqlCreateMigrations); err != nil {
		return classify(ctx, err, "sqlitestore: create schema_migrations")
	}
	ms, err := listMigrations(fsys, dir)
	if err != nil {
		return err
	}
	for _, m := range ms {
		body, err := fs.ReadFile(fsys, path.Join(dir, m.name))
		if err != nil {
			return apperr.Wrap(apperr.Internal, err, "sqlitestore: read migration %s", m.name)
		}
		if err := applyMigration(ctx, db, m, string(body), now); err != nil {
			return err
		}
	}
	return nil
}

// listMigrations returns the *.sql files of dir sorted by version. A name
// without a numeric NNNN_ prefix, or two files with one version, is an error.
func listMigrations(fsys fs.FS, dir string) ([]migration, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, apperr.Wrap(apperr.Internal, err, "sqlitestore: list migrations")
	}
	seen := make(map[int]string)
	var ms []migration
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".sql") {
			continue
		}
		num, _, ok := strings.Cut(e.Name(), "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v <= 0 {
			return nil, apperr.New(apperr.Internal, "sqlitestore: migration %s is not named NNNN_name.sql", e.Name())
		}
		if prev, dup := seen[v]; dup {
			return nil, apperr.New(apperr.Internal, "sqlitestore: migrations %s and %s share version %d", prev, e.Name(), v)
		}
		seen[v] = e.Name()
		ms = append(ms, migration{version: v, name: e.Name()})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].version < ms[j].version })
	return ms, nil
}

func applyMigration(ctx context.Context, db *sql.DB, m migration, body string, now func() time.Time) error {
	fail := func(err error) error {
		return apperr.Wrap(apperr.Internal, err, "sqlitestore: migration %s failed and was rolled back", m.name)
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fail(err)
	}
	defer tx.Rollback() //nolint:errcheck // a no-op after Commit
	var applied int
	if err := tx.QueryRowContext(ctx, sqlMigrationApplied, m.version).Scan(&applied); err != nil {
		return fail(err)
	}
	if applied > 0 {
		return nil
	}
	if _, err := tx.ExecContext(ctx, body); err != nil {
		return fail(err)
	}
	if _, err := tx.ExecContext(ctx, sqlRecordMigration, m.version, m.name, tm(now())); err != nil {
		return fail(err)
	}
	if err := tx.Commit(); err != nil {
		return fail(err)
	}
	return nil
}
