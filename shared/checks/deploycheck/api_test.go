package deploycheck

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"gopkg.in/yaml.v3"
)

// templateVars reads the gateway's spec = templatefile(path, {...}) and maps
// each template variable to the function folder it names ("" for others).
func templateVars(t *testing.T, gw *hclsyntax.Block, refs map[string]string) (map[string]string, string) {
	t.Helper()
	a, ok := gw.Body.Attributes["spec"]
	call, isCall := a.Expr.(*hclsyntax.FunctionCallExpr)
	if !ok || !isCall || call.Name != "templatefile" || len(call.Args) != 2 {
		t.Fatal(`yandex_api_gateway: spec must be templatefile("${path.module}/api/openapi.yaml", {...})`)
	}
	path := strings.TrimPrefix(sourceTemplateTail(t, call.Args[0]), "/")
	obj, ok := call.Args[1].(*hclsyntax.ObjectConsExpr)
	if !ok {
		t.Fatal("templatefile's variables must be an object literal")
	}
	vars := map[string]string{}
	for _, item := range obj.Items {
		key := hcl.ExprAsKeyword(item.KeyExpr)
		if key == "" {
			t.Fatalf("templatefile variable at %s: key must be a bare name", item.KeyExpr.Range())
		}
		vars[key] = ""
		for _, tr := range item.ValueExpr.Variables() {
			s := steps(tr)
			if len(s) >= 2 && (s[0] == "module" || s[0] == "yandex_function") {
				vars[key] = refs[s[0]+"."+s[1]]
				if vars[key] == "" {
					t.Errorf("templatefile variable %s: %s is not a deployed function", key, strings.Join(s, "."))
				}
			}
		}
	}
	return vars, path
}

// sourceTemplateTail returns the literal part of a "${path.module}/x/y" template.
func sourceTemplateTail(t *testing.T, e hclsyntax.Expression) string {
	t.Helper()
	tmpl, ok := e.(*hclsyntax.TemplateExpr)
	if !ok || len(tmpl.Parts) == 0 {
		t.Fatalf("templatefile path at %s must be a string template", e.Range())
	}
	lit, ok := tmpl.Parts[len(tmpl.Parts)-1].(*hclsyntax.LiteralValueExpr)
	if !ok {
		t.Fatalf("templatefile path at %s must end in a literal path", e.Range())
	}
	return lit.Val.AsString()
}

var placeholder = regexp.MustCompile(`\$\{([^}]*)\}`)

// checkSpec checks an OpenAPI document for API Gateway: every operation has
// a cloud_functions integration (payload format 1.0, called with a service
// account) whose function_id is a template variable naming a deployed
// function, and its own non-empty security requirement naming defined
// security schemes (the API Gateway docs show authorizers only in
// operation-level security, so a document-level default is not relied on);
// function authorizers too; every placeholder is provided.
func checkSpec(spec []byte, vars map[string]string) []string {
	var problems []string
	bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	if bytes.Contains(spec, []byte("%{")) {
		bad("openapi.yaml: %%{ is template syntax for templatefile(); escape it as %%%%{")
	}
	for _, m := range placeholder.FindAllSubmatch(spec, -1) {
		if _, ok := vars[string(m[1])]; !ok {
			bad("openapi.yaml: ${%s} is not passed by templatefile() in api.tf", m[1])
		}
	}
	var doc struct {
		Gateway    map[string]any            `yaml:"x-yc-apigateway"`
		Paths      map[string]map[string]any `yaml:"paths"`
		Components struct {
			SecuritySchemes map[string]map[string]any `yaml:"securitySchemes"`
		} `yaml:"components"`
	}
	if err := yaml.Unmarshal(spec, &doc); err != nil {
		return append(problems, "openapi.yaml: "+err.Error())
	}
	function := func(where string, v any) {
		s, _ := v.(string)
		m := regexp.MustCompile(`^\$\{(\w+)\}$`).FindStringSubmatch(s)
		if m == nil {
			bad("%s: function_id %q must be one template variable such as ${orderapi_function_id}", where, s)
		} else if vars[m[1]] == "" {
			bad("%s: function_id ${%s} does not map to a deployed function in api.tf", where, m[1])
		}
	}
	ops := 0
	for path, item := range doc.Paths {
		for method, v := range item {
			if !isMethod(method) {
				continue
			}
			ops++
			where := strings.ToUpper(method) + " " + path
			op, _ := v.(map[string]any)
			checkSecurity(where, op["security"], doc.Components.SecuritySchemes, bad)
			integ, ok := op["x-yc-apigateway-integration"].(map[string]any)
			if !ok {
				bad("%s: no x-yc-apigateway-integration", where)
				continue
			}
			if integ["type"] != "cloud_functions" {
				continue
			}
			function(where, integ["function_id"])
			if integ["payload_format_version"] != "1.0" {
				bad("%s: payload_format_version %v, the handler decodes \"1.0\"", where, integ["payload_format_version"])
			}
			if integ["service_account_id"] == nil && doc.Gateway["service_account_id"] == nil {
				bad("%s: no service_account_id: the gateway would call the function anonymously (it would have to be public)", where)
			}
		}
	}
	for name, scheme := range doc.Components.SecuritySchemes {
		if auth, ok := scheme["x-yc-apigateway-authorizer"].(map[string]any); ok && auth["type"] == "function" {
			function("securityScheme "+name, auth["function_id"])
		}
	}
	if ops == 0 {
		bad("openapi.yaml: no operations")
	}
	return problems
}

func isMethod(s string) bool {
	switch s {
	case "get", "put", "post", "delete", "options", "head", "patch", "trace", "x-yc-apigateway-any-method":
		return true
	}
	return false
}

// checkSecurity reports an operation whose security is missing, empty, or
// names a scheme that components.securitySchemes does not define.
func checkSecurity(where string, v any, schemes map[string]map[string]any, bad func(string, ...any)) {
	reqs, _ := v.([]any)
	if len(reqs) == 0 {
		bad("%s: no operation-level security (the gateway would not check a JWT)", where)
		return
	}
	for _, r := range reqs {
		req, _ := r.(map[string]any)
		if len(req) == 0 {
			bad("%s: an empty security requirement lets anonymous callers in", where)
		}
		for name := range req {
			if _, ok := schemes[name]; !ok {
				bad("%s: security scheme %q is not in components.securitySchemes", where, name)
			}
		}
	}
}
