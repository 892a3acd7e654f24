package cloudwiring

import (
	"context"
	"strings"
	"time"

	"github.com/ydb-platform/ydb-go-sdk/v3"
	"github.com/ydb-platform/ydb-go-sdk/v3/query"
	ycmeta "github.com/ydb-platform/ydb-go-yc-metadata"

	"ordersaga/schema/ydb"
	"ordersaga/shared/adapters/ydbstore"
	"ordersaga/shared/app/selfcheck"
	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/store"
	"ordersaga/shared/kit/config"
)

// yqlServerTime reads the database server's clock.
const yqlServerTime = `SELECT CurrentUtcTimestamp() AS now;`

// migrator is what the schema probe needs of the YDB store.
type migrator interface {
	Migrate(ctx context.Context, ms []ydbstore.Migration, opts ydbstore.MigrateOptions) ([]ydbstore.Migration, error)
}

// ydbProbe is the self-check's selfcheck.Database on YDB. The schema check
// runs the store's own migration runner in dry-run mode (it reads
// schema_migrations and changes nothing); the clock is read over a
// connection of its own, opened with the functions' auth mode for that one
// query and closed after it (the store keeps its driver to itself).
type ydbProbe struct {
	cfg config.YDB
	st  store.Store
}

// Probe returns the self-check's database probe for st, opened by
// OpenStore from cfg.
func Probe(cfg config.Config, st store.Store) selfcheck.Database {
	return ydbProbe{cfg: cfg.YDB, st: st}
}

var _ selfcheck.Database = ydbProbe{}

// ServerTime implements selfcheck.Database.
func (p ydbProbe) ServerTime(ctx context.Context) (time.Time, error) {
	opts := []ydb.Option{ydb.WithDialTimeout(5 * time.Second)}
	switch p.cfg.Auth {
	case ydbstore.AuthMetadata:
		opts = append(opts, ydb.WithCredentials(ycmeta.NewInstanceServiceAccount()), ycmeta.WithInternalCA())
	case ydbstore.AuthToken:
		opts = append(opts, ydb.WithAccessTokenCredentials(strings.TrimSpace(p.cfg.Token)), ycmeta.WithInternalCA())
	default:
		opts = append(opts, ydb.WithAnonymousCredentials())
	}
	db, err := ydb.Open(ctx, p.cfg.ConnectionString, opts...)
	if err != nil {
		return time.Time{}, apperr.Wrap(apperr.Transient, err, "selfcheck: connect to YDB")
	}
	defer func() { _ = db.Close(context.WithoutCancel(ctx)) }()
	row, err := db.Query().QueryRow(ctx, yqlServerTime, query.WithIdempotent())
	if err != nil {
		return time.Time{}, apperr.Wrap(apperr.Transient, err, "selfcheck: read the YDB clock")
	}
	var now time.Time
	if err := row.Scan(&now); err != nil {
		return time.Time{}, apperr.Wrap(apperr.Internal, err, "selfcheck: scan the YDB clock")
	}
	return now.UTC(), nil
}

// Schema implements selfcheck.Database.
func (p ydbProbe) Schema(ctx context.Context) (selfcheck.Schema, error) {
	m, ok := p.st.(migrator)
	if !ok {
		return selfcheck.Schema{}, apperr.New(apperr.Internal, "selfcheck: the store (%T) has no migration runner", p.st)
	}
	ms, err := ydbstore.LoadMigrations(ydbschema.FS)
	if err != nil {
		return selfcheck.Schema{}, err
	}
	pending, err := m.Migrate(ctx, ms, ydbstore.MigrateOptions{DryRun: true})
	if err != nil {
		return selfcheck.Schema{}, err
	}
	return schemaState(ms, pending), nil
}

// schemaState summarises the dry run: pending lists the migrations of ms
// the database has not applied.
func schemaState(ms, pending []ydbstore.Migration) selfcheck.Schema {
	missing := map[int64]bool{}
	var s selfcheck.Schema
	for _, m := range pending {
		missing[m.Version] = true
		s.Pending = append(s.Pending, m.Name)
	}
	for _, m := range ms {
		if !missing[m.Version] {
			s.Applied++
			s.Latest = max(s.Latest, m.Version)
		}
	}
	return s
}
