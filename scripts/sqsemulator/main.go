// Command sqsemulator runs the kumo AWS emulator (github.com/sivchari/kumo)
// as a local SQS endpoint for ordersaga's tests.
//
// It is test tooling only: it lives in its own nested module so that kumo,
// which needs a newer Go than the functions' runtime, never enters the root
// go.mod. It listens on a loopback address (flag -addr, default a free port on
// 127.0.0.1), prints its base URL as the first line of stdout, for example
//
//	http://127.0.0.1:41234
//
// and exits with status 0 on SIGINT or SIGTERM.
//
// kumo's public API only offers kumo.NewServer(), which listens on a random
// loopback port; this command fronts it with a reverse proxy on -addr so the
// address can be chosen. Queue URLs returned by kumo name
// http://localhost:4566 whatever the listening address: clients must send every
// call to the endpoint they were given (kumo resolves queues by URL path).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/sivchari/kumo"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "loopback address to listen on (port 0 = a free port)")
	flag.Parse()
	log.SetFlags(0)
	log.SetPrefix("sqsemulator: ")
	if err := run(*addr); err != nil {
		log.Fatal(err)
	}
}

func run(addr string) error {
	if err := checkLoopback(addr); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	emu := kumo.NewServer()
	defer emu.Close()
	target, err := url.Parse(emu.URL)
	if err != nil {
		return fmt.Errorf("parse kumo URL %q: %w", emu.URL, err)
	}

	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", addr, err)
	}
	proxy := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) { pr.SetURL(target) },
	}
	srv := &http.Server{Handler: proxy, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()

	// The first stdout line is the contract with scripts/lib/sqsemulator.sh.
	fmt.Printf("http://%s\n", ln.Addr().String())

	select {
	case <-ctx.Done():
	case err := <-served:
		return fmt.Errorf("serve: %w", err)
	}
	// Close (not Shutdown): long polls may hold requests open for up to 20 s;
	// dropping the connections cancels them in kumo too, so emu.Close returns.
	if err := srv.Close(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("close: %w", err)
	}
	return nil
}

// checkLoopback refuses non-loopback listen addresses: the emulator has no
// authentication and must not be reachable from other hosts.
func checkLoopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("bad -addr %q: %w", addr, err)
	}
	if host == "localhost" {
		return nil
	}
	ip := net.ParseIP(host)
	if ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("-addr %q: host must be a loopback address", addr)
	}
	return nil
}
