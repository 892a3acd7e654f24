package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"

	"ordersaga/shared/transport/yc"
	"ordersaga/shared/wiring/app"
	"ordersaga/shared/wiring/handlers"
	"ordersaga/shared/wiring/localwiring"
)

// limitMB is the smallest Cloud Functions memory size.
const limitMB = 128

var processStart = time.Now()

// sampleEvent is one realistic invocation of each function.
func sampleEvent(name string) []byte {
	switch name {
	case "orderapi":
		ev := map[string]any{
			"httpMethod": "POST", "path": "/orders", "resource": "/orders",
			"headers": map[string]string{"Content-Type": "application/json", "Idempotency-Key": "cold-1", "Authorization": "Bearer dev-user"},
			"body":    body, "isBase64Encoded": false,
			"requestContext": map[string]any{"requestId": "cold"},
		}
		b, _ := json.Marshal(ev)
		return b
	case "sagaadvancer":
		b, _ := yc.EncodeQueue("yrn:yc:ymq:ru-central1:local:saga-commands", []yc.QueueMessage{{
			MessageID: "m-1", EventID: "m-1", Body: `{"saga_id":"unknown-saga","reason":"created"}`,
			MessageAttributes: map[string]string{"event_id": "e-1"}, CreatedAt: time.Now().UTC()}})
		return b
	case "dlqredrive":
		return []byte(`{"action":"stats"}`)
	default:
		return yc.EncodeTimer("bench", "bench", time.Now())
	}
}

// coldChild runs in a fresh process: build the App from the environment,
// handle one event, print timings and peak memory as JSON.
func coldChild(name string) {
	fn, ok := handlers.Registry[name]
	if !ok {
		fmt.Fprintln(os.Stderr, "no function", name)
		os.Exit(2)
	}
	t0 := time.Now()
	a, err := app.Instance(localwiring.Open)
	must(err)
	built := time.Since(t0)
	t1 := time.Now()
	if _, err := fn(context.Background(), a, sampleEvent(name)); err != nil {
		fmt.Fprintln(os.Stderr, "invocation failed:", err)
		os.Exit(1)
	}
	invoked := time.Since(t1)
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	out := map[string]any{
		"init_ms": float64(t0.Sub(processStart).Microseconds()) / 1000, "build_ms": float64(built.Microseconds()) / 1000,
		"invoke_ms": float64(invoked.Microseconds()) / 1000, "peak_rss_mb": peakRSSMB(), "go_sys_mb": float64(ms.Sys) / (1 << 20),
	}
	_ = json.NewEncoder(os.Stdout).Encode(out)
}

// peakRSSMB reads VmHWM (peak resident set) from /proc.
func peakRSSMB() float64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return -1
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "VmHWM:") {
			kb, _ := strconv.ParseFloat(strings.Fields(sc.Text())[1], 64)
			return kb / 1024
		}
	}
	return -1
}

func benchColdStart() []row {
	self, err := os.Executable()
	must(err)
	names := make([]string, 0, len(handlers.Registry))
	for n := range handlers.Registry {
		names = append(names, n)
	}
	sort.Strings(names)
	var rows []row
	for _, name := range names {
		dir, err := os.MkdirTemp("", "bench-cold")
		must(err)
		cmd := exec.Command(self, "-coldstart-child", name)
		cmd.Env = append(os.Environ(), "ORDERSAGA_SQLITE_PATH="+filepath.Join(dir, "cold.db"), "ORDERSAGA_LOG_LEVEL=error")
		t0 := time.Now()
		out, err := cmd.Output()
		wall := time.Since(t0)
		os.RemoveAll(dir)
		if err != nil {
			fmt.Fprintf(os.Stderr, "bench: cold start of %s failed: %v\n", name, err)
			os.Exit(1)
		}
		var r struct {
			InitMS, BuildMS, InvokeMS, PeakRSSMB, GoSysMB float64
		}
		var m map[string]float64
		must(json.Unmarshal(out, &m))
		r.InitMS, r.BuildMS, r.InvokeMS, r.PeakRSSMB, r.GoSysMB = m["init_ms"], m["build_ms"], m["invoke_ms"], m["peak_rss_mb"], m["go_sys_mb"]
		rows = append(rows,
			row{fmt.Sprintf("%s cold start (fresh process → first result)", name),
				fmt.Sprintf("%.0f ms (composition root %.1f ms, first invocation %.1f ms)", float64(wall.Microseconds())/1000, r.BuildMS, r.InvokeMS),
				"—", "—"},
			row{fmt.Sprintf("%s peak memory of one invocation", name),
				fmt.Sprintf("%.1f MB RSS (Go runtime %.1f MB)", r.PeakRSSMB, r.GoSysMB), fmt.Sprintf("%d MB function", limitMB),
				fmt.Sprintf("%.2f", r.PeakRSSMB/limitMB)})
	}
	return rows
}

func goVersion() string { return runtime.Version() }
