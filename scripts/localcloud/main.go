// Command localcloud runs the whole ordersaga suite on one machine: the HTTP
// API (through the same API Gateway event path as the cloud), the timers and
// queue triggers of triggers/triggers.yaml, an embedded SQLite store and an
// embedded queue in one data directory.
//
//	go run ./scripts/localcloud [-addr 127.0.0.1:8080] [-data .localcloud]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"ordersaga/shared/app"
	"ordersaga/shared/config"
	"ordersaga/shared/triggers"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "localcloud:", err)
		os.Exit(1)
	}
}

func run() error {
	addr := flag.String("addr", "127.0.0.1:8080", "listen address (loopback by default)")
	data := flag.String("data", ".localcloud", "directory for the SQLite database (store and queue)")
	trig := flag.String("triggers", "triggers/triggers.yaml", "trigger definitions")
	quiet := flag.Bool("quiet", false, "log warnings and errors only")
	flag.Parse()

	if err := os.MkdirAll(*data, 0o755); err != nil {
		return err
	}
	dbPath := filepath.Join(*data, "ordersaga.db")
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
			if *quiet {
				return "warn"
			}
		}
		return ""
	}
	cfg, err := config.Load(env)
	if err != nil {
		return err
	}
	tf, err := triggers.Load(*trig)
	if err != nil {
		return fmt.Errorf("%w (run from the repository root, or pass -triggers)", err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	a, err := app.New(ctx, cfg, app.Options{})
	if err != nil {
		return err
	}
	defer a.Close()
	if err := a.EnsureQueues(ctx, tf.Queues); err != nil {
		return err
	}
	lf, err := installFaults(a, &tf, os.Getenv) // local-only fault settings: faults.go
	if err != nil {
		return err
	}
	rt := &runner{app: a, log: a.Log, file: tf}
	if err := rt.seed(ctx); err != nil {
		return err
	}

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: lf.wrap(rt.routes()), ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	done := rt.start(ctx)

	url := "http://" + ln.Addr().String()
	fmt.Printf(`ordersaga localcloud is up
  API:        %[1]s   (POST /orders, GET /orders/{id}, /admin/dlq...)
  invoke:     POST %[1]s/_invoke/{orderapi|outboxrelay|sagaadvancer|sagarecovery|dlqredrive}
  metrics:    %[1]s/metrics
  data:       %[2]s
  tokens:     Authorization: Bearer dev-user | dev-admin

try:
  curl -s -X POST %[1]s/orders -H 'Authorization: Bearer dev-user' -H 'Idempotency-Key: demo-1' \
    -H 'Content-Type: application/json' \
    -d '{"customer_id":"c-1","currency":"RUB","items":[{"sku":"sku-1","quantity":2,"unit_price_minor":1500}]}'

Ctrl-C stops it.
`, url, dbPath)

	select {
	case <-ctx.Done():
	case err := <-errc:
		if !errors.Is(err, http.ErrServerClosed) {
			return err
		}
	}
	slog.Info("shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = srv.Shutdown(sctx)
	<-done
	return nil
}
