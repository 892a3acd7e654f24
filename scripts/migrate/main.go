// Command migrate applies ordersaga's YDB schema (schema/ydb, embedded) to a
// YDB database: every NNNN_name.sql not yet recorded in the database's
// schema_migrations table, in order, each once. Running it again is a no-op;
// each statement is recorded in schema_migration_statements once it
// succeeded, so a run interrupted inside a migration resumes after it.
//
// Usage:
//
//	go run ./scripts/migrate [-dsn DSN] [-auth metadata|token|anonymous] [-token T] [-dry-run]
//
// The DSN defaults to $YDB_CONNECTION_STRING, the auth mode to $YDB_AUTH
// (else "token" when a token is given, else "anonymous"), the token to
// $YDB_TOKEN; with -auth=token and no token, migrate runs
// `yc iam create-token` (the yc CLI, logged in as someone with ydb.editor).
// -dry-run prints the pending migrations and their statements and changes
// nothing; without a DSN it lists every embedded migration offline.
//
// Exit status: 0 on success, 1 when a migration failed, 2 on bad usage.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"

	ydbschema "ordersaga/schema/ydb"
	"ordersaga/shared/adapters/ydbstore"
	"ordersaga/shared/domain/apperr"
)

// migrator is what run needs of *ydbstore.Store.
type migrator interface {
	Migrate(ctx context.Context, ms []ydbstore.Migration, opts ydbstore.MigrateOptions) ([]ydbstore.Migration, error)
	Close() error
}

// deps are run's outside effects, replaced in tests.
type deps struct {
	getenv  func(string) string
	open    func(ctx context.Context, cfg ydbstore.Config) (migrator, error)
	ycToken func(ctx context.Context) (string, error)
}

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr, deps{
		getenv: os.Getenv,
		open: func(ctx context.Context, cfg ydbstore.Config) (migrator, error) {
			return ydbstore.Open(ctx, cfg)
		},
		ycToken: ycIAMToken,
	}))
}

// options are the parsed command line.
type options struct {
	dsn, auth, token string
	dryRun           bool
	timeout          time.Duration
}

func parseFlags(args []string, getenv func(string) string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("migrate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.dsn, "dsn", getenv("YDB_CONNECTION_STRING"), "YDB connection string (env YDB_CONNECTION_STRING)")
	fs.StringVar(&o.auth, "auth", getenv("YDB_AUTH"), "metadata | token | anonymous (env YDB_AUTH)")
	fs.StringVar(&o.token, "token", getenv("YDB_TOKEN"), "IAM or static token for -auth=token (env YDB_TOKEN; default: yc iam create-token)")
	fs.BoolVar(&o.dryRun, "dry-run", false, "print what would run; change nothing")
	fs.DurationVar(&o.timeout, "timeout", 5*time.Minute, "overall deadline")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments: %s", strings.Join(fs.Args(), " "))
	}
	if o.auth == "" {
		o.auth = ydbstore.AuthAnonymous
		if o.token != "" {
			o.auth = ydbstore.AuthToken
		}
	}
	if o.timeout <= 0 {
		return o, errors.New("-timeout must be positive")
	}
	return o, nil
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer, d deps) int {
	o, err := parseFlags(args, d.getenv, stderr)
	if err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(stderr, "migrate:", err)
		}
		return 2
	}
	ms, err := ydbstore.LoadMigrations(ydbschema.FS)
	if err != nil {
		fmt.Fprintln(stderr, "migrate:", err)
		return 1
	}
	logf := func(format string, args ...any) { fmt.Fprintf(stdout, format+"\n", args...) }
	if o.dsn == "" && o.dryRun {
		logf("no -dsn: listing all %d embedded migrations (applied state unknown)", len(ms))
		for _, m := range ms {
			logf("would run %s (%d statements)", m.Name, len(m.Statements))
			for _, st := range m.Statements {
				logf("%s\n", st)
			}
		}
		return 0
	}
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	if o.auth == ydbstore.AuthToken && o.token == "" {
		if o.token, err = d.ycToken(ctx); err != nil {
			fmt.Fprintln(stderr, "migrate: -auth=token without a token, and yc iam create-token failed:", err)
			return 2
		}
	}
	cfg := ydbstore.Config{ConnectionString: o.dsn, Auth: o.auth, Token: o.token}
	if err := cfg.Validate(); err != nil {
		fmt.Fprintln(stderr, "migrate:", err)
		for _, f := range apperr.Fields(err) {
			fmt.Fprintf(stderr, "  %s: %s\n", f.Pointer, f.Detail)
		}
		return 2
	}
	logf("migrating %s (dry run: %v)", cfg, o.dryRun)
	s, err := d.open(ctx, cfg)
	if err != nil {
		fmt.Fprintln(stderr, "migrate:", err)
		return 1
	}
	defer s.Close()
	applied, err := s.Migrate(ctx, ms, ydbstore.MigrateOptions{DryRun: o.dryRun, Log: logf})
	if err != nil {
		fmt.Fprintf(stderr, "migrate: %v (%d applied before the failure)\n", err, len(applied))
		return 1
	}
	if o.dryRun {
		logf("dry run: %d migration(s) pending", len(applied))
	}
	return 0
}

// ycIAMToken runs `yc iam create-token` and returns its output.
func ycIAMToken(ctx context.Context) (string, error) {
	out, err := exec.CommandContext(ctx, "yc", "iam", "create-token").Output()
	if err != nil {
		return "", err
	}
	tok := strings.TrimSpace(string(out))
	if tok == "" {
		return "", errors.New("yc printed no token")
	}
	return tok, nil
}
