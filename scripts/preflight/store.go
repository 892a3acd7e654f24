package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"ordersaga/schema/ydb"
	"ordersaga/shared/adapters/sqlitestore"
	"ordersaga/shared/adapters/ydbstore"
	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/store"
)

// probeRead opens a read-only session and reads one key no order has.
func probeRead(ctx context.Context, st store.Store) line {
	err := st.View(ctx, func(ctx context.Context, tx store.Tx) error {
		_, err := tx.GetOrder(ctx, "preflight-no-such-order")
		return err
	})
	if apperr.Is(err, apperr.NotFound) {
		return ok("a snapshot read-only session read one key of orders (absent, as expected)")
	}
	if err == nil {
		return ok("a snapshot read-only session read one key of orders")
	}
	return bad("the tables may be missing (deploy.sh migrates before the apply) or the token lacks ydb.viewer on the database", "read: %v", err)
}

// probeYDB checks the deployed database with the deployer's token, and,
// with a scratch database, migrates it and runs the store conformance suite.
func probeYDB(ctx context.Context, r *report, o options) {
	var st *ydbstore.Store
	l := r.check("ydb.connect", func() line {
		if o.dsn == "" {
			return line{Verdict: skip, Detail: "no database yet (YDB_CONNECTION_STRING / -dsn empty): scripts/deploy.sh creates it before the migrations; once it exists, scripts/deploy.sh --preflight checks it with your token"}
		}
		var err error
		st, err = openYDB(ctx, o, o.dsn)
		if err != nil {
			return bad("check the endpoint (terraform output -raw ydb_endpoint) and the token (YDB_TOKEN=$(yc iam create-token)); the functions use YDB_AUTH=metadata, proven by their self-check after the apply",
				"open %s with auth %s: %v", o.dsn, o.ydbAuth, err)
		}
		return ok("connected and discovered endpoints with auth %s (the functions use metadata: their self-check proves it)", o.ydbAuth)
	})
	if st != nil {
		defer st.Close()
		r.check("ydb.schema", func() line {
			ms, err := ydbstore.LoadMigrations(ydbschema.FS)
			if err != nil {
				return bad("a broken migration file: go test ./shared/adapters/ydbstore/", "%v", err)
			}
			pending, err := st.Migrate(ctx, ms, ydbstore.MigrateOptions{DryRun: true})
			if err != nil {
				return bad("the token needs ydb.viewer (ydb.editor to migrate)", "read schema_migrations: %v", err)
			}
			if len(pending) > 0 {
				return ok("%d of %d migrations pending (the deploy's migrate step applies them before the functions change)", len(pending), len(ms))
			}
			return ok("all %d migrations applied", len(ms))
		})
		r.check("ydb.read", func() line { return probeRead(ctx, st) })
	} else if l.Verdict == fail {
		return
	}
	if o.scratchDSN != "" && o.scratchDSN != o.dsn {
		l := r.check("ydb.scratch-migrate", func() line { return migrateScratch(ctx, o) })
		if l.Verdict != pass {
			return
		}
		r.check("ydb.request-units", func() line {
			st, err := openYDB(ctx, o, o.scratchDSN)
			if err != nil {
				return bad("check -scratch-dsn and the token", "open the scratch database: %v", err)
			}
			defer st.Close()
			return measureUnits(ctx, st)
		})
	}
	r.check("ydb.conformance", func() line {
		if o.scratchDSN == "" {
			return line{Verdict: skip, Detail: "no -scratch-dsn: the store conformance suite writes, so it runs only on a database of its own " +
				"(yc ydb database create ordersaga-preflight --serverless; pass its endpoint as -scratch-dsn or PREFLIGHT_SCRATCH_DSN)"}
		}
		if o.scratchDSN == o.dsn {
			return bad("create a separate database for the suite", "-scratch-dsn is the production database: the suite writes rows there")
		}
		return goTest(ctx, o, "./shared/adapters/ydbstore/", []string{"YDB_CONNECTION_STRING=" + o.scratchDSN, "YDB_TOKEN=" + o.ydbToken},
			"migrations applied to the scratch database and the whole storetest suite passed on it")
	})
}

// openYDB opens dsn with o's auth, bounded by o.connectTimeout (default
// 20 s): the driver keeps retrying a refused connection until its context
// ends, and the preflight has other lines to print.
func openYDB(ctx context.Context, o options, dsn string) (*ydbstore.Store, error) {
	limit := o.connectTimeout
	if limit <= 0 {
		limit = 20 * time.Second
	}
	cctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	return ydbstore.Open(cctx, ydbstore.Config{ConnectionString: dsn, Auth: o.ydbAuth, Token: o.ydbToken, DialTimeout: limit})
}

// migrateScratch applies every migration to the scratch database, as
// scripts/migrate does, so a statement the server refuses is its own line.
func migrateScratch(ctx context.Context, o options) line {
	st, err := openYDB(ctx, o, o.scratchDSN)
	if err != nil {
		return bad("check -scratch-dsn and the token (it needs ydb.editor on the scratch database)", "open the scratch database: %v", err)
	}
	defer st.Close()
	ms, err := ydbstore.LoadMigrations(ydbschema.FS)
	if err != nil {
		return bad("a broken migration file: go test ./shared/adapters/ydbstore/", "%v", err)
	}
	applied, err := st.Migrate(ctx, ms, ydbstore.MigrateOptions{})
	if err != nil {
		return bad("the server refused a migration (named above): fix schema/ydb before deploying; the production database would refuse it too", "migrate the scratch database: %v", err)
	}
	return ok("%d migrations applied now, %d before (schema/ydb, as scripts/migrate runs them)", len(applied), len(ms)-len(applied))
}

// probeSQLite is the local rehearsal of probeYDB: a scratch SQLite file,
// migrated by opening it, one read, and the suite with -storetest.
func probeSQLite(ctx context.Context, r *report, o options) {
	dir, err := os.MkdirTemp("", "preflight-sqlite-")
	if err != nil {
		r.add(bad("", "temporary directory: %v", err))
		return
	}
	defer os.RemoveAll(dir)
	var st *sqlitestore.Store
	l := r.check("store.migrate", func() line {
		st, err = sqlitestore.Open(ctx, filepath.Join(dir, "scratch.db"), sqlitestore.Config{})
		if err != nil {
			return bad("go test ./shared/adapters/sqlitestore/", "open and migrate a scratch SQLite file: %v", err)
		}
		return ok("a scratch SQLite file opened and migrated")
	})
	if l.Verdict != pass {
		return
	}
	defer st.Close()
	r.check("store.read", func() line { return probeRead(ctx, st) })
	r.check("store.conformance", func() line {
		if !o.storetest {
			return line{Verdict: skip, Detail: "pass -storetest to run the SQLite conformance suite here (scripts/test.sh runs it with every package)"}
		}
		return goTest(ctx, o, "./shared/adapters/sqlitestore/", nil, "the whole storetest suite passed on SQLite")
	})
}

// goTest runs a package's TestConformance with env added.
func goTest(ctx context.Context, o options, pkg string, env []string, passed string) line {
	cmd := exec.CommandContext(ctx, "go", "test", "-count=1", "-run", "^TestConformance$", pkg)
	cmd.Dir = o.root
	cmd.Env = append(append(os.Environ(), "GOTOOLCHAIN=local"), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return bad("read the failing test above; the adapter and this database disagree (docs/ydb.md)", "go test %s: %v\n%s", pkg, err, tail(out.String(), 30))
	}
	if strings.Contains(out.String(), "no test files") || strings.Contains(out.String(), "[no tests to run]") {
		return bad("", "go test %s ran no conformance test", pkg)
	}
	return ok("%s", passed)
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
