package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if binPath != "" {
		_ = os.RemoveAll(filepath.Dir(binPath))
	}
	os.Exit(code)
}

// runnerBinary builds the local runner once per test binary.
func runnerBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the local runner")
	}
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "localcloud-test")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "localcloud")
		build := exec.Command("go", "build", "-o", binPath, ".")
		build.Env = append(os.Environ(), "GOTOOLCHAIN=local")
		if out, err := build.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

// syncBuffer collects the runner's stderr.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestLocalCloudEndToEnd builds and runs the local runner exactly as the
// README's first command does, on a free loopback port, and drives one
// order to CONFIRMED and one to CANCELLED through its HTTP API; then it
// stops it with an interrupt and expects a clean exit (status 0), with
// every line it printed on stderr one JSON object: the startup progress,
// the shutdown, and no all-zero recovery summary at info.
func TestLocalCloudEndToEnd(t *testing.T) {
	bin := runnerBinary(t)
	cmd := exec.Command(bin, "-addr", "127.0.0.1:0", "-data", t.TempDir(), "-triggers", "../../triggers/triggers.yaml")
	cmd.Env = append(os.Environ(), "ORDERSAGA_LOG_LEVEL=")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
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

	msgs := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(stderr.String()), "\n") {
		var l map[string]any
		if err := json.Unmarshal([]byte(line), &l); err != nil {
			t.Errorf("stderr line is not JSON: %q", line)
			continue
		}
		msg, _ := l["msg"].(string)
		msgs[msg]++
		if msg == "saga recovery" && l["level"] == "INFO" && l["due_sagas"] == float64(0) && l["redriven"] == float64(0) &&
			l["reconciled"] == float64(0) && l["outbox_purged"] == float64(0) && l["dlq_ingested"] == float64(0) {
			t.Errorf("an idle recovery run logged at info: %s", line)
		}
	}
	for _, want := range []string{"localcloud starting", "store and queue ready", "queues ready", "timer started",
		"queue trigger started", "serving", "order accepted", "shutting down", "stopped"} {
		if msgs[want] == 0 {
			t.Errorf("no %q line on stderr (saw %v)", want, msgs)
		}
	}
}

// -help explains every flag, -quiet included, and exits 0.
func TestHelpExplainsTheFlags(t *testing.T) {
	out, err := exec.Command(runnerBinary(t), "-help").CombinedOutput()
	if err != nil {
		t.Fatalf("-help: %v\n%s", err, out)
	}
	for _, want := range []string{"-quiet", "warnings and errors only", "ORDERSAGA_LOG_LEVEL", "-addr", "-data", "-triggers", "Ctrl-C", "JSON"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("-help lacks %q:\n%s", want, out)
		}
	}
}

// A configuration error is one JSON line naming the variable, and exit
// status 1.
func TestBadConfigurationIsOneJSONLine(t *testing.T) {
	cmd := exec.Command(runnerBinary(t), "-addr", "127.0.0.1:0", "-data", t.TempDir(), "-triggers", "../../triggers/triggers.yaml")
	cmd.Env = append(os.Environ(), "ORDERSAGA_STORE=ydb", "YDB_CONNECTION_STRING=grpc://localhost:1/local",
		"ORDERSAGA_QUEUE=ymq", "YMQ_ACCESS_KEY_ID=a", "YMQ_SECRET_ACCESS_KEY=b")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Fatalf("exit = %v, want status 1; stderr:\n%s", err, stderr.String())
	}
	var last map[string]any
	for _, line := range strings.Split(strings.TrimSpace(stderr.String()), "\n") {
		if err := json.Unmarshal([]byte(line), &last); err != nil {
			t.Fatalf("stderr line is not JSON: %q", line)
		}
	}
	if e, _ := last["error"].(string); last["level"] != "ERROR" || !strings.Contains(e, "ORDERSAGA_STORE=ydb") || !strings.Contains(e, "cloudadapters") {
		t.Errorf("last line %v: want an ERROR naming ORDERSAGA_STORE=ydb and the cloud-adapter build", last)
	}
}
