package ydbstore

import (
	"context"
	"time"

	"github.com/ydb-platform/ydb-go-sdk/v3"
	"github.com/ydb-platform/ydb-go-sdk/v3/query"

	"ordersaga/shared/apperr"
)

// Table schema_migrations: one row per applied migration. It is created by
// Migrate itself (not by a migration file), so the runner can record the
// first migration.
const (
	yqlCreateMigrationsTable = `CREATE TABLE IF NOT EXISTS schema_migrations (
    version    Int64 NOT NULL,
    name       Utf8,
    applied_at Timestamp,
    PRIMARY KEY (version)
);`

	yqlListMigrations = `
SELECT version, name, applied_at FROM schema_migrations;`

	yqlRecordMigration = `
DECLARE $version AS Int64;
DECLARE $name AS Utf8;
DECLARE $applied_at AS Timestamp;
UPSERT INTO schema_migrations (version, name, applied_at)
VALUES ($version, $name, $applied_at);`
)

// MigrateOptions configure Migrate.
type MigrateOptions struct {
	// DryRun reports what would run and changes nothing (it does not even
	// create schema_migrations).
	DryRun bool
	// Log, if set, receives one line per migration and statement.
	Log func(format string, args ...any)
}

// Migrate applies, in version order, every migration of ms whose version is
// not recorded in schema_migrations, each statement as its own scheme query,
// and records the version after the last statement succeeded. It returns
// the migrations it applied (with DryRun: would apply). Running it again is
// a no-op; the migrations themselves use CREATE TABLE IF NOT EXISTS, so a
// migration interrupted half way is completed by the next run.
//
// Errors: Transient when YDB is unavailable (nothing after the failing
// statement ran; run again), Internal for a rejected statement (named in
// the error). Not safe to run concurrently with itself against one
// database (scheme operations are not transactional); run it from one place.
func (s *Store) Migrate(ctx context.Context, ms []Migration, opts MigrateOptions) ([]Migration, error) {
	logf := opts.Log
	if logf == nil {
		logf = func(string, ...any) {}
	}
	done, err := s.appliedMigrations(ctx)
	if err != nil {
		return nil, err
	}
	var pending []Migration
	for _, m := range ms {
		if at, ok := done[m.Version]; ok {
			logf("applied   %s (at %s)", m.Name, at.Format(time.RFC3339))
			continue
		}
		pending = append(pending, m)
	}
	if opts.DryRun {
		for _, m := range pending {
			logf("would run %s (%d statements)", m.Name, len(m.Statements))
			for _, st := range m.Statements {
				logf("%s\n", st)
			}
		}
		return pending, nil
	}
	if len(pending) > 0 {
		if err := s.execScheme(ctx, yqlCreateMigrationsTable); err != nil {
			return nil, apperr.Wrap(apperr.KindOf(err), err, "ydbstore: create schema_migrations")
		}
	}
	var applied []Migration
	for _, m := range pending {
		logf("running   %s", m.Name)
		for i, st := range m.Statements {
			if err := s.execScheme(ctx, st); err != nil {
				return applied, apperr.Wrap(apperr.KindOf(err), err, "ydbstore: migration %s, statement %d", m.Name, i+1)
			}
		}
		if err := s.recordMigration(ctx, m); err != nil {
			return applied, err
		}
		applied = append(applied, m)
	}
	logf("%d migration(s) applied", len(applied))
	return applied, nil
}

// appliedMigrations returns the recorded versions and when they were
// applied; none if schema_migrations does not exist yet (SCHEME_ERROR).
func (s *Store) appliedMigrations(ctx context.Context) (map[int64]time.Time, error) {
	out := make(map[int64]time.Time)
	err := s.db.Query().Do(ctx, func(ctx context.Context, sess query.Session) error {
		clear(out)
		rs, err := sess.QueryResultSet(ctx, yqlListMigrations,
			query.WithTxControl(query.SnapshotReadOnlyTxControl()))
		if err != nil {
			return err
		}
		defer rs.Close(ctx)
		for r, err := range rs.Rows(ctx) {
			if err != nil {
				return err
			}
			var (
				v  int64
				at *time.Time
			)
			if err := r.ScanNamed(query.Named("version", &v), query.Named("applied_at", &at)); err != nil {
				return err
			}
			out[v] = fromTS(at)
		}
		return nil
	}, query.WithIdempotent())
	if ydb.IsOperationErrorSchemeError(err) {
		return map[int64]time.Time{}, nil
	}
	if err != nil {
		return nil, classify(ctx, err, "ydbstore: read schema_migrations")
	}
	return out, nil
}

// execScheme runs one scheme statement outside any transaction (YDB runs
// DDL non-transactionally). Not marked idempotent: only statuses that mean
// "not executed" (OVERLOADED, UNAVAILABLE, ...) are retried by the SDK.
func (s *Store) execScheme(ctx context.Context, stmt string) error {
	err := s.db.Query().Do(ctx, func(ctx context.Context, sess query.Session) error {
		return sess.Exec(ctx, stmt)
	})
	return classify(ctx, err, "ydbstore: scheme query")
}

// recordMigration stores m's version with the store's clock.
func (s *Store) recordMigration(ctx context.Context, m Migration) error {
	p, err := migrationParams(m, s.cfg.Now()).build()
	if err != nil {
		return err
	}
	err = s.db.Query().DoTx(ctx, func(ctx context.Context, tx query.TxActor) error {
		return tx.Exec(ctx, yqlRecordMigration, query.WithParameters(p))
	}, query.WithIdempotent())
	return classify(ctx, err, "ydbstore: record migration %s", m.Name)
}

// migrationParams binds yqlRecordMigration.
func migrationParams(m Migration, appliedAt time.Time) *paramList {
	return newParams().int("$version", m.Version).text("$name", m.Name).ts("$applied_at", appliedAt)
}
