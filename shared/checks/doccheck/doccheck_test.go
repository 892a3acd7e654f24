package doccheck

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// root is the repository root, relative to this package's directory.
const root = "../../.."

const configDoc = "docs/configuration.md"

// envName is what an environment variable name looks like in this code base.
var envName = regexp.MustCompile(`^[A-Z][A-Z0-9_]*[A-Z0-9]$`)

// notSettings are names the scripts expand with a default that are not
// settings a person sets: the emulator helper's own record of the process
// it started, and the system variables the tools pass through.
var notSettings = map[string]string{
	"SQSEMULATOR_PID": "scripts/lib/sqsemulator.sh's own state (the pid it started), not a setting",
	"PATH":            "the system's search path, passed through to the builder by scripts/package -verify",
}

// TestConfigurationListsEveryVariable fails when docs/configuration.md lacks
// a variable the code reads, or when its table of function settings names a
// variable that shared/kit/config does not read.
func TestConfigurationListsEveryVariable(t *testing.T) {
	doc := readFile(t, configDoc)

	cfgVars, err := configReaderVars(filepath.Join(root, "shared/kit/config/config.go"))
	if err != nil {
		t.Fatal(err)
	}
	if len(cfgVars) == 0 {
		t.Fatal("found no reader calls in shared/kit/config/config.go: has the reader changed? update configReaderVars")
	}
	table := functionSettingsTable(doc)
	if len(table) == 0 {
		t.Fatalf("%s has no table under %q", configDoc, functionSettingsHeading)
	}
	for _, v := range sortedKeys(cfgVars) {
		if !table[v] {
			t.Errorf("%s: shared/kit/config reads %s, but the function settings table does not list it", configDoc, v)
		}
	}
	for _, v := range sortedKeys(table) {
		if !cfgVars[v] {
			t.Errorf("%s: the function settings table lists %s, which shared/kit/config does not read", configDoc, v)
		}
	}

	others := map[string]string{} // name → where it is read
	if err := goEnvVars(root, others); err != nil {
		t.Fatal(err)
	}
	if err := shellEnvVars(root, others); err != nil {
		t.Fatal(err)
	}
	for _, v := range sortedKeys(others) {
		if _, skip := notSettings[v]; skip {
			continue
		}
		if !strings.Contains(doc, "`"+v+"`") {
			t.Errorf("%s: %s reads %s, but the page does not list it (as `%s`)", configDoc, others[v], v, v)
		}
	}
}

// configReaderVars returns the first (string literal) argument of every call
// of a method of type reader in the file: r.str("ORDERSAGA_STORE", …),
// r.int(…), r.dur(…) and whatever methods the reader has.
func configReaderVars(path string) (map[string]bool, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, 0)
	if err != nil {
		return nil, err
	}
	methods := map[string]bool{}
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Recv == nil || len(fd.Recv.List) != 1 {
			continue
		}
		typ := fd.Recv.List[0].Type
		if st, ok := typ.(*ast.StarExpr); ok {
			typ = st.X
		}
		if id, ok := typ.(*ast.Ident); ok && id.Name == "reader" {
			methods[fd.Name.Name] = true
		}
	}
	out := map[string]bool{}
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok || len(call.Args) == 0 {
			return true
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok || !methods[sel.Sel.Name] {
			return true
		}
		if v, ok := stringLit(call.Args[0]); ok && envName.MatchString(v) {
			out[v] = true
		}
		return true
	})
	return out, nil
}

// envReaders are the function names that read a variable named by their
// first argument: the os package's, and the tools' small helpers
// (scripts/smoke env/envDuration, scripts/migrate getenv).
var envReaders = map[string]bool{
	"Getenv": true, "LookupEnv": true, "Setenv": true, "getenv": true, "env": true, "envDuration": true,
}

// goEnvVars adds to out every variable name the module's Go files (tests
// included) read: the string-literal or constant first argument of a call to
// an envReaders function, and string constants named env… or …Env whose
// value is a variable name (scripts/localcloud/runner/faults.go,
// shared/adapters/ymq's endpointEnv).
func goEnvVars(dir string, out map[string]string) error {
	return walk(dir, func(path, rel string) error {
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		consts := map[string]string{}
		ast.Inspect(f, func(n ast.Node) bool {
			vs, ok := n.(*ast.ValueSpec)
			if !ok {
				return true
			}
			for i, name := range vs.Names {
				if i < len(vs.Values) {
					if v, ok := stringLit(vs.Values[i]); ok {
						consts[name.Name] = v
						lower := strings.ToLower(name.Name)
						if (strings.HasPrefix(lower, "env") || strings.HasSuffix(lower, "env")) && envName.MatchString(v) {
							out[v] = rel
						}
					}
				}
			}
			return true
		})
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) == 0 {
				return true
			}
			var fn string
			switch x := call.Fun.(type) {
			case *ast.Ident:
				fn = x.Name
			case *ast.SelectorExpr:
				fn = x.Sel.Name
			}
			if !envReaders[fn] {
				return true
			}
			v, ok := stringLit(call.Args[0])
			if !ok {
				if id, isID := call.Args[0].(*ast.Ident); isID {
					v, ok = consts[id.Name]
				}
			}
			if ok && envName.MatchString(v) {
				out[v] = rel
			}
			return true
		})
		return nil
	})
}

// shellDefault matches ${NAME:-…} and ${NAME-…}: a variable a script reads
// with a default, i.e. a setting.
var shellDefault = regexp.MustCompile(`\$\{([A-Z][A-Z0-9_]*):?-`)

// shellEnvVars adds the settings of the shell scripts (scripts/**/*.sh,
// .ci/run) to out.
func shellEnvVars(dir string, out map[string]string) error {
	return walk(dir, func(path, rel string) error {
		if !strings.HasSuffix(path, ".sh") && rel != ".ci/run" {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range shellDefault.FindAllStringSubmatch(string(b), -1) {
			out[m[1]] = rel
		}
		return nil
	})
}

// walk calls fn for every file of the module under dir, skipping hidden
// directories other than .ci, build output, testdata and nested modules.
func walk(dir string, fn func(path, rel string) error) error {
	return filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			name := d.Name()
			if rel != "." && ((strings.HasPrefix(name, ".") && name != ".ci") || name == "dist" || name == "testdata" || name == "node_modules") {
				return filepath.SkipDir
			}
			if rel != "." {
				if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
					return filepath.SkipDir // a nested module (scripts/sqsemulator)
				}
			}
			return nil
		}
		return fn(path, rel)
	})
}

const functionSettingsHeading = "## Function settings"

// functionSettingsTable returns the backticked names in the first column of
// the table under the function settings heading.
func functionSettingsTable(doc string) map[string]bool {
	out := map[string]bool{}
	in := false
	for _, line := range strings.Split(doc, "\n") {
		switch {
		case strings.HasPrefix(line, functionSettingsHeading):
			in = true
			continue
		case in && strings.HasPrefix(line, "## "):
			return out
		}
		if !in || !strings.HasPrefix(line, "| `") {
			continue
		}
		cells := strings.Split(line, "|")
		for _, m := range backticked.FindAllStringSubmatch(cells[1], -1) {
			if envName.MatchString(m[1]) {
				out[m[1]] = true
			}
		}
	}
	return out
}

var backticked = regexp.MustCompile("`([^`]+)`")

func stringLit(e ast.Expr) (string, bool) {
	bl, ok := e.(*ast.BasicLit)
	if !ok || bl.Kind != token.STRING {
		return "", false
	}
	v, err := strconv.Unquote(bl.Value)
	return v, err == nil
}

// TestEnvExtractionFindsReads proves the extractors see each way the code
// reads a variable, on a module of their own.
func TestEnvExtractionFindsReads(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "shared/kit/config/config.go", `package config
type reader struct{}
func (r *reader) str(name string, dst *string) {}
func (r *reader) weird(name string, dst *int) {}
func Load() { var r reader; var s string; var n int; r.str("A_STR", &s); r.weird("A_WEIRD", &n); other("NOT_A_READ") }
func other(string) {}
`)
	write(t, dir, "scripts/x/main.go", `package main
import "os"
const envFault = "B_CONST"
func env(name, def string) string { return def }
func main() { _ = os.Getenv("B_GETENV"); _ = env("B_HELPER", ""); _ = getenv(envFault); _ = os.Getenv("lower") }
func getenv(string) string { return "" }
`)
	write(t, dir, "scripts/run.sh", "X=${B_SHELL:-1}\nY=${HOME}\n")
	write(t, dir, "nested/go.mod", "module nested\n")
	write(t, dir, "nested/main.go", `package main
import "os"
func main() { _ = os.Getenv("C_NESTED") }
`)

	cfg, err := configReaderVars(filepath.Join(dir, "shared/kit/config/config.go"))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(sortedKeys(cfg), " "), "A_STR A_WEIRD"; got != want {
		t.Errorf("configReaderVars = %q, want %q", got, want)
	}
	others := map[string]string{}
	if err := goEnvVars(dir, others); err != nil {
		t.Fatal(err)
	}
	if err := shellEnvVars(dir, others); err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(sortedKeys(others), " "), "B_CONST B_GETENV B_HELPER B_SHELL"; got != want {
		t.Errorf("goEnvVars + shellEnvVars = %q, want %q", got, want)
	}
	table := functionSettingsTable("# C\n\n## Function settings\n\n| variable | d |\n|---|---|\n| `A_STR`, `A_WEIRD` | `x` |\n\n## Other\n\n| `B_CONST` | |\n")
	if got, want := strings.Join(sortedKeys(table), " "), "A_STR A_WEIRD"; got != want {
		t.Errorf("functionSettingsTable = %q, want %q", got, want)
	}
}

// linkedDocs are the Markdown files whose relative links must resolve.
func linkedDocs(t *testing.T, dir string) []string {
	files := []string{"README.md", "terraform/README.md"}
	more, err := filepath.Glob(filepath.Join(dir, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range more {
		rel, _ := filepath.Rel(dir, m)
		files = append(files, filepath.ToSlash(rel))
	}
	return files
}

// TestRelativeLinksResolve fails on a relative link in README.md,
// docs/*.md or terraform/README.md whose file does not exist, or whose
// #anchor names no heading of the target Markdown file.
func TestRelativeLinksResolve(t *testing.T) {
	for _, p := range brokenLinks(t, root, linkedDocs(t, root)) {
		t.Error(p)
	}
}

// TestLinkCheckFindsBrokenLinks proves the link check reports a missing
// file and a missing anchor, and accepts the forms GitHub resolves.
func TestLinkCheckFindsBrokenLinks(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "README.md", "# Top\n\n## A ten-minute tour\n\n### 1. A confirmed order\n\n"+
		"[ok](docs/a.md) [ok](docs/a.md#relay-vs-raw-sendmessagebatch-to-the-kumo) [ok](#a-ten-minute-tour) "+
		"[ok](#1-a-confirmed-order) [ok](docs/) [ok](https://example.com/x) `[not](a link)`\n\n"+
		"[gone](docs/missing.md) [bad anchor](docs/a.md#nope) [bad self](#nope)\n\n```sh\n[x](not/checked.md)\n```\n")
	write(t, dir, "docs/a.md", "# A\n\n## Relay vs raw `SendMessageBatch` to the kumo\n\n[up](../README.md#top)\n")
	got := brokenLinks(t, dir, []string{"README.md", "docs/a.md"})
	want := []string{
		"README.md:9: docs/missing.md: no such file",
		"README.md:9: docs/a.md#nope: docs/a.md has no heading with anchor #nope",
		"README.md:9: #nope: README.md has no heading with anchor #nope",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("brokenLinks =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

var (
	linkRe     = regexp.MustCompile(`\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	inlineCode = regexp.MustCompile("`[^`]*`")
	headingRe  = regexp.MustCompile(`^(#{1,6})\s+(.*?)\s*#*\s*$`)
	htmlAnchor = regexp.MustCompile(`<a\s+(?:id|name)="([^"]+)"`)
)

// brokenLinks returns one message per relative link of files (paths relative
// to dir) that does not resolve.
func brokenLinks(t *testing.T, dir string, files []string) []string {
	t.Helper()
	anchors := map[string]map[string]bool{} // file (relative to dir) → its anchors
	anchorsOf := func(rel string) map[string]bool {
		if a, ok := anchors[rel]; ok {
			return a
		}
		b, err := os.ReadFile(filepath.Join(dir, rel))
		if err != nil {
			t.Fatal(err)
		}
		anchors[rel] = headingAnchors(string(b))
		return anchors[rel]
	}
	var problems []string
	for _, file := range files {
		b, err := os.ReadFile(filepath.Join(dir, file))
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(string(b), "\n")
		for _, i := range proseLines(lines) {
			line := lines[i]
			for _, m := range linkRe.FindAllStringSubmatch(inlineCode.ReplaceAllString(line, ""), -1) {
				link := m[1]
				if strings.Contains(link, "://") || strings.HasPrefix(link, "mailto:") {
					continue
				}
				path, anchor, _ := strings.Cut(link, "#")
				target := file
				if path != "" {
					target = filepath.ToSlash(filepath.Clean(filepath.Join(filepath.Dir(file), path)))
					st, err := os.Stat(filepath.Join(dir, target))
					if err != nil {
						problems = append(problems, file+":"+strconv.Itoa(i+1)+": "+link+": no such file")
						continue
					}
					if st.IsDir() {
						continue
					}
				}
				if anchor == "" || !strings.HasSuffix(target, ".md") {
					continue
				}
				if !anchorsOf(target)[anchor] {
					problems = append(problems, file+":"+strconv.Itoa(i+1)+": "+link+": "+target+" has no heading with anchor #"+anchor)
				}
			}
		}
	}
	return problems
}

// proseLines returns the indexes of the lines outside fenced code blocks.
func proseLines(lines []string) []int {
	var out []int
	fence := ""
	for i, line := range lines {
		if f := fenceOf(line); f != "" {
			switch {
			case fence == "":
				fence = f
			case strings.HasPrefix(strings.TrimSpace(line), fence):
				fence = ""
			}
			continue
		}
		if fence == "" {
			out = append(out, i)
		}
	}
	return out
}

// fenceOf returns the fence (``` or ~~~ run) that line opens or closes, or "".
func fenceOf(line string) string {
	s := strings.TrimSpace(line)
	for _, c := range []string{"`", "~"} {
		if strings.HasPrefix(s, c+c+c) {
			n := len(s) - len(strings.TrimLeft(s, c))
			return strings.Repeat(c, n)
		}
	}
	return ""
}

// headingAnchors returns the anchors GitHub gives the headings of a Markdown
// text (and explicit <a id="…"> anchors).
func headingAnchors(md string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	lines := strings.Split(md, "\n")
	for _, i := range proseLines(lines) {
		line := lines[i]
		for _, m := range htmlAnchor.FindAllStringSubmatch(line, -1) {
			out[m[1]] = true
		}
		m := headingRe.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		slug := slugify(m[2])
		if n := seen[slug]; n > 0 {
			out[slug+"-"+strconv.Itoa(n)] = true
		} else {
			out[slug] = true
		}
		seen[slug]++
	}
	return out
}

// mdLink is a Markdown link in heading text: its text stays, its target goes.
var mdLink = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)

// slugify is GitHub's heading anchor: lower case, drop everything but
// letters, marks, digits, connector punctuation, spaces and hyphens, then
// spaces to hyphens.
func slugify(heading string) string {
	heading = mdLink.ReplaceAllString(heading, "$1")
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case unicode.IsLetter(r), unicode.IsMark(r), unicode.IsDigit(r), unicode.Is(unicode.Pc, r), r == '-':
			b.WriteRune(r)
		case r == ' ':
			b.WriteRune('-')
		}
	}
	return b.String()
}

func readFile(t *testing.T, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, rel))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func write(t *testing.T, dir, rel, content string) {
	t.Helper()
	p := filepath.Join(dir, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
