package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestSmokeAgainstLocalRunner builds and starts the local runner as the
// README's first command does and runs the deploy's smoke test against it,
// so the smoke test cannot rot: the same Run that scripts/deploy.sh runs
// against the cloud, with the runner's tokens and its /_invoke/dlqredrive
// standing in for JWTs and yc.
func TestSmokeAgainstLocalRunner(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the local runner")
	}
	base := startRunner(t)
	var log bytes.Buffer
	client := &http.Client{Timeout: 30 * time.Second}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	err := Run(ctx, Config{BaseURL: base, UserToken: "dev-user", AdminToken: "dev-admin", Deadline: 30 * time.Second,
		Invoke: HTTPInvoker(client, base+"/_invoke/dlqredrive"), Log: &log, HTTP: client})
	t.Log(log.String())
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"admin stock route", "POST /orders", "Idempotent-Replayed: true", ": CONFIRMED", "dlqredrive stats", "PASS"} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("smoke log lacks %q", want)
		}
	}
}

// TestSmokeFailsLoudly runs the smoke test against the runner with a user
// token where the admin token belongs, and with a dlqredrive invoker that
// points nowhere: each must fail, naming the step.
func TestSmokeFailsLoudly(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the local runner")
	}
	base := startRunner(t)
	client := &http.Client{Timeout: 30 * time.Second}
	ctx := context.Background()
	err := Run(ctx, Config{BaseURL: base, UserToken: "dev-user", AdminToken: "dev-user", Deadline: 30 * time.Second,
		Invoke: HTTPInvoker(client, base+"/_invoke/dlqredrive"), HTTP: client})
	if err == nil || !strings.Contains(err.Error(), "PUT /admin/stock") {
		t.Errorf("a non-admin token on the admin route: err = %v", err)
	}
	err = Run(ctx, Config{BaseURL: base, UserToken: "dev-user", AdminToken: "dev-admin", Deadline: 30 * time.Second,
		Invoke: HTTPInvoker(client, base+"/_invoke/nosuchfunction"), HTTP: client})
	if err == nil || !strings.Contains(err.Error(), "dlqredrive stats") {
		t.Errorf("a broken dlqredrive invoker: err = %v", err)
	}
	if err := Run(ctx, Config{BaseURL: base}); err == nil {
		t.Error("a config without tokens ran")
	}
}

// startRunner builds scripts/localcloud, starts it on a free loopback port
// with a fresh data directory and returns its API URL.
func startRunner(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "localcloud")
	build := exec.Command("go", "build", "-o", bin, "../localcloud")
	build.Env = append(os.Environ(), "GOTOOLCHAIN=local")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "-addr", "127.0.0.1:0", "-data", t.TempDir(), "-triggers", "../../triggers/triggers.yaml", "-quiet")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
		}
	})
	urlRe := regexp.MustCompile(`API:\s+(http://\S+)`)
	lines := bufio.NewScanner(stdout)
	for lines.Scan() {
		if m := urlRe.FindStringSubmatch(lines.Text()); m != nil {
			go func() { _, _ = io.Copy(io.Discard, stdout) }()
			return m[1]
		}
	}
	t.Fatal("the runner never printed its URL")
	return ""
}
