package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// verifier builds and loads the zips the way the golang123 builder and
// runtime do.
type verifier struct {
	Root    string  // repository root (for the sample events)
	Builder builder // the go command: the machine's, or go1.23.9
	Host    string  // pluginhost binary built by Builder
	Cold    bool    // measure a cold build of each zip
	Margin  float64 // fail a cold build past Margin × each builder limit
	Strict  bool    // also fail a cold build that misses a target
	Log     io.Writer
}

// verifyZip unpacks the zip at path into a temporary directory and builds it
// the way the golang123 builder does, as closely as it can be reproduced
// here: -tags ycf, -buildmode=plugin, -mod=mod, by v.Builder (go1.23.9 for
// the runtime's own version; the machine's Go for the fast CI check). (The
// builder's exact command is not documented. With Go ≥ 1.21 a go.mod
// without a go line builds under -mod=readonly only if no dependency declares
// go ≥ 1.17, so the builder must let the go command add the go line — its own
// version — as -mod=mod does; the zip's files are pinned to the repository's
// language version by their //go:build lines either way.) The build must not
// need any checksum that the zip's go.sum lacks, and the plugin must export
// main.Handler. With v.Cold the build starts from empty module and build
// caches on one CPU and is measured against the builder's limits. Then the
// plugin is loaded and called once in a host process (pluginhost).
func (v verifier) verifyZip(name, path string) ([]string, error) {
	src, err := os.MkdirTemp("", "verify-src-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(src)
	out, err := os.MkdirTemp("", "verify-out-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(out)
	names, err := unzipTo(path, src)
	if err != nil {
		return nil, err
	}
	if err := checkLayout(names); err != nil {
		return nil, err
	}
	modBefore, err := os.ReadFile(filepath.Join(src, "go.mod"))
	if err != nil {
		return nil, err
	}
	if err := checkGoMod(modBefore); err != nil {
		return nil, err
	}
	sumBefore, err := readSum(filepath.Join(src, "go.sum"))
	if err != nil {
		return nil, err
	}
	so := filepath.Join(out, "function.so")
	var lines []string
	if v.Cold {
		fmt.Fprintf(v.Log, "package: %s: cold build with %s (empty caches, one CPU); this takes minutes\n", name, v.Builder.Version)
		c, err := v.Builder.buildCold(src, so)
		if err != nil {
			return nil, err
		}
		verdicts, cerr := c.check(v.Margin, v.Strict)
		lines = append(lines, fmt.Sprintf("cold build of %s with %s, %s:", name, v.Builder.Version, c.OneCPU))
		for _, l := range verdicts {
			lines = append(lines, "  "+l)
		}
		lines = append(lines, fmt.Sprintf("  (module cache %d MB, build cache %d MB)", c.ModBytes>>20, c.GoCache>>20))
		if cerr != nil {
			return lines, cerr
		}
	} else if _, err := v.Builder.run(src, "-mod=mod", nil, "build", "-tags", "ycf", "-buildmode=plugin", "-o", so, "."); err != nil {
		return nil, err
	}
	sumAfter, err := readSum(filepath.Join(src, "go.sum"))
	if err != nil {
		return lines, err
	}
	var missing []string
	for _, k := range sortedKeys(sumAfter) {
		if _, ok := sumBefore[k]; !ok {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		return lines, fmt.Errorf("the build needed checksums missing from go.sum: %s", strings.Join(missing, ", "))
	}
	syms, err := v.Builder.run(out, "", nil, "tool", "nm", so)
	if err != nil {
		return lines, err
	}
	if mod := modulePath(modBefore); !exportsHandler(syms, mod) {
		return lines, fmt.Errorf("the plugin exports no %s.Handler (entry point index.Handler)", mod)
	}
	res, err := v.callOnce(name, so)
	if err != nil {
		return lines, err
	}
	return append(lines, res), nil
}

// sampleEvents names, per function, the platform sample it is called with
// (shared/transport/yc/testdata; see its README); dlqredrive gets a console command.
var sampleEvents = map[string]string{
	"orderapi":     "shared/transport/yc/testdata/apigw_v1_jwt_get.json",
	"sagaadvancer": "shared/transport/yc/testdata/queue_snake.json",
	"outboxrelay":  "shared/transport/yc/testdata/timer.json",
	"sagarecovery": "shared/transport/yc/testdata/timer.json",
	"dlqredrive":   `{"action":"stats"}`,
}

// hostEnvironment is all the plugin sees: the function is told it runs in
// the cloud (YDB and Message Queue) and given nothing else, so its cold
// start must fail on the missing settings, without touching a network.
func hostEnvironment(name, home string) []string {
	return []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "TMPDIR=" + home,
		"ORDERSAGA_STORE=ydb", "ORDERSAGA_QUEUE=ymq", "ORDERSAGA_FUNCTION=" + name}
}

// callOnce loads so in the plugin host and calls its Handler with the
// function's sample event; the host fails unless the call ends in the
// documented cold-start failure without a panic.
func (v verifier) callOnce(name, so string) (string, error) {
	event := sampleEvents[name]
	if event == "" {
		event = "shared/transport/yc/testdata/timer.json"
	}
	dir, err := os.MkdirTemp("", "verify-host-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	eventFile := filepath.Join(dir, "event.json")
	if strings.HasPrefix(event, "{") {
		err = os.WriteFile(eventFile, []byte(event), 0o644)
	} else {
		var b []byte
		if b, err = os.ReadFile(filepath.Join(v.Root, event)); err == nil {
			err = os.WriteFile(eventFile, b, 0o644)
		}
	}
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, v.Host, "-plugin", so, "-event", eventFile)
	cmd.Dir, cmd.Env = dir, hostEnvironment(name, dir)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	got := strings.TrimSpace(stdout.String())
	if runErr != nil {
		return "", fmt.Errorf("loading and calling the plugin (%s): %v\n%s\n%s", event, runErr, got, lastLines(stderr.String(), 20))
	}
	return fmt.Sprintf("loaded %s with plugin.Open, called Handler once with %s: %s", name, event, got), nil
}

// lastLines returns the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// buildHost builds the plugin host with the verifier's go command (a plugin
// loads only into a process built by the same toolchain).
func buildHost(root string, b builder, dir string) (string, error) {
	bin := filepath.Join(dir, "pluginhost")
	if _, err := b.run(root, "", nil, "build", "-o", bin, "./scripts/package/pluginhost"); err != nil {
		return "", err
	}
	return bin, nil
}

// checkLayout checks the zip's entry names: index.go, go.mod and go.sum at
// the root; no test files.
func checkLayout(names []string) error {
	have := map[string]bool{}
	for _, n := range names {
		have[n] = true
		if strings.HasSuffix(n, "_test.go") {
			return fmt.Errorf("the zip holds a test file %s", n)
		}
	}
	for _, want := range []string{"index.go", "go.mod", "go.sum"} {
		if !have[want] {
			return fmt.Errorf("the zip has no %s at its root", want)
		}
	}
	return nil
}

// checkGoMod checks the zip's go.mod: a module that is not main, and no go
// or toolchain line.
func checkGoMod(mod []byte) error {
	for _, line := range strings.Split(string(mod), "\n") {
		t := strings.TrimSpace(line)
		if modGoLineRE.MatchString(t) || strings.HasPrefix(t, "toolchain ") {
			return fmt.Errorf("go.mod has a %q line; the runtime needs none", t)
		}
		if t == "module main" {
			return errors.New("go.mod's module must not be named main")
		}
	}
	return nil
}

// modulePath returns the module path of a go.mod.
func modulePath(mod []byte) string {
	for _, line := range strings.Split(string(mod), "\n") {
		if t := strings.TrimSpace(line); strings.HasPrefix(t, "module ") {
			return strings.Trim(strings.TrimSpace(strings.TrimPrefix(t, "module ")), `"`)
		}
	}
	return ""
}

// exportsHandler reports whether `go tool nm` output lists the exported
// text symbol <pkg>.Handler; in a plugin, package main at the module root
// keeps the module path as its symbol prefix.
func exportsHandler(nm []byte, pkg string) bool {
	for _, line := range strings.Split(string(nm), "\n") {
		f := strings.Fields(line)
		if len(f) >= 3 && f[len(f)-2] == "T" && f[len(f)-1] == pkg+".Handler" {
			return true
		}
	}
	return false
}
