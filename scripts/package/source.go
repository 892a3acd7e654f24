package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/build/constraint"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// file is one entry of a zip: a slash-separated name and its content.
type file struct {
	Name string
	Data []byte
}

// listedPackage is the part of `go list -json` output the tool uses.
type listedPackage struct {
	ImportPath string
	Dir        string
	Name       string
	Standard   bool
	Module     *struct {
		Path    string
		Version string
		Main    bool
	}
	GoFiles, CgoFiles, EmbedFiles []string
	CFiles, HFiles, SFiles        []string
	SysoFiles                     []string
	Error                         *struct{ Err string }
	DepsErrors                    []*struct{ Err string }
}

// listDeps runs `go list -deps -json -tags ycf` for the package patterns in
// dir and decodes the stream.
func listDeps(dir, goflags string, patterns ...string) ([]listedPackage, error) {
	args := append([]string{"list", "-deps", "-json", "-tags", "ycf"}, patterns...)
	out, err := runGo(dir, goflags, args...)
	if err != nil {
		return nil, err
	}
	var pkgs []listedPackage
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p listedPackage
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			return nil, fmt.Errorf("decoding go list output: %w", err)
		}
		if p.Error != nil {
			return nil, fmt.Errorf("package %s: %s", p.ImportPath, p.Error.Err)
		}
		for _, e := range p.DepsErrors {
			return nil, fmt.Errorf("package %s: %s", p.ImportPath, e.Err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs, nil
}

// sourceFiles returns the function's own files (at the zip root) and the
// repository packages it imports (at their module-relative paths), with the
// language-version constraint added to every .go file.
func sourceFiles(r repo, name string, pkgs []listedPackage) ([]file, error) {
	fnPath := r.ModulePath + "/functions/" + name
	var files []file
	sawIndex := false
	for _, p := range pkgs {
		if p.Standard || p.Module == nil || !p.Module.Main {
			continue
		}
		rel := ""
		switch {
		case p.ImportPath == fnPath:
			if p.Name != "main" {
				return nil, fmt.Errorf("functions/%s is package %s, the runtime needs package main", name, p.Name)
			}
		case strings.HasPrefix(p.ImportPath, r.ModulePath+"/functions/"):
			return nil, fmt.Errorf("%s imports another function package %s", fnPath, p.ImportPath)
		case strings.HasPrefix(p.ImportPath, r.ModulePath+"/"):
			rel = strings.TrimPrefix(p.ImportPath, r.ModulePath+"/")
		default:
			return nil, fmt.Errorf("package %s is in the main module but not under %s/", p.ImportPath, r.ModulePath)
		}
		for _, group := range [][]string{p.GoFiles, p.CgoFiles} {
			for _, f := range group {
				data, err := os.ReadFile(filepath.Join(p.Dir, f))
				if err != nil {
					return nil, err
				}
				if data, err = addLangConstraint(data, r.Lang()); err != nil {
					return nil, fmt.Errorf("%s/%s: %w", p.ImportPath, f, err)
				}
				files = append(files, file{Name: path.Join(rel, f), Data: data})
				sawIndex = sawIndex || (rel == "" && f == "index.go")
			}
		}
		for _, group := range [][]string{p.EmbedFiles, p.CFiles, p.HFiles, p.SFiles, p.SysoFiles} {
			for _, f := range group {
				data, err := os.ReadFile(filepath.Join(p.Dir, filepath.FromSlash(f)))
				if err != nil {
					return nil, err
				}
				files = append(files, file{Name: path.Join(rel, f), Data: data})
			}
		}
	}
	if !sawIndex {
		return nil, fmt.Errorf("functions/%s/index.go is missing (entry point index.Handler)", name)
	}
	return files, nil
}

// addLangConstraint makes src's language version at least lang ("go1.23")
// through its //go:build line: an existing constraint expr becomes
// "(expr) && go1.23" unless it already implies lang; a file without one gets
// "//go:build go1.23" and a blank line prepended. A file's //go:build go1.N
// line raises its language version above the module's (Go ≥ 1.21), which is
// what a zip whose go.mod has no go line needs.
func addLangConstraint(src []byte, lang string) ([]byte, error) {
	lines := bytes.SplitAfter(src, []byte("\n"))
	for i, line := range lines {
		t := bytes.TrimSpace(line)
		if len(t) == 0 {
			continue
		}
		if !bytes.HasPrefix(t, []byte("//")) {
			break // the header (where build constraints live) is over
		}
		if !constraint.IsGoBuild(string(t)) {
			continue
		}
		expr, err := constraint.Parse(string(t))
		if err != nil {
			return nil, err
		}
		if have := constraint.GoVersion(expr); have != "" && !olderLang(have, lang) {
			return src, nil
		}
		expr = &constraint.AndExpr{X: expr, Y: &constraint.TagExpr{Tag: lang}}
		out := append([]byte{}, bytes.Join(lines[:i], nil)...)
		out = append(out, "//go:build "+expr.String()+"\n"...)
		return append(out, bytes.Join(lines[i+1:], nil)...), nil
	}
	return append([]byte("//go:build "+lang+"\n\n"), src...), nil
}

// olderLang reports whether language version a ("go1.21") is older than b.
func olderLang(a, b string) bool {
	va, err1 := parseGoVersion(a)
	vb, err2 := parseGoVersion(b)
	return err1 != nil || err2 != nil || compareGo(va, vb) < 0
}
