package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"
)

// runner is the local runner as a child process: built once, started on a
// fixed loopback port and a data folder, killed with SIGKILL and started
// again on the same port and data, stopped with SIGTERM at the end.
type runner struct {
	bin, data, addr, triggers string
	env                       []string
	logPath                   string

	mu  sync.Mutex
	cmd *exec.Cmd
}

// buildRunner compiles ./scripts/localcloud into dir.
func buildRunner(dir string) (string, error) {
	bin := filepath.Join(dir, "localcloud")
	build := exec.Command("go", "build", "-o", bin, "./scripts/localcloud")
	build.Env = os.Environ()
	if out, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build the local runner: %v\n%s", err, out)
	}
	return bin, nil
}

// freeAddr returns a loopback address with a port free at this instant.
func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

var urlLine = regexp.MustCompile(`API:\s+(http://\S+)`)

// start starts the runner and waits until it prints its API address.
func (r *runner) start() error {
	cmd := exec.Command(r.bin, "-addr", r.addr, "-data", r.data, "-triggers", r.triggers, "-quiet")
	cmd.Env = append(os.Environ(), r.env...)
	logf, err := os.OpenFile(r.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	cmd.Stderr = logf
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	found := make(chan bool, 1)
	go func() {
		lines := bufio.NewScanner(stdout)
		ok := false
		for lines.Scan() {
			if !ok && urlLine.MatchString(lines.Text()) {
				ok = true
				found <- true
			}
		}
		if !ok {
			found <- false
		}
		logf.Close()
	}()
	select {
	case ok := <-found:
		if !ok {
			_ = cmd.Wait()
			return fmt.Errorf("the local runner exited before serving (its log: %s)", r.logPath)
		}
	case <-time.After(2 * time.Minute):
		_ = cmd.Process.Kill()
		return fmt.Errorf("the local runner did not serve within 2 minutes (its log: %s)", r.logPath)
	}
	r.mu.Lock()
	r.cmd = cmd
	r.mu.Unlock()
	return nil
}

// kill9 kills the runner with SIGKILL, as `kill -9` does, and reaps it.
func (r *runner) kill9() {
	r.mu.Lock()
	cmd := r.cmd
	r.cmd = nil
	r.mu.Unlock()
	if cmd != nil {
		_ = cmd.Process.Signal(syscall.SIGKILL)
		_ = cmd.Wait()
	}
}

// stop stops the runner with SIGTERM (a clean shutdown) and waits for it.
func (r *runner) stop() {
	r.mu.Lock()
	cmd := r.cmd
	r.cmd = nil
	r.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		_ = cmd.Process.Kill()
		<-done
	}
}

// api is an HTTP client of the runner's routes.
type api struct {
	base string
	hc   *http.Client
}

func newAPI(addr string) *api {
	return &api{base: "http://" + addr, hc: &http.Client{Timeout: 10 * time.Second,
		Transport: &http.Transport{MaxIdleConnsPerHost: 64}}}
}

// reply is one HTTP answer (code 0: no answer, err says why).
type reply struct {
	code int
	hdr  http.Header
	body []byte
	err  error
}

func (a *api) do(ctx context.Context, method, path, token, key string, body []byte) reply {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, a.base+path, rd)
	if err != nil {
		return reply{err: err}
	}
	req.Header.Set("Authorization", "Bearer "+token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	resp, err := a.hc.Do(req)
	if err != nil {
		return reply{err: err}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return reply{code: 0, err: err}
	}
	return reply{code: resp.StatusCode, hdr: resp.Header, body: b}
}

// admin sends an admin request and decodes a 2xx JSON answer into out.
func (a *api) admin(ctx context.Context, method, path string, in, out any) error {
	var body []byte
	if in != nil {
		var err error
		if body, err = json.Marshal(in); err != nil {
			return err
		}
	}
	rep := a.do(ctx, method, path, "dev-admin", "", body)
	if rep.err != nil {
		return rep.err
	}
	if rep.code/100 != 2 {
		return fmt.Errorf("%s %s = %d: %s", method, path, rep.code, strings.TrimSpace(string(rep.body)))
	}
	if out != nil {
		return json.Unmarshal(rep.body, out)
	}
	return nil
}

// orderView is the part of GET /orders/{id} the soak reads.
type orderView struct {
	ID           string `json:"id"`
	Status       string `json:"status"`
	StatusReason string `json:"status_reason"`
	TotalMinor   int64  `json:"total_minor"`
	Items        []struct {
		SKU      string `json:"sku"`
		Quantity int64  `json:"quantity"`
	} `json:"items"`
	Saga struct {
		State     string `json:"state"`
		Step      string `json:"step"`
		Attempts  int    `json:"attempts"`
		LastError string `json:"last_error"`
	} `json:"saga"`
}

func final(status string) bool {
	return status == "CONFIRMED" || status == "CANCELLED" || status == "FAILED"
}
