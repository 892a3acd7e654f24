package main

import (
	"archive/zip"
	"bytes"
	"io"
	"strings"
	"testing"
)

func TestCompareGo(t *testing.T) {
	order := []string{"1.16", "1.21", "1.21rc1", "1.21.0", "1.23", "go1.23beta1", "1.23rc2", "1.23.0", "1.23.9", "1.24", "1.24.0", "2.0"}
	for i := range order {
		for j := range order {
			a, err := parseGoVersion(order[i])
			if err != nil {
				t.Fatal(err)
			}
			b, err := parseGoVersion(order[j])
			if err != nil {
				t.Fatal(err)
			}
			want := 0
			if i < j {
				want = -1
			} else if i > j {
				want = 1
			}
			if got := compareGo(a, b); got != want {
				t.Errorf("compareGo(%s, %s) = %d, want %d", order[i], order[j], got, want)
			}
		}
	}
	for _, bad := range []string{"", "x", "1.x", "1.2.3.4", "1.23.1rc1", "1.24rcX"} {
		if _, err := parseGoVersion(bad); err == nil {
			t.Errorf("parseGoVersion(%q) accepted", bad)
		}
	}
}

func TestAddLangConstraint(t *testing.T) {
	tests := []struct {
		name, src, want string
	}{
		{"no constraint", "// Package x does.\npackage x\n", "//go:build go1.23\n\n// Package x does.\npackage x\n"},
		{"existing tag", "//go:build linux\n\npackage x\n", "//go:build linux && go1.23\n\npackage x\n"},
		{"or expression", "// Copyright.\n\n//go:build a || b\n\npackage x\n", "// Copyright.\n\n//go:build (a || b) && go1.23\n\npackage x\n"},
		{"already newer", "//go:build go1.24\n\npackage x\n", "//go:build go1.24\n\npackage x\n"},
		{"already equal", "//go:build ycf && go1.23\n\npackage x\n", "//go:build ycf && go1.23\n\npackage x\n"},
		{"older version", "//go:build go1.18\n\npackage x\n", "//go:build go1.18 && go1.23\n\npackage x\n"},
		{"constraint-like text after package is ignored", "package x\n\n//go:build nope\n", "//go:build go1.23\n\npackage x\n\n//go:build nope\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := addLangConstraint([]byte(tt.src), "go1.23")
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("got\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
	if _, err := addLangConstraint([]byte("//go:build (\n\npackage x\n"), "go1.23"); err == nil {
		t.Error("a malformed constraint was accepted")
	}
}

func TestRepoLang(t *testing.T) {
	for v, want := range map[string]string{"1.23.9": "go1.23", "1.23": "go1.23", "1.24rc1": "go1.24"} {
		if got := (repo{GoVersion: v}).Lang(); got != want {
			t.Errorf("Lang(%s) = %s, want %s", v, got, want)
		}
	}
}

func TestStripGoLines(t *testing.T) {
	in := "module ordersaga\n\ngo 1.26.8\n\ntoolchain go1.26.8\n\nrequire (\n\ta v1\n\tb v2 // indirect\n)\n\nrequire c v3\n"
	got, n := stripGoLines([]byte(in))
	want := "module ordersaga\n\nrequire (\n\ta v1\n\tb v2 // indirect\n)\n\nrequire c v3\n"
	if string(got) != want || n != 3 {
		t.Errorf("got %q (%d requires), want %q (3)", got, n, want)
	}
	if err := checkGoMod(got); err != nil {
		t.Errorf("checkGoMod(stripped) = %v", err)
	}
	for _, bad := range []string{in, "module main\n", "module x\ntoolchain go1.23.9\n"} {
		if checkGoMod([]byte(bad)) == nil {
			t.Errorf("checkGoMod(%q) accepted", bad)
		}
	}
}

func TestGoSumHelpers(t *testing.T) {
	// Hashes as recorded in the repository's go.sum for these go.mod files.
	for content, want := range map[string]string{
		"module github.com/google/uuid\n":                      "h1:TIyPZe4MgqvfeYDBFedMoGGpEw/LqOeaOT+nhxU+yHo=",
		"module github.com/mitchellh/go-wordwrap\n\ngo 1.14\n": "h1:R62XHJLzvMFRBbcrT7m7WgmE1eOyTSsCt+hzestvNj0=",
	} {
		if got := hash1GoMod([]byte(content)); got != want {
			t.Errorf("hash1GoMod(%q) = %s, want %s", content, got, want)
		}
	}
	if got := escapeModule("github.com/BurntSushi/toml"); got != "github.com/!burnt!sushi/toml" {
		t.Errorf("escapeModule = %s", got)
	}
	sum, err := parseSum([]byte("b v1 h1:B=\na v1/go.mod h1:A=\n\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := string(formatSum(sum)); got != "a v1/go.mod h1:A=\nb v1 h1:B=\n" {
		t.Errorf("formatSum = %q", got)
	}
	if _, err := parseSum([]byte("a v1\n")); err == nil {
		t.Error("parseSum accepted a short line")
	}
}

func TestZipIsDeterministic(t *testing.T) {
	files := []file{{"shared/x/x.go", []byte("package x\n")}, {"index.go", []byte("package main\n")}, {"go.mod", []byte("module ordersaga\n")}}
	a, err := zipBytes(files)
	if err != nil {
		t.Fatal(err)
	}
	b, err := zipBytes([]file{files[2], files[0], files[1]})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Fatal("the same files in another order gave another zip")
	}
	zr, err := zip.NewReader(bytes.NewReader(a), int64(len(a)))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range zr.File {
		names = append(names, f.Name)
		if !f.Modified.Equal(zipTime) {
			t.Errorf("%s: modified %v, want %v", f.Name, f.Modified, zipTime)
		}
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(rc)
		rc.Close()
		if len(data) == 0 {
			t.Errorf("%s: empty", f.Name)
		}
	}
	if got := strings.Join(names, ","); got != "go.mod,index.go,shared/x/x.go" {
		t.Errorf("entries %s", got)
	}
	if c, _ := zipBytes(append(files, file{"index.go", nil})); c != nil {
		t.Error("a duplicate entry was accepted")
	}
	for _, bad := range []string{"../x.go", "/abs.go", "a/../b.go", `a\b.go`, ""} {
		if _, err := zipBytes([]file{{bad, nil}}); err == nil {
			t.Errorf("unsafe name %q accepted", bad)
		}
	}
}

func TestCheckLayoutAndHandler(t *testing.T) {
	if err := checkLayout([]string{"index.go", "go.mod", "go.sum", "shared/x/x.go"}); err != nil {
		t.Error(err)
	}
	if checkLayout([]string{"go.mod", "go.sum", "main.go"}) == nil {
		t.Error("a zip without index.go passed")
	}
	if checkLayout([]string{"index.go", "go.mod", "go.sum", "shared/x/x_test.go"}) == nil {
		t.Error("a zip with a test file passed")
	}
	nm := []byte("  805240 t local.ordersaga.Handler\n  805240 T ordersaga.Handler\n")
	if !exportsHandler(nm, modulePath([]byte("module ordersaga\n"))) {
		t.Error("exported Handler not found")
	}
	if exportsHandler([]byte("  805240 t local.ordersaga.Handler\n"), "ordersaga") {
		t.Error("a local symbol counted as exported")
	}
}

func TestParseGraph(t *testing.T) {
	limit, _ := parseGoVersion("1.23.9")
	ok := "ordersaga a@v1.0.0\nordersaga go@1.23.0\na@v1.0.0 b@v0.1.0\na@v1.0.0 go@1.23.9\na@v1.0.0 toolchain@go1.24.0\nb@v0.1.0 a@v1.0.0\n"
	nodes, err := parseGraph([]byte(ok), limit)
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes) != 2 || nodes[0] != (graphNode{"a", "v1.0.0"}) || nodes[1] != (graphNode{"b", "v0.1.0"}) {
		t.Errorf("nodes = %v", nodes)
	}
	if _, err := parseGraph([]byte(ok+"ordersaga go@1.99.0\n"), limit); err != nil {
		t.Errorf("the main module's derived go edge was blamed: %v", err)
	}
	_, err = parseGraph([]byte(ok+"b@v0.1.0 go@1.24.0\n"), limit)
	if err == nil || !strings.Contains(err.Error(), "b@v0.1.0 declares go 1.24.0") {
		t.Errorf("a module needing go 1.24.0 was not refused: %v", err)
	}
}
