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
		Invoke: HTTPInvoker(client, base+"/_invoke"), SendDLQ: HTTPSender(client, base+"/_queues/saga-commands-dlq"), Log: &log, HTTP: client})
	t.Log(log.String())
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"self-check orderapi: PASS", "self-check dlqredrive: PASS", "admin stock route", "POST /orders",
		"Idempotent-Replayed: true", ": CONFIRMED", "dead letter: ingested as entry", "dead letter: redriven to saga-commands",
		"0 not yet ingested from saga-commands-dlq", "PASS"} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("smoke log lacks %q", want)
		}
	}
}

// TestSmokeFailsLoudly runs the smoke test against the runner with a user
// token where the admin token belongs, with an invoker that points
// nowhere, without a way to reach the dead-letter queue, with a dead letter
// that never arrives, and with a dlqredrive that cannot read the
// dead-letter queue's depth: each must fail, naming the step.
func TestSmokeFailsLoudly(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the local runner")
	}
	base := startRunner(t)
	client := &http.Client{Timeout: 30 * time.Second}
	ctx := context.Background()
	invoke := HTTPInvoker(client, base+"/_invoke")
	send := HTTPSender(client, base+"/_queues/saga-commands-dlq")
	cfg := func(mutate func(*Config)) Config {
		c := Config{BaseURL: base, UserToken: "dev-user", AdminToken: "dev-admin", Deadline: 5 * time.Second, Invoke: invoke, SendDLQ: send, HTTP: client}
		mutate(&c)
		return c
	}
	for _, tc := range []struct {
		name   string
		mutate func(*Config)
		want   string
	}{
		{"a non-admin token on the admin route", func(c *Config) { c.AdminToken = "dev-user" }, "PUT /admin/stock"},
		{"an invoker that points nowhere", func(c *Config) { c.Invoke = HTTPInvoker(client, base+"/_invoke/nosuchfunction") }, "self-check orderapi"},
		{"no way to send a dead letter", func(c *Config) { c.SendDLQ = nil }, "dead-letter path: no way to send"},
		{"a dead letter that never arrives", func(c *Config) {
			c.SendDLQ = func(context.Context, string, map[string]string) (string, error) { return "no-such-message", nil }
		}, "was not ingested"},
		{"a dead-letter queue whose depth cannot be read", func(c *Config) {
			c.Invoke = func(ctx context.Context, fn string, ev []byte) ([]byte, error) {
				out, err := invoke(ctx, fn, ev)
				if err == nil && bytes.Contains(ev, []byte(`"stats"`)) {
					out = regexp.MustCompile(`,"not_ingested":\{[^}]*\}`).ReplaceAll(out, nil)
				}
				return out, err
			}
		}, "no not_ingested count for saga-commands-dlq"},
		{"a self-check that fails", func(c *Config) {
			c.Invoke = func(ctx context.Context, fn string, ev []byte) ([]byte, error) {
				out, err := invoke(ctx, fn, ev)
				if err == nil && fn == "sagaadvancer" && bytes.Contains(ev, []byte("selfcheck")) {
					out = bytes.Replace(out, []byte(`"check":"schema.version","verdict":"PASS"`), []byte(`"check":"schema.version","verdict":"FAIL"`), 1)
					out = bytes.Replace(out, []byte(`"verdict":"PASS","checks"`), []byte(`"verdict":"FAIL","checks"`), 1)
				}
				return out, err
			}
		}, "self-check sagaadvancer: schema.version"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Run(ctx, cfg(tc.mutate))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want it to name %q", err, tc.want)
			}
		})
	}
	if err := Run(ctx, Config{BaseURL: base}); err == nil {
		t.Error("a config without tokens ran")
	}
	var log bytes.Buffer
	if err := Run(ctx, cfg(func(c *Config) { c.SendDLQ, c.SkipDLQ, c.Log = nil, true, &log })); err != nil {
		t.Errorf("-skip-dlq: %v", err)
	}
	if !strings.Contains(log.String(), "DEAD-LETTER PATH SKIPPED") {
		t.Errorf("-skip-dlq did not say so: %s", log.String())
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
