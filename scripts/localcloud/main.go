// Command localcloud runs the whole ordersaga suite on one machine on the
// local adapters only: the HTTP API (through the same API Gateway event path
// as the cloud), the timers and queue triggers of triggers/triggers.yaml, an
// embedded SQLite store and an embedded queue in one data directory,
// Prometheus metrics. It compiles no cloud SDK; the build that can also talk
// to a real YDB or Message Queue is ./scripts/localcloud/cloudadapters.
//
//	go run ./scripts/localcloud [-addr 127.0.0.1:8080] [-data .localcloud] [-quiet]
package main

import (
	"os"

	"ordersaga/scripts/localcloud/runner"
	"ordersaga/shared/wiring/localwiring"
)

func main() {
	os.Exit(runner.Main(runner.Command{
		Name: "localcloud", Open: localwiring.Open,
		Adapters: "SQLite store, embedded queue, Prometheus",
	}, os.Args[1:], os.Stdout, os.Stderr))
}
