package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// verifyZip unpacks the zip at path into a temporary directory and builds it
// the way the golang123 builder does, as closely as it can be reproduced
// here: the local toolchain only, -tags ycf, -buildmode=plugin, -mod=mod.
// (The builder's exact command is not documented. With Go ≥ 1.21 a go.mod
// without a go line builds under -mod=readonly only if no dependency declares
// go ≥ 1.17, so the builder must let the go command add the go line — its own
// version — as -mod=mod does; the zip's files are pinned to the repository's
// language version by their //go:build lines either way.) The build must not
// need any checksum that the zip's go.sum lacks, and the plugin must export
// main.Handler.
func verifyZip(path string) error {
	src, err := os.MkdirTemp("", "verify-src-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(src)
	out, err := os.MkdirTemp("", "verify-out-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(out)
	names, err := unzipTo(path, src)
	if err != nil {
		return err
	}
	if err := checkLayout(names); err != nil {
		return err
	}
	modBefore, err := os.ReadFile(filepath.Join(src, "go.mod"))
	if err != nil {
		return err
	}
	if err := checkGoMod(modBefore); err != nil {
		return err
	}
	sumBefore, err := readSum(filepath.Join(src, "go.sum"))
	if err != nil {
		return err
	}
	so := filepath.Join(out, "function.so")
	if _, err := runGo(src, "-mod=mod", "build", "-tags", "ycf", "-buildmode=plugin", "-o", so, "."); err != nil {
		return err
	}
	sumAfter, err := readSum(filepath.Join(src, "go.sum"))
	if err != nil {
		return err
	}
	var missing []string
	for _, k := range sortedKeys(sumAfter) {
		if _, ok := sumBefore[k]; !ok {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("the build needed checksums missing from go.sum: %s", strings.Join(missing, ", "))
	}
	syms, err := runGo(out, "", "tool", "nm", so)
	if err != nil {
		return err
	}
	if mod := modulePath(modBefore); !exportsHandler(syms, mod) {
		return fmt.Errorf("the plugin exports no %s.Handler (entry point index.Handler)", mod)
	}
	return nil
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
