package deploycheck

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// deployment is the parsed Terraform configuration.
type deployment struct {
	Root  tfModule
	Mods  map[string]tfModule         // module call name → its module
	Calls map[string]*hclsyntax.Block // module call name → the call block
}

// functionRefs maps "module.<call>" and "yandex_function.<name>" to the
// functions/ folder each deploys, and reports functions whose runtime, entry
// point, code or service account is wrong.
func (d deployment) functionRefs(t *testing.T) (map[string]string, []string) {
	t.Helper()
	refs := map[string]string{}
	var problems []string
	checkFn := func(b *hclsyntax.Block, where string) {
		if rt := literalString(t, b, "runtime"); rt != "golang123" {
			problems = append(problems, fmt.Sprintf("%s: runtime %q, want golang123", where, rt))
		}
		if ep := literalString(t, b, "entrypoint"); ep != "index.Handler" {
			problems = append(problems, fmt.Sprintf("%s: entrypoint %q, want index.Handler", where, ep))
		}
		if _, ok := b.Body.Attributes["service_account_id"]; !ok {
			problems = append(problems, where+": no service_account_id (the function could not reach YDB or Lockbox)")
		}
		hasZip := false
		for _, c := range b.Body.Blocks {
			if _, ok := c.Body.Attributes["zip_filename"]; ok && c.Type == "content" {
				hasZip = true
			}
		}
		if !hasZip {
			problems = append(problems, where+": no content { zip_filename } (the zip from scripts/package)")
		}
	}
	for call, mod := range d.Mods {
		fns := mod.blocks("resource", "yandex_function")
		if len(fns) == 0 {
			continue
		}
		if len(fns) > 1 {
			problems = append(problems, fmt.Sprintf("module %s: %d yandex_function resources, want one", call, len(fns)))
		}
		for _, b := range fns {
			checkFn(b, "module "+call+" ("+mod.Dir+")")
		}
		refs["module."+call] = literalString(t, d.Calls[call], "name")
	}
	zipName := regexp.MustCompile(`([A-Za-z0-9_-]+)\.zip`)
	for _, b := range d.Root.blocks("resource", "yandex_function") {
		where := "resource yandex_function." + b.Labels[1]
		checkFn(b, where)
		for _, c := range b.Body.Blocks {
			if a, ok := c.Body.Attributes["zip_filename"]; ok && c.Type == "content" {
				if m := zipName.FindStringSubmatch(sourceOf(d.Root, a.Expr.Range())); m != nil {
					refs["yandex_function."+b.Labels[1]] = m[1]
				}
			}
		}
	}
	return refs, problems
}

// sourceOf returns the source text of rng in module m.
func sourceOf(m tfModule, rng hcl.Range) string {
	for _, f := range m.Files {
		if f.Path == rng.Filename {
			return string(f.Src[rng.Start.Byte:rng.End.Byte])
		}
	}
	return ""
}

// publicGrants reports IAM resources of m that grant anything to everyone.
func publicGrants(m tfModule) []string {
	var problems []string
	for _, f := range m.Files {
		for _, b := range f.Body.Blocks {
			if b.Type != "resource" || len(b.Labels) < 2 || !strings.Contains(b.Labels[0], "_iam_") {
				continue
			}
			src := string(f.Src[b.Range().Start.Byte:b.Range().End.Byte])
			if strings.Contains(src, "allUsers") || strings.Contains(src, "allAuthenticatedUsers") {
				problems = append(problems, fmt.Sprintf("%s: %s.%s grants a role to all users", f.Path, b.Labels[0], b.Labels[1]))
			}
		}
	}
	return problems
}

var (
	secretName = regexp.MustCompile(`(?i)secret|key|token|password`)
	// Shapes of Yandex Cloud credentials: static access key IDs and secrets,
	// IAM tokens, API keys, OAuth tokens, PEM private keys.
	secretValue = regexp.MustCompile(`^(YC[A-Za-z0-9_-]{20,}|t1\.[A-Za-z0-9._-]{20,}|AQVN[A-Za-z0-9_-]{20,}|y[0-3]_[A-Za-z0-9_-]{20,})$|PRIVATE KEY`)
)

// secretVariables reports variables that look like secrets but are not
// sensitive or carry a default, and defaults that look like credentials.
func secretVariables(t *testing.T, m tfModule) []string {
	t.Helper()
	var problems []string
	for _, b := range m.blocks("variable") {
		name := b.Labels[0]
		var def cty.Value = cty.NullVal(cty.DynamicPseudoType)
		if a, ok := b.Body.Attributes["default"]; ok {
			v, diags := a.Expr.Value(nil)
			if diags.HasErrors() {
				problems = append(problems, fmt.Sprintf("%s: variable %s: default is not a constant", m.Dir, name))
				continue
			}
			def = v
		}
		walkStrings(def, func(s string) {
			if secretValue.MatchString(s) {
				problems = append(problems, fmt.Sprintf("%s: variable %s: default looks like a credential", m.Dir, name))
			}
		})
		if !secretName.MatchString(name) {
			continue
		}
		if !def.IsNull() && !(def.Type() == cty.String && def.AsString() == "") {
			problems = append(problems, fmt.Sprintf("%s: variable %s looks like a secret and has a default", m.Dir, name))
		}
		sens := false
		if a, ok := b.Body.Attributes["sensitive"]; ok {
			v, _ := a.Expr.Value(nil)
			sens = v.Type() == cty.Bool && v.True()
		}
		if !sens {
			problems = append(problems, fmt.Sprintf("%s: variable %s looks like a secret but is not sensitive = true", m.Dir, name))
		}
	}
	return problems
}

// walkStrings calls fn for every known string inside v.
func walkStrings(v cty.Value, fn func(string)) {
	if v.IsNull() || !v.IsKnown() {
		return
	}
	switch {
	case v.Type() == cty.String:
		fn(v.AsString())
	case v.CanIterateElements():
		for it := v.ElementIterator(); it.Next(); {
			_, e := it.Element()
			walkStrings(e, fn)
		}
	}
}

// secretAttrs are attributes that hold credentials; secretTypes are
// resources that are credentials.
var (
	secretAttrs = map[string]bool{"secret_key": true, "access_key": true, "token": true, "encrypted_secret_key": true,
		"private_key": true, "password": true, "secret_access_key": true}
	secretTypes = map[string]bool{"yandex_iam_service_account_static_access_key": true, "yandex_iam_service_account_key": true,
		"yandex_iam_service_account_api_key": true, "yandex_lockbox_secret_version": true}
)

// secretOutputs reports outputs of m whose value reaches a credential,
// following locals and the outputs of called modules.
func (d deployment) secretOutputs(m tfModule, sensitiveVars map[string]bool) []string {
	var problems []string
	for _, b := range m.blocks("output") {
		a, ok := b.Body.Attributes["value"]
		if !ok {
			continue
		}
		seen := map[string]bool{}
		var visit func(e hclsyntax.Expression, mod tfModule, depth int)
		visit = func(e hclsyntax.Expression, mod tfModule, depth int) {
			if depth > 8 {
				return
			}
			for _, tr := range traversals(e) {
				s := steps(tr)
				for _, st := range s {
					if secretAttrs[st] {
						problems = append(problems, fmt.Sprintf("%s: output %s exposes %s", m.Dir, b.Labels[0], strings.Join(s, ".")))
					}
				}
				switch {
				case secretTypes[s[0]]:
					problems = append(problems, fmt.Sprintf("%s: output %s reads credential resource %s", m.Dir, b.Labels[0], strings.Join(s, ".")))
				case s[0] == "var" && len(s) > 1 && sensitiveVars[s[1]]:
					problems = append(problems, fmt.Sprintf("%s: output %s exposes sensitive variable %s", m.Dir, b.Labels[0], s[1]))
				case s[0] == "local" && len(s) > 1 && !seen["local."+s[1]]:
					seen["local."+s[1]] = true
					if le, ok := mod.locals()[s[1]]; ok {
						visit(le, mod, depth+1)
					}
				case s[0] == "module" && len(s) > 2 && !seen["module."+s[1]+"."+s[2]]:
					seen["module."+s[1]+"."+s[2]] = true
					if child, ok := d.Mods[s[1]]; ok {
						for _, ob := range child.blocks("output", s[2]) {
							if oa, ok := ob.Body.Attributes["value"]; ok {
								visit(oa.Expr, child, depth+1)
							}
						}
					}
				}
			}
		}
		visit(a.Expr, m, 0)
	}
	return problems
}

// sensitiveVariables lists the variables of m declared sensitive = true.
func sensitiveVariables(m tfModule) map[string]bool {
	out := map[string]bool{}
	for _, b := range m.blocks("variable") {
		if a, ok := b.Body.Attributes["sensitive"]; ok {
			if v, _ := a.Expr.Value(nil); v.Type() == cty.Bool && v.True() {
				out[b.Labels[0]] = true
			}
		}
	}
	return out
}
