package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// The README's tour is executable documentation: this test extracts its
// blocks and runs them, so the README cannot drift from the code.
//
// In the section "## A ten-minute tour" every ```sh block is preceded by a
// marker line:
//
//	<!-- tour:runner -->  the command that starts the runner in terminal 1: the
//	                      test starts the built runner with the same environment
//	                      assignments (its other lines, such as rm -rf .localcloud,
//	                      are what a fresh -data folder gives the test anyway)
//	<!-- tour -->         commands for terminal 2, run in order in one shell
//
// Lines "# → TEXT" inside a block name text that the block's output
// (stdout and stderr) must contain. The commands reach the runner only
// through the shell variable B, set once (tourBaseLine): the test checks
// that no other line names the address, points B at its own runner, and runs the whole tour once in bash and once in zsh
// (each against its own runner, in parallel), with -e, -u and pipefail, so a
// failing command stops the tour at its block. zsh is skipped, with the
// reason logged, when it is not installed.

const (
	tourReadme  = "../../README.md"
	tourHeading = "## A ten-minute tour"
	tourAddr    = "localhost:8080"
	// tourBaseLine is the one line of the tour that names the runner's
	// address, so that another port is one edit.
	tourBaseLine = "B=http://" + tourAddr
	blockDone    = "@@tour-block-done@@"
	// blockTimeout bounds one block: the slowest waits up to 60 s for dead
	// letters that normally appear within about 20 s.
	blockTimeout = 75 * time.Second
)

type tourBlock struct {
	line   int // line of the opening fence in README.md
	runner bool
	code   string
	expect []string
}

var expectRe = regexp.MustCompile(`^\s*# → (.+?)\s*$`)

// parseTour returns the marked blocks of the tour section, in order. It
// fails on a ```sh block without a marker and on a marker without a block.
func parseTour(readme string) ([]tourBlock, error) {
	lines := strings.Split(readme, "\n")
	start := -1
	for i, l := range lines {
		if strings.TrimSpace(l) == tourHeading {
			start = i
			break
		}
	}
	if start < 0 {
		return nil, fmt.Errorf("README has no %q section", tourHeading)
	}
	var blocks []tourBlock
	marker := ""
	for i := start + 1; i < len(lines); i++ {
		l := strings.TrimSpace(lines[i])
		if strings.HasPrefix(l, "## ") {
			break
		}
		switch {
		case l == "<!-- tour -->" || l == "<!-- tour:runner -->":
			marker = l
			continue
		case strings.HasPrefix(l, "```"):
			if l != "```sh" {
				return nil, fmt.Errorf("README.md:%d: tour blocks are ```sh blocks (got %q)", i+1, l)
			}
			if marker == "" {
				return nil, fmt.Errorf("README.md:%d: a ```sh block in the tour without a <!-- tour --> or <!-- tour:runner --> marker", i+1)
			}
			b := tourBlock{line: i + 1, runner: marker == "<!-- tour:runner -->"}
			var code []string
			for i++; i < len(lines) && strings.TrimSpace(lines[i]) != "```"; i++ {
				code = append(code, lines[i])
				if m := expectRe.FindStringSubmatch(lines[i]); m != nil {
					b.expect = append(b.expect, m[1])
				}
			}
			b.code = strings.Join(code, "\n") + "\n"
			blocks = append(blocks, b)
			marker = ""
			continue
		}
		if marker != "" && l != "" {
			return nil, fmt.Errorf("README.md:%d: a tour marker must be followed by a ```sh block", i+1)
		}
	}
	return blocks, nil
}

// runnerEnv returns the environment assignments of the runner block's
// `go run ./scripts/localcloud` command; it fails on arguments after it.
func runnerEnv(b tourBlock) ([]string, error) {
	joined := strings.ReplaceAll(b.code, "\\\n", " ")
	assign := regexp.MustCompile(`^[A-Z_][A-Z0-9_]*=\S*$`)
	for _, l := range strings.Split(joined, "\n") {
		f := strings.Fields(l)
		for i := 0; i+2 < len(f); i++ {
			if f[i] != "go" || f[i+1] != "run" || f[i+2] != "./scripts/localcloud" {
				continue
			}
			if i+3 != len(f) {
				return nil, fmt.Errorf("README.md:%d: the test does not pass runner flags %q", b.line, f[i+3:])
			}
			for _, kv := range f[:i] {
				if !assign.MatchString(kv) {
					return nil, fmt.Errorf("README.md:%d: %q before go run is not an environment assignment", b.line, kv)
				}
			}
			return f[:i], nil
		}
	}
	return nil, fmt.Errorf("README.md:%d: the runner block has no `go run ./scripts/localcloud`", b.line)
}

// checkBaseURL reports a tour that names the runner's address anywhere but
// in its one tourBaseLine, or that does not set B before its first command.
func checkBaseURL(blocks []tourBlock) error {
	set := false
	for _, b := range blocks {
		if b.runner {
			continue
		}
		for i, l := range strings.Split(b.code, "\n") {
			switch {
			case strings.TrimSpace(l) == tourBaseLine && !set:
				set = true
			case strings.TrimSpace(l) == tourBaseLine:
				return fmt.Errorf("README.md:%d: %s is set a second time", b.line+1+i, tourBaseLine)
			case strings.Contains(l, tourAddr) || strings.Contains(l, "127.0.0.1:8080"):
				return fmt.Errorf("README.md:%d: the runner's address outside %s (use $B): %s", b.line+1+i, tourBaseLine, l)
			case !set && strings.TrimSpace(l) != "" && !strings.HasPrefix(strings.TrimSpace(l), "#"):
				return fmt.Errorf("README.md:%d: a command before %s", b.line+1+i, tourBaseLine)
			}
		}
	}
	if !set {
		return fmt.Errorf("the tour never sets %s", tourBaseLine)
	}
	return nil
}

func TestCheckBaseURL(t *testing.T) {
	block := func(code string) []tourBlock { return []tourBlock{{line: 1, runner: true}, {line: 10, code: code}} }
	for code, want := range map[string]string{
		tourBaseLine + "\ncurl -s $B/orders\n":                    "",
		"# a comment\n" + tourBaseLine + "\ncurl -s \"$B/x?y\"\n": "",
		"curl -s $B/orders\n" + tourBaseLine + "\n":               "a command before",
		tourBaseLine + "\ncurl -s localhost:8080/orders\n":        "outside",
		tourBaseLine + "\ncurl -s 127.0.0.1:8080/orders\n":        "outside",
		tourBaseLine + "\n" + tourBaseLine + "\n":                 "second time",
		"curl -s x\n": "a command before",
		"":            "never sets",
	} {
		err := checkBaseURL(block(code))
		if want == "" && err != nil || want != "" && (err == nil || !strings.Contains(err.Error(), want)) {
			t.Errorf("checkBaseURL(%q) = %v, want %q", code, err, want)
		}
	}
}

func TestParseTourRejectsUnmarkedBlocks(t *testing.T) {
	bad := tourHeading + "\n\n```sh\ncurl localhost:8080\n```\n"
	if _, err := parseTour(bad); err == nil || !strings.Contains(err.Error(), "without a <!-- tour -->") {
		t.Fatalf("parseTour(unmarked block) = %v, want an error naming the missing marker", err)
	}
	ok := tourHeading + "\n<!-- tour -->\n```sh\necho hi\n# → hi\n```\n## Next\n```sh\nnot run\n```\n"
	blocks, err := parseTour(ok)
	if err != nil || len(blocks) != 1 || len(blocks[0].expect) != 1 || blocks[0].expect[0] != "hi" {
		t.Fatalf("parseTour(one marked block) = %+v, %v", blocks, err)
	}
}

func TestReadmeTour(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the local runner")
	}
	raw, err := os.ReadFile(tourReadme)
	if err != nil {
		t.Fatal(err)
	}
	blocks, err := parseTour(string(raw))
	if err != nil {
		t.Fatal(err)
	}
	if len(blocks) < 2 || !blocks[0].runner {
		t.Fatalf("the tour must start with a <!-- tour:runner --> block and have commands after it (got %d blocks)", len(blocks))
	}
	env, err := runnerEnv(blocks[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range blocks[1:] {
		if b.runner {
			t.Fatalf("README.md:%d: only the first tour block may start the runner", b.line)
		}
	}
	if err := checkBaseURL(blocks); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "localcloud")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Env = append(os.Environ(), "GOTOOLCHAIN=local")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	shells := []struct{ name, path string }{{"bash", "bash"}, {"zsh", "zsh"}}
	for _, sh := range shells {
		t.Run(sh.name, func(t *testing.T) {
			t.Parallel()
			path, err := exec.LookPath(sh.path)
			if err != nil {
				t.Skipf("%s is not installed (%v): the tour runs in bash only here", sh.name, err)
			}
			base := startTourRunner(t, bin, env)
			runTour(t, path, strings.TrimPrefix(base, "http://"), blocks[1:])
		})
	}
}

// startTourRunner starts the runner with the tour's environment on a free
// port and a fresh data folder; it returns the base URL it printed.
func startTourRunner(t *testing.T, bin string, env []string) string {
	t.Helper()
	cmd := exec.Command(bin, "-addr", "127.0.0.1:0", "-data", t.TempDir(), "-triggers", "../../triggers/triggers.yaml")
	cmd.Env = append(os.Environ(), env...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	logs := &lockedBuffer{}
	cmd.Stderr = logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("runner log (last 40 lines):\n%s", lastLines(logs.String(), 40))
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

// runTour feeds the blocks one by one to one shell, as a person pastes
// them, and checks each block's expectations against its output.
func runTour(t *testing.T, shell, addr string, blocks []tourBlock) {
	t.Helper()
	cmd := exec.Command(shell, "-e", "-u", "-o", "pipefail", "-s")
	cmd.Dir = t.TempDir()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { err := cmd.Wait(); _ = pw.Close(); exited <- err }()
	t.Cleanup(func() { _ = cmd.Process.Kill() })

	out := make(chan string)
	go func() {
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			out <- sc.Text()
		}
		close(out)
	}()
	if _, err := io.WriteString(stdin, "exec 2>&1\n"); err != nil {
		t.Fatal(err)
	}
	for _, b := range blocks {
		started := time.Now()
		// checkBaseURL made the B= line the only one naming the address.
		code := strings.ReplaceAll(b.code, tourBaseLine, "B=http://"+addr)
		if _, err := io.WriteString(stdin, code+"echo "+blockDone+"\n"); err != nil {
			t.Fatalf("README.md:%d: the shell stopped before this block: %v", b.line, err)
		}
		var got strings.Builder
		timeout := time.After(blockTimeout)
	read:
		for {
			select {
			case l, ok := <-out:
				if !ok {
					t.Fatalf("README.md:%d: the shell exited in this block (%v); output:\n%s", b.line, <-exited, got.String())
				}
				if before, done := strings.CutSuffix(l, blockDone); done {
					got.WriteString(before) // output without a final newline
					break read
				}
				got.WriteString(l + "\n")
			case <-timeout:
				t.Fatalf("README.md:%d: block still running after %v; output so far:\n%s", b.line, blockTimeout, got.String())
			}
		}
		for _, want := range b.expect {
			if !strings.Contains(got.String(), want) {
				t.Errorf("README.md:%d: output lacks %q; output:\n%s", b.line, want, got.String())
			}
		}
		t.Logf("README.md:%d: %d expectations, %.1fs", b.line, len(b.expect), time.Since(started).Seconds())
	}
	_ = stdin.Close()
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("the shell exited with %v after the last block", err)
		}
	case <-time.After(5 * time.Second):
		t.Error("the shell did not exit after its input ended")
	}
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func lastLines(s string, n int) string {
	ls := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(ls) > n {
		ls = ls[len(ls)-n:]
	}
	return strings.Join(ls, "\n")
}
