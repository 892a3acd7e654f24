package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// goEnv is the environment of every go command the tool runs: the local
// toolchain only (never a downloaded one), no workspace, the runtime's
// platform, cgo on (plugins need it), and exactly the GOFLAGS given.
// GOPROXY, GOMODCACHE, GOSUMDB and the rest come from the caller's environment.
func goEnv(goflags string) []string {
	drop := map[string]bool{"GOFLAGS": true, "GOTOOLCHAIN": true, "GOWORK": true, "GOOS": true, "GOARCH": true, "CGO_ENABLED": true}
	var env []string
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); !drop[k] {
			env = append(env, kv)
		}
	}
	return append(env, "GOFLAGS="+goflags, "GOTOOLCHAIN=local", "GOWORK=off", "GOOS=linux", "GOARCH=amd64", "CGO_ENABLED=1")
}

// runGo runs `go args...` in dir and returns its standard output; a failure
// carries the command and its standard error.
func runGo(dir, goflags string, args ...string) ([]byte, error) {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = goEnv(goflags)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("go %s (in %s, GOFLAGS=%s): %v\n%s", strings.Join(args, " "), dir, goflags, err, strings.TrimSpace(stderr.String()))
	}
	return stdout.Bytes(), nil
}

// repo describes the repository module.
type repo struct {
	Root       string
	ModulePath string // "ordersaga"
	GoVersion  string // the go line, e.g. "1.23.9"
	Requires   []string
	GoSum      []byte
	ModCache   string // GOMODCACHE
}

// Lang is the language version the zip's files are pinned to, e.g. "go1.23".
func (r repo) Lang() string {
	v, err := parseGoVersion(r.GoVersion)
	if err != nil {
		return "go" + r.GoVersion // readRepo validated it; not reached
	}
	return fmt.Sprintf("go%d.%d", v.major, v.minor)
}

var goLineRE = regexp.MustCompile(`^go\s+(\S+)\s*$`)

// readRepo reads root/go.mod and root/go.sum.
func readRepo(root string) (repo, error) {
	r := repo{Root: root}
	mod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		return r, err
	}
	if r.GoSum, err = os.ReadFile(filepath.Join(root, "go.sum")); err != nil {
		return r, err
	}
	inRequire := false
	for i, line := range strings.Split(string(mod), "\n") {
		line = strings.TrimSpace(line)
		if c := strings.Index(line, "//"); c >= 0 && !strings.HasPrefix(line, "//") {
			line = strings.TrimSpace(line[:c])
		}
		switch {
		case line == "" || strings.HasPrefix(line, "//"):
		case inRequire && line == ")":
			inRequire = false
		case inRequire:
			r.Requires = append(r.Requires, line)
		case strings.HasPrefix(line, "module "):
			r.ModulePath = strings.Trim(strings.TrimSpace(strings.TrimPrefix(line, "module ")), `"`)
		case goLineRE.MatchString(line):
			r.GoVersion = goLineRE.FindStringSubmatch(line)[1]
		case line == "require (":
			inRequire = true
		case strings.HasPrefix(line, "require "):
			r.Requires = append(r.Requires, strings.TrimSpace(strings.TrimPrefix(line, "require ")))
		case strings.HasPrefix(line, "toolchain "), strings.HasPrefix(line, "godebug "):
		default:
			// replace/exclude/retract would change what the zip's go.mod means.
			return r, fmt.Errorf("go.mod:%d: %q is not supported by the packager (only module, go, toolchain, require)", i+1, line)
		}
	}
	if r.ModulePath == "" || r.GoVersion == "" {
		return r, fmt.Errorf("%s/go.mod: module path or go line missing", root)
	}
	if _, err := parseGoVersion(r.GoVersion); err != nil {
		return r, fmt.Errorf("%s/go.mod: %w", root, err)
	}
	out, err := runGo(root, "-mod=readonly", "env", "GOMODCACHE")
	if err != nil {
		return r, err
	}
	r.ModCache = strings.TrimSpace(string(out))
	return r, nil
}

// goVersion is a parsed Go version such as 1.23, 1.23.9 or 1.24rc1, in the
// go command's order: 1.23 < 1.23beta1 < 1.23rc1 < 1.23.0 < 1.23.9.
type goVersion struct{ major, minor, kind, n int }

// Kinds of goVersion, in sort order.
const (
	kindLang = iota // "1.23": the language version
	kindBeta
	kindRC
	kindRelease // "1.23.9"
)

// parseGoVersion parses v (an optional "go" prefix is allowed).
func parseGoVersion(v string) (goVersion, error) {
	bad := fmt.Errorf("invalid Go version %q", v)
	s := strings.TrimPrefix(v, "go")
	g := goVersion{kind: kindLang}
	for _, k := range []struct {
		tag  string
		kind int
	}{{"beta", kindBeta}, {"rc", kindRC}} {
		if i := strings.Index(s, k.tag); i >= 0 {
			n, err := strconv.Atoi(s[i+len(k.tag):])
			if err != nil {
				return g, bad
			}
			g.kind, g.n, s = k.kind, n, s[:i]
		}
	}
	parts := strings.Split(s, ".")
	if len(parts) == 3 {
		if g.kind != kindLang {
			return g, bad
		}
		n, err := strconv.Atoi(parts[2])
		if err != nil || n < 0 {
			return g, bad
		}
		g.kind, g.n = kindRelease, n
		parts = parts[:2]
	}
	if len(parts) == 1 {
		parts = append(parts, "0") // "1" is an old spelling of 1.0
	}
	if len(parts) != 2 {
		return g, bad
	}
	var err1, err2 error
	g.major, err1 = strconv.Atoi(parts[0])
	g.minor, err2 = strconv.Atoi(parts[1])
	if err1 != nil || err2 != nil || g.major < 0 || g.minor < 0 {
		return g, bad
	}
	return g, nil
}

// compareGo compares two Go versions (-1, 0, +1).
func compareGo(a, b goVersion) int {
	for _, d := range [][2]int{{a.major, b.major}, {a.minor, b.minor}, {a.kind, b.kind}, {a.n, b.n}} {
		if d[0] != d[1] {
			if d[0] < d[1] {
				return -1
			}
			return 1
		}
	}
	return 0
}
