package selfcheck

import (
	"cmp"
	"context"
	"fmt"
	"strings"
	"time"

	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/queue"
	"ordersaga/shared/domain/store"
	"ordersaga/shared/kit/config"
	"ordersaga/shared/kit/validate"
)

// Database is the probe the clock and schema checks need beyond the store
// port. Each target's composition root supplies one for its store (YDB in
// the cloud, SQLite locally). Implementations are read-only and safe for
// concurrent use.
type Database interface {
	// ServerTime returns the database server's clock. Errors: Transient
	// when the database is unreachable.
	ServerTime(ctx context.Context) (time.Time, error)
	// Schema returns the migrations the database has applied and those
	// the code carries that it has not. Errors: Transient.
	Schema(ctx context.Context) (Schema, error)
}

// Schema is the migration state of a database.
type Schema struct {
	Applied int      // migrations recorded as applied
	Latest  int64    // the highest applied version
	Pending []string // migrations the code carries that are not applied, by name
}

// Tolerances of the clock check. Leases (SAGA_LEASE, RELAY_LEASE) are tens
// of seconds and every time decision reads one clock, so a skew under
// SkewWarn is harmless; one over SkewFail eats a visible share of a lease.
const (
	SkewWarn = time.Second
	SkewFail = 5 * time.Second
)

// probeOrderID is the key the store check reads; no order has it.
const probeOrderID = "selfcheck-probe-no-such-order"

// DefaultCheckTimeout bounds each check of a Config that sets no CheckTimeout.
const DefaultCheckTimeout = 5 * time.Second

// Config is what a self-check reads (Run). Zero fields take the defaults
// named; a negative CheckTimeout is refused.
type Config struct {
	Function string
	Config   config.Config
	Store    store.Store
	Queue    queue.Queue
	// Database probes the clock and schema; nil reports both as FAIL
	// (a target without a probe cannot prove them).
	Database Database
	// Now is the function's clock (the one leases are computed with;
	// default time.Now in UTC).
	Now  func() time.Time
	Code Code
	// CheckTimeout bounds each check (default DefaultCheckTimeout), so one unreachable
	// dependency cannot use the whole invocation.
	CheckTimeout time.Duration
}

// Validate reports a negative CheckTimeout. Errors are apperr.Invalid and
// name the field.
func (c Config) Validate() error {
	var p validate.Problems
	validate.NotNegative(&p, "CheckTimeout", c.CheckTimeout)
	return p.Err("selfcheck")
}

// setDefaults gives each zero field of c its documented default.
func (c *Config) setDefaults() {
	if c.Now == nil {
		c.Now = func() time.Time { return time.Now().UTC() }
	}
	c.CheckTimeout = cmp.Or(c.CheckTimeout, DefaultCheckTimeout)
}

// Run runs every check and returns the report. It never fails as a whole:
// a check that cannot run is a FAIL line saying why, and a Config that
// Validate refuses is one FAIL line naming the field.
func Run(ctx context.Context, d Config) Report {
	if err := d.Validate(); err != nil {
		r := Report{Action: Action, Function: d.Function, Code: d.Code, At: time.Now().UTC()}
		r.add(Line{Check: "selfcheck", Verdict: Fail, Detail: err.Error(), Fix: "the self-check was called with a bad setting (a wiring bug)"})
		return r
	}
	d.setDefaults()
	r := Report{Action: Action, Function: d.Function, Config: Redact(d.Config), Code: d.Code, At: d.Now()}
	r.add(Line{Check: "config", Verdict: Pass, Detail: fmt.Sprintf("valid: store %s, queue %s, auth %s", d.Config.Store, d.Config.Queue, d.Config.Auth)})
	run := func(name string, f func(ctx context.Context) Line) {
		cctx, cancel := context.WithTimeout(ctx, d.CheckTimeout)
		defer cancel()
		start := time.Now()
		l := f(cctx)
		l.Check, l.Millis = name, time.Since(start).Milliseconds()
		r.add(l)
	}
	run("store.read", func(ctx context.Context) Line { return storeRead(ctx, d.Store) })
	for _, q := range queuesOf(d.Config) {
		run("queue."+q.name, func(ctx context.Context) Line { return queueAttributes(ctx, d.Queue, q.url, q.env) })
	}
	run("clock.skew", func(ctx context.Context) Line { return clockSkew(ctx, d.Database, d.Now) })
	run("schema.version", func(ctx context.Context) Line { return schemaVersion(ctx, d.Database) })
	return r
}

// ColdStartFailed is the report of a function whose configuration or
// adapters failed to load: one FAIL line with the error, and the fix.
func ColdStartFailed(function string, err error, code Code, now time.Time) Report {
	r := Report{Action: Action, Function: function, Code: code, At: now}
	r.add(Line{Check: "config", Verdict: Fail, Detail: err.Error(),
		Fix: "the cold start failed: fix the setting the message names (docs/configuration.md) in terraform.tfvars or the function's environment, apply, and run the self-check again"})
	return r
}

func storeRead(ctx context.Context, st store.Store) Line {
	if st == nil {
		return Line{Verdict: Fail, Detail: "no store", Fix: "the target opened no store (a wiring bug)"}
	}
	err := st.View(ctx, func(ctx context.Context, tx store.Tx) error {
		_, err := tx.GetOrder(ctx, probeOrderID)
		return err
	})
	switch {
	case apperr.Is(err, apperr.NotFound):
		return Line{Verdict: Pass, Detail: "a read-only session read one key (absent, as expected)"}
	case err == nil:
		return Line{Verdict: Warn, Detail: "the probe key " + probeOrderID + " exists; the read worked"}
	default:
		return Line{Verdict: Fail, Detail: "reading the orders table: " + err.Error(),
			Fix: "check that the database exists and is migrated (go run ./scripts/migrate), and that the function's service account holds ydb.editor (terraform/iam.tf)"}
	}
}

type namedQueue struct{ name, env, url string }

// queuesOf lists the configured queues (those with a URL).
func queuesOf(cfg config.Config) []namedQueue {
	var out []namedQueue
	for _, q := range []namedQueue{
		{"saga-commands", "SAGA_COMMANDS_QUEUE_URL", cfg.QueueURLs.SagaCommands},
		{"saga-commands-dlq", "SAGA_COMMANDS_DLQ_URL", cfg.QueueURLs.SagaCommandsDLQ},
		{"order-events", "ORDER_EVENTS_QUEUE_URL", cfg.QueueURLs.OrderEvents},
	} {
		if q.url != "" {
			out = append(out, q)
		}
	}
	return out
}

func queueAttributes(ctx context.Context, q queue.Queue, url, env string) Line {
	if q == nil {
		return Line{Verdict: Fail, Detail: "no queue client", Fix: "the target opened no queue (a wiring bug)"}
	}
	visible, inFlight, err := q.Depth(ctx, url)
	switch {
	case err == nil:
		return Line{Verdict: Pass, Detail: fmt.Sprintf("attributes read: %d visible, %d in flight", visible, inFlight)}
	case apperr.Is(err, apperr.NotFound):
		return Line{Verdict: Fail, Detail: env + " names no queue: " + err.Error(),
			Fix: "the queue was deleted or the URL is stale: terraform apply recreates it and sets " + env}
	default:
		return Line{Verdict: Fail, Detail: "GetQueueAttributes: " + err.Error(),
			Fix: "check YMQ_ENDPOINT and the static key in Lockbox (YMQ_ACCESS_KEY_ID, YMQ_SECRET_ACCESS_KEY): its service account needs ymq.reader and ymq.writer (terraform/iam.tf); run scripts/preflight for the protocol"}
	}
}

func clockSkew(ctx context.Context, db Database, now func() time.Time) Line {
	if db == nil {
		return Line{Verdict: Fail, Detail: "this target has no database probe", Fix: "wire a selfcheck.Database in the target's composition root"}
	}
	before := now()
	server, err := db.ServerTime(ctx)
	after := now()
	if err != nil {
		return Line{Verdict: Fail, Detail: "reading the database clock: " + err.Error(), Fix: "the database is unreachable from the function: see store.read"}
	}
	rtt := after.Sub(before)
	mid := before.Add(rtt / 2)
	skew := server.Sub(mid)
	abs := skew
	if abs < 0 {
		abs = -abs
	}
	// The server read the clock somewhere within the round trip: only
	// the part of the skew beyond half the round trip is certain.
	certain := abs - rtt/2
	detail := fmt.Sprintf("database clock %s from the function's (uncertainty ±%s, half the round trip)", signed(skew), (rtt / 2).Round(time.Millisecond))
	switch {
	case certain > SkewFail:
		return Line{Verdict: Fail, Detail: detail, Fix: fmt.Sprintf("the clocks differ by more than %s: leases and backoffs would misfire; report it to Yandex Cloud support with the function version", SkewFail)}
	case certain > SkewWarn:
		return Line{Verdict: Warn, Detail: detail, Fix: fmt.Sprintf("more than %s apart: watch it; the saga tolerates it but leases lose that much margin", SkewWarn)}
	}
	return Line{Verdict: Pass, Detail: detail}
}

func signed(d time.Duration) string {
	d = d.Round(time.Millisecond)
	if d >= 0 {
		return "+" + d.String()
	}
	return d.String()
}

func schemaVersion(ctx context.Context, db Database) Line {
	if db == nil {
		return Line{Verdict: Fail, Detail: "this target has no database probe", Fix: "wire a selfcheck.Database in the target's composition root"}
	}
	s, err := db.Schema(ctx)
	if err != nil {
		return Line{Verdict: Fail, Detail: "reading schema_migrations: " + err.Error(), Fix: "the database is unreachable or not migrated: go run ./scripts/migrate (docs/deploy.md)"}
	}
	if len(s.Pending) > 0 {
		return Line{Verdict: Fail, Detail: fmt.Sprintf("%d applied (latest %04d), %d pending: %s", s.Applied, s.Latest, len(s.Pending), strings.Join(s.Pending, ", ")),
			Fix: "the code expects migrations the database lacks: go run ./scripts/migrate against this database (scripts/deploy.sh does it before the apply)"}
	}
	return Line{Verdict: Pass, Detail: fmt.Sprintf("%d migrations applied (latest %04d), none pending", s.Applied, s.Latest)}
}
