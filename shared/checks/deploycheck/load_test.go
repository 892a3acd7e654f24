package deploycheck

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclparse"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// repoRoot is the repository root, seen from this package's directory.
const repoRoot = "../../.."

// tfFile is one parsed .tf file.
type tfFile struct {
	Path string
	Src  []byte
	Body *hclsyntax.Body
}

// tfModule is the parsed .tf files of one directory.
type tfModule struct {
	Dir   string
	Files []tfFile
}

// loadModule parses every .tf file of dir; any parse error fails the test.
func loadModule(t *testing.T, dir string) tfModule {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(dir, "*.tf"))
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) == 0 {
		t.Fatalf("no .tf files in %s", dir)
	}
	sort.Strings(paths)
	p := hclparse.NewParser()
	m := tfModule{Dir: dir}
	for _, path := range paths {
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		f, diags := p.ParseHCL(src, path)
		if diags.HasErrors() {
			t.Fatalf("%s: %s", path, diags.Error())
		}
		m.Files = append(m.Files, tfFile{Path: path, Src: src, Body: f.Body.(*hclsyntax.Body)})
	}
	return m
}

// blocks returns the module's top-level blocks of the given type (and, when
// labels are given, with those leading labels).
func (m tfModule) blocks(typ string, labels ...string) []*hclsyntax.Block {
	var out []*hclsyntax.Block
	for _, f := range m.Files {
		for _, b := range f.Body.Blocks {
			if b.Type != typ || len(b.Labels) < len(labels) {
				continue
			}
			match := true
			for i, l := range labels {
				match = match && b.Labels[i] == l
			}
			if match {
				out = append(out, b)
			}
		}
	}
	return out
}

// locals returns every local value's expression.
func (m tfModule) locals() map[string]hclsyntax.Expression {
	out := map[string]hclsyntax.Expression{}
	for _, b := range m.blocks("locals") {
		for name, a := range b.Body.Attributes {
			out[name] = a.Expr
		}
	}
	return out
}

// childModules loads the local modules the root module calls, keyed by the
// call's name, together with the call blocks.
func childModules(t *testing.T, root tfModule) (map[string]tfModule, map[string]*hclsyntax.Block) {
	t.Helper()
	mods, calls := map[string]tfModule{}, map[string]*hclsyntax.Block{}
	for _, b := range root.blocks("module") {
		src := literalString(t, b, "source")
		if !strings.HasPrefix(src, "./") {
			t.Errorf("module %q: source %q is not a local module", b.Labels[0], src)
			continue
		}
		mods[b.Labels[0]] = loadModule(t, filepath.Join(root.Dir, filepath.FromSlash(src)))
		calls[b.Labels[0]] = b
	}
	return mods, calls
}

// literalString evaluates attribute name of block b as a constant string.
func literalString(t *testing.T, b *hclsyntax.Block, name string) string {
	t.Helper()
	a, ok := b.Body.Attributes[name]
	if !ok {
		t.Errorf("%s %v: no %q attribute", b.Type, b.Labels, name)
		return ""
	}
	return constString(t, a.Expr, b, name)
}

// constString evaluates e (an attribute of b) as a constant string.
func constString(t *testing.T, e hclsyntax.Expression, b *hclsyntax.Block, name string) string {
	t.Helper()
	v, diags := e.Value(nil)
	if diags.HasErrors() || !v.IsKnown() || v.IsNull() || v.Type() != cty.String {
		t.Errorf("%s %v: %q must be a literal string (at %s)", b.Type, b.Labels, name, e.Range())
		return ""
	}
	return v.AsString()
}

// traversals returns every variable reference in e, as dotted/indexed paths
// such as "module.orderapi.function_id" or `local.queue_urls["x"]`.
func traversals(e hclsyntax.Expression) []hcl.Traversal {
	return e.Variables()
}

// steps renders a traversal as its root name and attribute/index steps.
func steps(tr hcl.Traversal) []string {
	var out []string
	for _, s := range tr {
		switch s := s.(type) {
		case hcl.TraverseRoot:
			out = append(out, s.Name)
		case hcl.TraverseAttr:
			out = append(out, s.Name)
		case hcl.TraverseIndex:
			if s.Key.Type() == cty.String {
				out = append(out, s.Key.AsString())
			} else {
				out = append(out, "[index]")
			}
		}
	}
	return out
}

// walkBlocks calls fn for b and every block nested in it.
func walkBlocks(b *hclsyntax.Block, fn func(*hclsyntax.Block)) {
	fn(b)
	for _, c := range b.Body.Blocks {
		walkBlocks(c, fn)
	}
}

// functionFolders lists the folders under functions/.
func functionFolders(t *testing.T) map[string]bool {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(repoRoot, "functions"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, e := range entries {
		if e.IsDir() {
			out[e.Name()] = true
		}
	}
	if len(out) == 0 {
		t.Fatal("no folders under functions/")
	}
	return out
}
