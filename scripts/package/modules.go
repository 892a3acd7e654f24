package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// bundle is everything one zip holds.
type bundle struct {
	Files   []file
	Modules int // require lines in the zip's go.mod
}

// buildBundle collects the sources of function name and computes its go.mod
// and go.sum in a scratch module (see the package doc).
func buildBundle(r repo, name, maxGo string) (bundle, error) {
	limit, err := parseGoVersion(maxGo)
	if err != nil {
		return bundle{}, err
	}
	if _, err := os.Stat(filepath.Join(r.Root, "functions", name, "index.go")); err != nil {
		return bundle{}, fmt.Errorf("functions/%s/index.go is missing (entry point index.Handler): %w", name, err)
	}
	pkgs, err := listDeps(r.Root, "-mod=readonly", "./functions/"+name)
	if err != nil {
		return bundle{}, err
	}
	files, err := sourceFiles(r, name, pkgs)
	if err != nil {
		return bundle{}, err
	}
	tmp, err := os.MkdirTemp("", "package-"+name+"-")
	if err != nil {
		return bundle{}, err
	}
	if os.Getenv("PACKAGE_KEEP_TMP") == "" {
		defer os.RemoveAll(tmp)
	} else {
		fmt.Fprintf(os.Stderr, "package: %s: keeping scratch module %s\n", name, tmp)
	}
	if err := writeTree(tmp, files); err != nil {
		return bundle{}, err
	}
	gomod := "module " + r.ModulePath + "\n\nrequire (\n\t" + strings.Join(r.Requires, "\n\t") + "\n)\n"
	if err := os.WriteFile(filepath.Join(tmp, "go.mod"), []byte(gomod), 0o644); err != nil {
		return bundle{}, err
	}
	if err := os.WriteFile(filepath.Join(tmp, "go.sum"), r.GoSum, 0o644); err != nil {
		return bundle{}, err
	}
	// 1. What `go mod tidy` keeps: the requirements of exactly this package set.
	if _, err := runGo(tmp, "-mod=mod", "mod", "tidy"); err != nil {
		return bundle{}, err
	}
	modData, err := os.ReadFile(filepath.Join(tmp, "go.mod"))
	if err != nil {
		return bundle{}, err
	}
	modData, requires := stripGoLines(modData)
	if err := os.WriteFile(filepath.Join(tmp, "go.mod"), modData, 0o644); err != nil {
		return bundle{}, err
	}
	tidySum, err := readSum(filepath.Join(tmp, "go.sum"))
	if err != nil {
		return bundle{}, err
	}
	known, err := parseSum(r.GoSum)
	if err != nil {
		return bundle{}, fmt.Errorf("go.sum: %w", err)
	}
	for k, v := range tidySum {
		known[k] = v
	}
	// 2. Without a go line the graph is unpruned: every module version in it
	// needs its go.mod checksum, and none may need a newer Go than the runtime.
	nodes, err := moduleGraph(tmp, limit)
	if err != nil {
		return bundle{}, err
	}
	sum := map[string]string{}
	for _, m := range nodes {
		h, err := goModHash(r.ModCache, m.Path, m.Version)
		if err != nil {
			return bundle{}, err
		}
		key := m.Path + " " + m.Version + "/go.mod"
		if k, ok := known[key]; ok && k != h {
			return bundle{}, fmt.Errorf("checksum mismatch for %s: go.sum has %s, the module cache gives %s", key, k, h)
		}
		sum[key] = h
	}
	// 3. Zip checksums of the modules that provide packages, at the versions
	// the builder selects — which must be the repository's versions.
	if err := os.WriteFile(filepath.Join(tmp, "go.sum"), formatSum(sum), 0o644); err != nil {
		return bundle{}, err
	}
	if err := addZipSums(pkgs, tmp, known, sum); err != nil {
		return bundle{}, err
	}
	files = append(files, file{Name: "go.mod", Data: modData}, file{Name: "go.sum", Data: formatSum(sum)})
	return bundle{Files: files, Modules: requires}, nil
}

// addZipSums loads the scratch module's packages the way the builder must
// (-mod=mod: a go.mod without a go line fails -mod=readonly as soon as a
// dependency declares go ≥ 1.17, because the go command has to add the go
// line; it writes its own version and keeps the unpruned selection), checks
// that every module providing a package has the version the repository
// builds with, and adds its zip checksum to sum.
func addZipSums(rootPkgs []listedPackage, dir string, known, sum map[string]string) error {
	want := map[string]string{}
	for _, p := range rootPkgs {
		if p.Module != nil && !p.Module.Main {
			want[p.Module.Path] = p.Module.Version
		}
	}
	pkgs, err := listDeps(dir, "-mod=mod", ".")
	if err != nil {
		return err
	}
	// The go command may have needed (and verified against the checksum
	// database) more checksums than the go.mod files of the graph and the zips
	// of the package-providing modules — e.g. zips it opens to rule out an
	// ambiguous import. The builder needs them too.
	added, err := readSum(filepath.Join(dir, "go.sum"))
	if err != nil {
		return err
	}
	for k, v := range added {
		if _, ok := sum[k]; !ok {
			sum[k] = v
		}
	}
	for _, p := range pkgs {
		if p.Module == nil || p.Module.Main {
			continue
		}
		m := p.Module
		if w := want[m.Path]; w != m.Version {
			return fmt.Errorf("the builder would build %s %s but the repository builds %q: the unpruned module graph of a go.mod without a go line selects another version", m.Path, m.Version, w)
		}
		key := m.Path + " " + m.Version
		h, ok := known[key]
		if !ok {
			h, ok = added[key]
		}
		if !ok {
			return fmt.Errorf("no checksum for %s", key)
		}
		sum[key] = h
	}
	return nil
}

// graphNode is one module version of the module graph.
type graphNode struct{ Path, Version string }

// moduleGraph runs `go mod graph` (read-only) in dir and returns every module
// version in it except the main module, failing when any declares a Go
// version newer than limit.
func moduleGraph(dir string, limit goVersion) ([]graphNode, error) {
	out, err := runGo(dir, "-mod=readonly", "mod", "graph")
	if err != nil {
		return nil, err
	}
	return parseGraph(out, limit)
}

// parseGraph parses `go mod graph` output (see moduleGraph).
func parseGraph(out []byte, limit goVersion) ([]graphNode, error) {
	seen := map[graphNode]bool{}
	var nodes []graphNode
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) != 2 {
			continue
		}
		for _, f := range fields {
			p, v, ok := strings.Cut(f, "@")
			if !ok {
				continue // the main module
			}
			if p == "go" || p == "toolchain" {
				g, err := parseGoVersion(v)
				if err != nil {
					return nil, fmt.Errorf("module graph: %s: %w", f, err)
				}
				// The main module's go@ edge is only the maximum of its
				// dependencies' (it has no go line): blame the dependency.
				if p == "go" && compareGo(g, limit) > 0 && strings.Contains(fields[0], "@") {
					return nil, fmt.Errorf("refusing: %s declares go %s, newer than the runtime's Go (the golang123 builder cannot build it)", fields[0], v)
				}
				continue
			}
			n := graphNode{p, v}
			if !seen[n] {
				seen[n] = true
				nodes = append(nodes, n)
			}
		}
	}
	return nodes, sc.Err()
}

var modGoLineRE = regexp.MustCompile(`(?m)^go\s+(\S+)\s*$`)

// stripGoLines removes the go and toolchain lines from a go.mod and counts
// its require lines.
func stripGoLines(mod []byte) ([]byte, int) {
	var out []string
	requires, inRequire := 0, false
	for _, line := range strings.Split(string(mod), "\n") {
		t := strings.TrimSpace(line)
		switch {
		case modGoLineRE.MatchString(t), strings.HasPrefix(t, "toolchain "):
			continue
		case t == "require (":
			inRequire = true
		case inRequire && t == ")":
			inRequire = false
		case inRequire && t != "" && !strings.HasPrefix(t, "//"), strings.HasPrefix(t, "require ") && t != "require (":
			requires++
		}
		out = append(out, line)
	}
	s := strings.Join(out, "\n")
	for strings.Contains(s, "\n\n\n") {
		s = strings.ReplaceAll(s, "\n\n\n", "\n\n")
	}
	return []byte(s), requires
}

// writeTree writes files under dir.
func writeTree(dir string, files []file) error {
	for _, f := range files {
		p := filepath.Join(dir, filepath.FromSlash(f.Name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, f.Data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// sortedKeys returns m's keys in order.
func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
