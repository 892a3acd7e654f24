// Package runner is the local runner of ordersaga: the HTTP API (through the
// same API Gateway event path as the cloud), the timers and queue triggers of
// triggers/triggers.yaml, on the adapters its command wires in. Two commands
// use it: scripts/localcloud (the local adapters only: SQLite store and
// embedded queue in one data directory, Prometheus) and
// scripts/localcloud/cloudadapters (also YDB and Yandex Message Queue, an
// explicit opt-in that compiles their SDKs). See docs/wiring.md.
package runner

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	"ordersaga/shared/kit/config"
	"ordersaga/shared/transport/identity"
	"ordersaga/shared/wiring/app"
	"ordersaga/shared/wiring/handlers"
	"ordersaga/shared/wiring/triggers"
)

// Command describes one build of the runner.
type Command struct {
	// Name is how the command is run, for -help.
	Name string
	// Open opens the adapters this build carries.
	Open app.Opener
	// Adapters names them, for -help and the first log line.
	Adapters string
}

const usage = `Usage: %[1]s [flags]

Runs the whole ordersaga suite on this machine: the HTTP API, the timers and
the queue triggers of triggers/triggers.yaml. Run it from the repository root.
Adapters in this build: %[2]s.

Output: once it serves, the address lines on stdout; everything else is one
JSON log line each on stderr (startup progress, one line per order and per
saga step, warnings). Ctrl-C stops it with exit status 0; "go run" itself
then reports exit status 1, because the go command saw the interrupt too
(golang/go#40467) - see docs/wiring.md.

Configuration: the functions' environment variables (ORDERSAGA_*, see
docs/wiring.md) over local defaults: ORDERSAGA_STORE=sqlite in -data,
ORDERSAGA_METRICS=prometheus, bearer tokens dev-user and dev-admin.

Flags:
`

// Main runs the runner until SIGINT or SIGTERM and returns the process's exit
// status: 0 after a clean stop, 1 when it could not start, 2 for bad flags.
func Main(cmd Command, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet(cmd.Name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:8080", "listen address (loopback by default)")
	data := fs.String("data", ".localcloud", "directory for the SQLite database (store and queue)")
	trig := fs.String("triggers", "triggers/triggers.yaml", "trigger definitions")
	quiet := fs.Bool("quiet", false, "log warnings and errors only: hides the startup progress lines and one info\n"+
		"line per order and per saga step (the same as ORDERSAGA_LOG_LEVEL=warn; an explicit\n"+
		"ORDERSAGA_LOG_LEVEL wins). The address lines on stdout are printed either way")
	fs.Usage = func() {
		fmt.Fprintf(stderr, usage, cmd.Name, cmd.Adapters)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	level := os.Getenv("ORDERSAGA_LOG_LEVEL")
	if level == "" && *quiet {
		level = "warn"
	}
	log := app.NewLogger(stderr, level)
	if err := run(cmd, log, stdout, *addr, *data, *trig, *quiet); err != nil {
		log.Error("localcloud failed", "error", err.Error())
		return 1
	}
	return 0
}

func run(cmd Command, log *slog.Logger, stdout io.Writer, addr, data, trig string, quiet bool) error {
	started := time.Now()
	log.Info("localcloud starting", "adapters", cmd.Adapters, "data", data, "triggers", trig)
	if err := os.MkdirAll(data, 0o755); err != nil {
		return err
	}
	dbPath := filepath.Join(data, "ordersaga.db")
	env := func(k string) string {
		if v := os.Getenv(k); v != "" {
			return v
		}
		switch k {
		case "ORDERSAGA_SQLITE_PATH":
			return dbPath
		case "ORDERSAGA_METRICS":
			return "prometheus"
		case "ORDERSAGA_LOG_LEVEL":
			if quiet {
				return "warn"
			}
		}
		return ""
	}
	cfg, err := app.LoadConfig(env)
	if err != nil {
		return err
	}
	tf, err := triggers.Load(trig)
	if err != nil {
		return fmt.Errorf("%w (run from the repository root, or pass -triggers)", err)
	}
	// The first Ctrl-C stops the runner cleanly (exit status 0); stop()
	// below restores the default, so a second one kills it at once.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	// Local-only fault settings (faults.go): they decorate the ports and
	// the sagaadvancer function, never anything a cloud function runs.
	lf, err := newFaults(cfg, &tf, os.Getenv)
	if err != nil {
		return err
	}
	// The opener is the command's; the runner keeps the ports it opened:
	// it emulates the platform's triggers, which receive from the queue.
	var ports app.Ports
	open := func(ctx context.Context, cfg config.Config, env app.Env) (app.Ports, error) {
		p, err := cmd.Open(ctx, cfg, env)
		if err != nil {
			return p, err
		}
		ports = lf.decorate(p)
		return ports, nil
	}
	log.Info("opening the store and the queue (the first run creates and migrates the database)",
		"store", cfg.Store, "queue", cfg.Queue, "path", cfg.SQLitePath)
	t0 := time.Now()
	a, err := app.New(ctx, cfg, open, app.Options{Log: log})
	if err != nil {
		return err
	}
	defer a.Close()
	log.Info("store and queue ready", "took_ms", time.Since(t0).Milliseconds())
	if err := a.EnsureQueues(ctx, tf.Queues); err != nil {
		return err
	}
	log.Info("queues ready", "queues", len(tf.Queues))
	fns := maps.Clone(handlers.Registry)
	lf.attach(a, fns)
	rt := &runner{app: a, queue: ports.Queue, metricsHandler: ports.MetricsHandler, log: log, file: tf, functions: fns}
	if err := rt.seed(ctx); err != nil {
		return err
	}
	log.Info("demo stock seeded (existing SKUs keep their stock)", "skus", len(DemoStock))

	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: lf.wrap(rt.routes()), ReadHeaderTimeout: 10 * time.Second,
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	done := rt.start(ctx)

	url := "http://" + ln.Addr().String()
	log.Info("serving", "url", url, "startup_ms", time.Since(started).Milliseconds())
	fmt.Fprintf(stdout, `ordersaga localcloud is up
  API:        %[1]s   (POST /orders, GET /orders/{id}, /admin/dlq...)
  invoke:     POST %[1]s/_invoke/{orderapi|outboxrelay|sagaadvancer|sagarecovery|dlqredrive}
  metrics:    %[1]s/metrics
  data:       %[2]s
  tokens:     Authorization: Bearer dev-user | dev-admin
  console:    %[1]s/admin/console/signin?token=%[3]s   (operator console, admin token)

try:
  curl -s -X POST %[1]s/orders -H 'Authorization: Bearer dev-user' -H 'Idempotency-Key: demo-1' \
    -H 'Content-Type: application/json' \
    -d '{"customer_id":"c-1","currency":"RUB","items":[{"sku":"sku-1","quantity":2,"unit_price_minor":1500}]}'

Ctrl-C stops it.
`, url, cfg.SQLitePath, consoleToken(cfg.AuthTokens))

	var serveErr error
	select {
	case <-ctx.Done():
	case err := <-errc:
		if !errors.Is(err, http.ErrServerClosed) {
			serveErr = err
		}
	}
	stop()
	log.Info("shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = srv.Shutdown(sctx)
	<-done
	if serveErr != nil {
		return serveErr
	}
	log.Info("stopped")
	return nil
}

// consoleToken is the first admin token of the local token table (in
// token order), for the console's sign-in link; "dev-admin" by default.
func consoleToken(spec string) string {
	toks, err := identity.ParseTokens(spec)
	if err != nil {
		return "<admin-token>"
	}
	keys := slices.Sorted(maps.Keys(toks))
	for _, k := range keys {
		if toks[k].IsAdmin() {
			return url.QueryEscape(k)
		}
	}
	return "<admin-token>"
}
