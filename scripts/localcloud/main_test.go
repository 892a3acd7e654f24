package main

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestLocalCloudEndToEnd builds and runs the local runner exactly as the
// README's first command does, on a free loopback port, and drives one
// order to CONFIRMED and one to CANCELLED through its HTTP API; then it
// stops it with an interrupt and expects a clean exit.
func TestLocalCloudEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the local runner")
	}
	bin := filepath.Join(t.TempDir(), "localcloud")
	build := exec.Command("go", "build", "-o", bin, ".")
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
	defer func() { _ = cmd.Process.Kill() }()

	urlRe := regexp.MustCompile(`API:\s+(http://\S+)`)
	lines := bufio.NewScanner(stdout)
	base := ""
	for base == "" && lines.Scan() {
		if m := urlRe.FindStringSubmatch(lines.Text()); m != nil {
			base = m[1]
		}
	}
	if base == "" {
		t.Fatal("the runner never printed its URL")
	}
	go func() { _, _ = io.Copy(io.Discard, stdout) }()

	post := func(key, body string) string {
		req, _ := http.NewRequest("POST", base+"/orders", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer dev-user")
		req.Header.Set("Idempotency-Key", key)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var o struct{ ID string }
		if err := json.NewDecoder(resp.Body).Decode(&o); err != nil || resp.StatusCode != 201 {
			t.Fatalf("POST = %d, %v", resp.StatusCode, err)
		}
		return o.ID
	}
	status := func(id string) string {
		req, _ := http.NewRequest("GET", base+"/orders/"+id, nil)
		req.Header.Set("Authorization", "Bearer dev-user")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var o struct{ Status string }
		_ = json.NewDecoder(resp.Body).Decode(&o)
		return o.Status
	}
	ok := post("lc-1", `{"customer_id":"c-1","currency":"RUB","items":[{"sku":"sku-1","quantity":2,"unit_price_minor":1500}]}`)
	out := post("lc-2", `{"customer_id":"c-1","currency":"RUB","items":[{"sku":"sku-out","quantity":1,"unit_price_minor":100}]}`)
	deadline := time.Now().Add(20 * time.Second)
	for status(ok) != "CONFIRMED" || status(out) != "CANCELLED" {
		if time.Now().After(deadline) {
			t.Fatalf("after 20 s: %s is %s (want CONFIRMED), %s is %s (want CANCELLED)", ok, status(ok), out, status(out))
		}
		time.Sleep(100 * time.Millisecond)
	}

	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("the runner did not stop cleanly: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the runner did not stop within 10 s of Ctrl-C")
	}
}
