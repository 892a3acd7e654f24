package main

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"ordersaga/shared/adapters/ydbstore"
	"ordersaga/shared/domain/apperr"
)

// fakeMigrator records how run called it; it stands in for the store, not
// for YDB (ydbstore's own tests cover Migrate's YQL).
type fakeMigrator struct {
	opts   ydbstore.MigrateOptions
	got    []ydbstore.Migration
	err    error
	closed bool
}

func (f *fakeMigrator) Migrate(_ context.Context, ms []ydbstore.Migration, o ydbstore.MigrateOptions) ([]ydbstore.Migration, error) {
	f.got, f.opts = ms, o
	if f.err != nil {
		return ms[:1], f.err
	}
	return ms, nil
}

func (f *fakeMigrator) Close() error { f.closed = true; return nil }

func TestRun(t *testing.T) {
	tests := []struct {
		name       string
		args       []string
		env        map[string]string
		ycToken    string
		ycErr      error
		migErr     error
		wantCode   int
		wantCfg    ydbstore.Config // checked when opened
		wantDry    bool
		wantOut    string
		wantErr    string
		wantNoDial bool
	}{
		{name: "offline dry run lists everything", args: []string{"-dry-run"}, wantCode: 0,
			wantOut: "would run 0001_orders.sql", wantNoDial: true},
		{name: "anonymous from env", env: map[string]string{"YDB_CONNECTION_STRING": "grpc://localhost:2136/local"},
			wantCode: 0, wantCfg: ydbstore.Config{ConnectionString: "grpc://localhost:2136/local", Auth: "anonymous"}},
		{name: "token from env picks token auth",
			env:      map[string]string{"YDB_CONNECTION_STRING": "grpcs://h:2135/db", "YDB_TOKEN": "t1.env"},
			args:     []string{"-dry-run"},
			wantCode: 0, wantDry: true, wantCfg: ydbstore.Config{ConnectionString: "grpcs://h:2135/db", Auth: "token", Token: "t1.env"}},
		{name: "token from yc", args: []string{"-dsn", "grpcs://h:2135/db", "-auth", "token"}, ycToken: "t1.yc",
			wantCode: 0, wantCfg: ydbstore.Config{ConnectionString: "grpcs://h:2135/db", Auth: "token", Token: "t1.yc"}},
		{name: "yc fails", args: []string{"-dsn", "grpcs://h:2135/db", "-auth", "token"}, ycErr: errors.New("not logged in"),
			wantCode: 2, wantErr: "yc iam create-token failed", wantNoDial: true},
		{name: "metadata", args: []string{"-dsn", "grpcs://h:2135/db", "-auth", "metadata"},
			wantCode: 0, wantCfg: ydbstore.Config{ConnectionString: "grpcs://h:2135/db", Auth: "metadata"}},
		{name: "no dsn", args: nil, wantCode: 2, wantErr: "/connection_string", wantNoDial: true},
		{name: "bad auth", args: []string{"-dsn", "grpc://h:1/db", "-auth", "iam"}, wantCode: 2, wantErr: "/auth", wantNoDial: true},
		{name: "stray argument", args: []string{"up"}, wantCode: 2, wantErr: "unexpected arguments", wantNoDial: true},
		{name: "migration fails", args: []string{"-dsn", "grpc://h:1/db"}, migErr: apperr.New(apperr.Internal, "boom"),
			wantCode: 1, wantErr: "boom (1 applied before the failure)",
			wantCfg: ydbstore.Config{ConnectionString: "grpc://h:1/db", Auth: "anonymous"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			fake := &fakeMigrator{err: tt.migErr}
			var opened *ydbstore.Config
			d := deps{
				getenv: func(k string) string { return tt.env[k] },
				open: func(_ context.Context, cfg ydbstore.Config) (migrator, error) {
					opened = &cfg
					return fake, nil
				},
				ycToken: func(context.Context) (string, error) { return tt.ycToken, tt.ycErr },
			}
			code := run(context.Background(), tt.args, &stdout, &stderr, d)
			if code != tt.wantCode {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tt.wantCode, stdout.String(), stderr.String())
			}
			if !strings.Contains(stdout.String(), tt.wantOut) || !strings.Contains(stderr.String(), tt.wantErr) {
				t.Errorf("stdout %q / stderr %q, want %q / %q", stdout.String(), stderr.String(), tt.wantOut, tt.wantErr)
			}
			if tt.wantNoDial {
				if opened != nil {
					t.Errorf("opened a store: %+v", *opened)
				}
				return
			}
			if opened == nil {
				t.Fatal("store not opened")
			}
			if opened.ConnectionString != tt.wantCfg.ConnectionString || opened.Auth != tt.wantCfg.Auth || opened.Token != tt.wantCfg.Token {
				t.Errorf("opened %+v, want %+v", *opened, tt.wantCfg)
			}
			if fake.opts.DryRun != tt.wantDry || fake.opts.Log == nil || !fake.closed {
				t.Errorf("dry run %v (want %v), log set %v, closed %v", fake.opts.DryRun, tt.wantDry, fake.opts.Log != nil, fake.closed)
			}
			if len(fake.got) < 9 || fake.got[0].Name != "0001_orders.sql" {
				t.Errorf("migrations passed: %d", len(fake.got))
			}
			if strings.Contains(stdout.String(), "t1.") {
				t.Errorf("a token was printed: %s", stdout.String())
			}
		})
	}
}
