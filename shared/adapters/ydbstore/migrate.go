package ydbstore

import (
	"context"
	"time"

	"github.com/ydb-platform/ydb-go-sdk/v3"
	"github.com/ydb-platform/ydb-go-sdk/v3/query"

	"ordersaga/shared/domain/apperr"
)

// Table schema_migrations: one row per applied migration. Table
// schema_migration_statements: one row per statement of a migration not
// yet recorded as applied, written right after the statement succeeded, so
// a run interrupted inside a migration resumes after its last applied
// statement (YDB refuses an ADD COLUMN or ADD INDEX that already happened;
// scheme statements are not transactional). Both are created by Migrate
// itself (not by a migration file), so the runner can record the first
// migration.
const (
	yqlCreateMigrationsTable = `CREATE TABLE IF NOT EXISTS schema_migrations (
    version    Int64 NOT NULL,
    name       Utf8,
    applied_at Timestamp,
    PRIMARY KEY (version)
);`

	yqlCreateMigrationStatementsTable = `CREATE TABLE IF NOT EXISTS schema_migration_statements (
    version    Int64 NOT NULL,
    statement  Int64 NOT NULL,
    applied_at Timestamp,
    PRIMARY KEY (version, statement)
);`

	yqlListMigrationStatements = `
SELECT version, statement FROM schema_migration_statements;`

	yqlRecordMigrationStatement = `
DECLARE $version AS Int64;
DECLARE $statement AS Int64;
DECLARE $applied_at AS Timestamp;
UPSERT INTO schema_migration_statements (version, statement, applied_at)
VALUES ($version, $statement, $applied_at);`

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
// not recorded in schema_migrations, each statement as its own scheme query
// recorded in schema_migration_statements once it succeeded, and records
// the version after the last statement. It returns the migrations it
// applied (with DryRun: would apply). Running it again is a no-op; a run
// interrupted inside a migration resumes at the first statement not
// recorded (a statement interrupted between its success and its record is
// the one case sent again: CREATE TABLE IF NOT EXISTS absorbs it, an ALTER
// fails and names itself, and is then recorded by hand).
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
	stmtDone, err := s.appliedStatements(ctx)
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
			for i, st := range m.Statements {
				if stmtDone[m.Version][int64(i+1)] {
					logf("applied   statement %d", i+1)
					continue
				}
				logf("%s\n", st)
			}
		}
		return pending, nil
	}
	if len(pending) > 0 {
		for _, st := range []string{yqlCreateMigrationsTable, yqlCreateMigrationStatementsTable} {
			if err := s.execScheme(ctx, st); err != nil {
				return nil, apperr.Wrap(apperr.KindOf(err), err, "ydbstore: create the migration tables")
			}
		}
	}
	var applied []Migration
	for _, m := range pending {
		logf("running   %s", m.Name)
		for i, st := range m.Statements {
			if stmtDone[m.Version][int64(i+1)] {
				logf("applied   %s statement %d", m.Name, i+1)
				continue
			}
			if err := s.execScheme(ctx, st); err != nil {
				return applied, apperr.Wrap(apperr.KindOf(err), err, "ydbstore: migration %s, statement %d", m.Name, i+1)
			}
			if err := s.record(ctx, yqlRecordMigrationStatement, statementParams(m, int64(i+1), s.cfg.Now())); err != nil {
				return applied, apperr.Wrap(apperr.KindOf(err), err, "ydbstore: record migration %s statement %d", m.Name, i+1)
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

// appliedStatements returns the recorded statements (1-based) by version;
// none if schema_migration_statements does not exist yet.
func (s *Store) appliedStatements(ctx context.Context) (map[int64]map[int64]bool, error) {
	out := make(map[int64]map[int64]bool)
	err := s.db.Query().Do(ctx, func(ctx context.Context, sess query.Session) error {
		clear(out)
		rs, err := sess.QueryResultSet(ctx, yqlListMigrationStatements,
			query.WithTxControl(query.SnapshotReadOnlyTxControl()))
		if err != nil {
			return err
		}
		defer rs.Close(ctx)
		for r, err := range rs.Rows(ctx) {
			if err != nil {
				return err
			}
			var v, n int64
			if err := r.ScanNamed(query.Named("version", &v), query.Named("statement", &n)); err != nil {
				return err
			}
			if out[v] == nil {
				out[v] = map[int64]bool{}
			}
			out[v][n] = true
		}
		return nil
	}, query.WithIdempotent())
	if ydb.IsOperationErrorSchemeError(err) {
		return map[int64]map[int64]bool{}, nil
	}
	if err != nil {
		return nil, classify(ctx, err, "ydbstore: read schema_migration_statements")
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
	return s.record(ctx, yqlRecordMigration, migrationParams(m, s.cfg.Now()))
}

// record runs one UPSERT of the migration tables in its own transaction.
func (s *Store) record(ctx context.Context, yql string, ps *paramList) error {
	p, err := ps.build()
	if err != nil {
		return err
	}
	err = s.db.Query().DoTx(ctx, func(ctx context.Context, tx query.TxActor) error {
		return tx.Exec(ctx, yql, query.WithParameters(p))
	}, query.WithIdempotent())
	return classify(ctx, err, "ydbstore: record migration progress")
}

// statementParams binds yqlRecordMigrationStatement.
func statementParams(m Migration, statement int64, appliedAt time.Time) *paramList {
	return newParams().int("$version", m.Version).int("$statement", statement).ts("$applied_at", appliedAt)
}

// migrationParams binds yqlRecordMigration.
func migrationParams(m Migration, appliedAt time.Time) *paramList {
	return newParams().int("$version", m.Version).text("$name", m.Name).ts("$applied_at", appliedAt)
}
