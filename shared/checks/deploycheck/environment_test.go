package deploycheck

import (
	"testing"

	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"

	"ordersaga/shared/kit/config"
)

// TestFunctionEnvironmentLoads builds the environment a cloud function gets
// from terraform/ — local.common_environment in functions.tf plus the
// module's Lockbox secrets{} variables — and checks that config.Load accepts
// it: every required cloud setting is there, and no misspelt name hides a
// default. Values Terraform computes (URLs, IDs) become placeholders;
// var.X takes its default.
func TestFunctionEnvironmentLoads(t *testing.T) {
	d := load(t)
	env := map[string]string{}
	expr, ok := d.Root.locals()["common_environment"]
	if !ok {
		t.Fatal("functions.tf: no local common_environment")
	}
	var obj *hclsyntax.ObjectConsExpr
	switch e := expr.(type) {
	case *hclsyntax.ObjectConsExpr:
		obj = e
	case *hclsyntax.FunctionCallExpr: // merge({...}, var.extra_environment)
		if len(e.Args) > 0 {
			obj, _ = e.Args[0].(*hclsyntax.ObjectConsExpr)
		}
	}
	if obj == nil {
		t.Fatal("local.common_environment must be an object literal or merge({...}, ...)")
	}
	defaults := variableDefaults(d.Root)
	for _, item := range obj.Items {
		key, diags := item.KeyExpr.Value(nil)
		if diags.HasErrors() || key.Type() != cty.String {
			t.Fatalf("common_environment key at %s is not a name", item.KeyExpr.Range())
		}
		env[key.AsString()] = "placeholder"
		if v, diags := item.ValueExpr.Value(nil); !diags.HasErrors() && v.Type() == cty.String {
			env[key.AsString()] = v.AsString()
		}
		for _, tr := range item.ValueExpr.Variables() {
			if s := steps(tr); len(s) == 2 && s[0] == "var" && defaults[s[1]] != "" {
				env[key.AsString()] = defaults[s[1]]
			}
		}
	}
	for _, m := range d.Mods {
		for _, fn := range m.blocks("resource", "yandex_function") {
			for _, b := range fn.Body.Blocks {
				if b.Type == "secrets" {
					env[literalString(t, b, "environment_variable")] = "from-lockbox"
				}
			}
		}
	}
	for _, required := range []string{"YMQ_ACCESS_KEY_ID", "YMQ_SECRET_ACCESS_KEY"} {
		if env[required] != "from-lockbox" {
			t.Errorf("%s must reach the function through a Lockbox secrets{} block", required)
		}
	}
	cfg, err := config.Load(func(k string) string { return env[k] })
	if err != nil {
		t.Fatalf("config.Load rejects the cloud environment %v: %v", env, err)
	}
	if cfg.Store != config.StoreYDB || cfg.Queue != config.QueueYMQ || cfg.Auth != config.AuthGateway || cfg.YDB.Auth != "metadata" {
		t.Errorf("cloud functions must run on YDB (metadata auth), YMQ and gateway auth; got store %s/%s, queue %s, auth %s",
			cfg.Store, cfg.YDB.Auth, cfg.Queue, cfg.Auth)
	}
}

// variableDefaults returns the string defaults of m's variables.
func variableDefaults(m tfModule) map[string]string {
	out := map[string]string{}
	for _, b := range m.blocks("variable") {
		if a, ok := b.Body.Attributes["default"]; ok {
			if v, diags := a.Expr.Value(nil); !diags.HasErrors() && v.Type() == cty.String {
				out[b.Labels[0]] = v.AsString()
			}
		}
	}
	return out
}
