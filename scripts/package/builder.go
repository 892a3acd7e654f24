package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// The golang123 builder's documented limits (platform-notes §1.2, from
// _includes/functions-limits.md): dependency installation and build within 5
// minutes, 1 GB of RAM, 700 MB of it tmpfs for temporary files including
// downloads, 50% of a CPU.
const (
	limitBuildTime = 5 * time.Minute
	limitMemory    = 1 << 30
	limitTmpBytes  = 700 << 20
)

// The project's own targets, stricter than the limits.
const (
	targetBuildTime = 120 * time.Second
	targetMaxRSS    = 500 << 20
	targetModBytes  = 300 << 20
)

// builder is the go command that verifies the zips: the machine's (GOTOOLCHAIN
// local, the fast default for CI) or a named release such as go1.23.9, the
// runtime's, fetched through the module proxy like GOTOOLCHAIN=go1.23.9 does.
type builder struct {
	Go      string // path of the go binary
	Version string // its `go env GOVERSION`
}

// newBuilder resolves toolchain ("local" or "go1.N.M") to a go binary. A named
// toolchain is located with GOTOOLCHAIN=<name> go env GOROOT (which downloads
// it into the module cache once) and then run directly with GOTOOLCHAIN=local,
// so a cold measurement never counts the toolchain's own download.
func newBuilder(toolchain string) (builder, error) {
	gobin := "go"
	if toolchain != "local" {
		if !strings.HasPrefix(toolchain, "go1.") {
			return builder{}, fmt.Errorf("-toolchain %q: want local or a release such as go1.23.9", toolchain)
		}
		cmd := exec.Command("go", "env", "GOROOT")
		cmd.Env = append(withoutEnv("GOTOOLCHAIN", "GOFLAGS", "GOWORK"), "GOTOOLCHAIN="+toolchain, "GOWORK=off")
		cmd.Dir = os.TempDir()
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			return builder{}, fmt.Errorf("fetching toolchain %s (GOTOOLCHAIN=%s go env GOROOT): %v\n%s", toolchain, toolchain, err, strings.TrimSpace(stderr.String()))
		}
		gobin = filepath.Join(strings.TrimSpace(string(out)), "bin", "go")
	}
	cmd := exec.Command(gobin, "env", "GOVERSION")
	cmd.Env = goEnv("")
	cmd.Dir = os.TempDir()
	out, err := cmd.Output()
	if err != nil {
		return builder{}, fmt.Errorf("%s env GOVERSION: %v", gobin, err)
	}
	b := builder{Go: gobin, Version: strings.TrimSpace(string(out))}
	if toolchain != "local" && b.Version != toolchain {
		return builder{}, fmt.Errorf("toolchain %s resolved to %s (%s)", toolchain, b.Version, gobin)
	}
	return b, nil
}

// withoutEnv is the environment without the named variables.
func withoutEnv(names ...string) []string {
	drop := map[string]bool{}
	for _, n := range names {
		drop[n] = true
	}
	var env []string
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); !drop[k] {
			env = append(env, kv)
		}
	}
	return env
}

// run runs the builder's go command in dir with goEnv(goflags) plus extra.
func (b builder) run(dir, goflags string, extra []string, args ...string) ([]byte, error) {
	cmd := exec.Command(b.Go, args...)
	cmd.Dir = dir
	cmd.Env = append(goEnv(goflags), extra...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%s %s (in %s, GOFLAGS=%s): %v\n%s", b.Version, strings.Join(args, " "), dir, goflags, err, strings.TrimSpace(stderr.String()))
	}
	return stdout.Bytes(), nil
}

// coldBuild is one measured build from empty caches.
type coldBuild struct {
	Wall     time.Duration
	MaxRSS   int64 // bytes: the largest process of the build (go, compile, link, cgo)
	ModBytes int64 // bytes on disk of the fresh module cache (downloads and extracted modules)
	GoCache  int64 // bytes on disk of the fresh build cache
	OneCPU   string
}

// buildCold builds the module in src into so the way the builder does, from
// an empty module cache and an empty build cache, on one CPU (GOMAXPROCS=1,
// and taskset -c 0 when available), and measures wall time, the largest
// process (the child's rusage Maxrss: Linux wait4 reports the maximum over
// the go command and every descendant it waited for) and the caches' size.
func (b builder) buildCold(src, so string) (coldBuild, error) {
	var c coldBuild
	tmp, err := os.MkdirTemp("", "package-cold-")
	if err != nil {
		return c, err
	}
	modcache, gocache, gopath := filepath.Join(tmp, "mod"), filepath.Join(tmp, "cache"), filepath.Join(tmp, "gopath")
	env := append(goEnv("-mod=mod"), "GOMODCACHE="+modcache, "GOCACHE="+gocache, "GOPATH="+gopath, "GOMAXPROCS=1")
	defer func() {
		// Module cache files are read-only: let go clean remove them.
		clean := exec.Command(b.Go, "clean", "-modcache")
		clean.Env, clean.Dir = env, tmp
		_ = clean.Run()
		os.RemoveAll(tmp)
	}()
	args := []string{b.Go, "build", "-tags", "ycf", "-buildmode=plugin", "-o", so, "."}
	c.OneCPU = "GOMAXPROCS=1"
	if ts, err := exec.LookPath("taskset"); err == nil {
		args = append([]string{ts, "-c", "0"}, args...)
		c.OneCPU = "GOMAXPROCS=1, taskset -c 0"
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir, cmd.Env = src, env
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = io.Discard, &stderr
	start := time.Now()
	err = cmd.Run()
	c.Wall = time.Since(start)
	if err != nil {
		return c, fmt.Errorf("cold build (%s): %v\n%s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		c.MaxRSS = ru.Maxrss * 1024 // kilobytes on Linux
	}
	if c.ModBytes, err = diskUsage(modcache); err != nil {
		return c, err
	}
	if c.GoCache, err = diskUsage(gocache); err != nil {
		return c, err
	}
	return c, nil
}

// diskUsage is the space the files under dir occupy (allocated blocks).
func diskUsage(dir string) (int64, error) {
	var n int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if st, ok := info.Sys().(*syscall.Stat_t); ok {
			n += st.Blocks * 512
		} else {
			n += info.Size()
		}
		return nil
	})
	return n, err
}

// check compares a cold build against the builder's limits (failing past
// margin × limit) and the project's targets (failing only when strict).
func (c coldBuild) check(margin float64, strict bool) (verdicts []string, err error) {
	var errs []error
	row := func(what string, got, limit, target float64, format func(float64) string) {
		v := fmt.Sprintf("%-14s %10s   limit %s (fail above %s)   target < %s", what, format(got), format(limit), format(limit*margin), format(target))
		switch {
		case got > limit*margin:
			v += "   FAIL: past the safety margin of the builder limit"
			errs = append(errs, fmt.Errorf("%s %s is past %.0f%% of the builder's limit %s", what, format(got), margin*100, format(limit)))
		case got >= target:
			v += "   target missed"
			if strict {
				errs = append(errs, fmt.Errorf("%s %s misses the target %s", what, format(got), format(target)))
			}
		default:
			v += "   ok"
		}
		verdicts = append(verdicts, v)
	}
	secs := func(f float64) string { return fmt.Sprintf("%.0f s", f) }
	mb := func(f float64) string { return fmt.Sprintf("%.0f MB", f/(1<<20)) }
	row("build time", c.Wall.Seconds(), limitBuildTime.Seconds(), targetBuildTime.Seconds(), secs)
	row("largest proc", float64(c.MaxRSS), limitMemory, targetMaxRSS, mb)
	row("modules", float64(c.ModBytes), limitTmpBytes, targetModBytes, mb)
	// Whether the builder's build cache shares the 700 MB tmpfs is not
	// documented: shown, never failed.
	verdicts = append(verdicts, fmt.Sprintf("%-14s %10s   (informational: 700 MB if the build cache shares the builder's tmpfs, which is undocumented)",
		"mod+build cache", mb(float64(c.ModBytes+c.GoCache))))
	return verdicts, errors.Join(errs...)
}
