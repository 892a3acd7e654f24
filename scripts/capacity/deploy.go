package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclparse"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"

	"ordersaga/shared/kit/config"
	"ordersaga/shared/wiring/triggers"
)

// deployment is what the repository's deployment description sets: the
// environment every function gets from terraform/functions.tf (loaded by
// config.Load as a function's cold start would), the Terraform variable
// defaults the model needs, and triggers/triggers.yaml.
type deployment struct {
	Cfg      config.Config
	Triggers triggers.File
	// FunctionTimeout and FunctionMemoryMB are var.function_timeout_seconds
	// and var.function_memory_mb, by function.
	FunctionTimeout  map[string]time.Duration
	FunctionMemoryMB map[string]int
	// YDBThrottleRU is var.ydb_throttling_rcu_limit (0: no limit).
	YDBThrottleRU int
}

// loadDeployment reads terraform/ and triggers/triggers.yaml under root.
// Values Terraform computes (queue URLs, ids) become placeholders; var.X
// takes its default.
func loadDeployment(root string) (deployment, error) {
	var d deployment
	vars, err := variableDefaults(filepath.Join(root, "terraform", "variables.tf"))
	if err != nil {
		return d, err
	}
	env, err := commonEnvironment(filepath.Join(root, "terraform", "functions.tf"), vars)
	if err != nil {
		return d, err
	}
	d.Cfg, err = config.Load(func(k string) string { return env[k] })
	if err != nil {
		return d, fmt.Errorf("terraform/functions.tf environment: %w", err)
	}
	if d.Triggers, err = triggers.Load(filepath.Join(root, "triggers", "triggers.yaml")); err != nil {
		return d, err
	}
	d.FunctionTimeout = map[string]time.Duration{}
	d.FunctionMemoryMB = map[string]int{}
	if v, ok := vars["function_timeout_seconds"]; ok && v.Type().IsObjectType() {
		for k, x := range v.AsValueMap() {
			n, _ := x.AsBigFloat().Int64()
			d.FunctionTimeout[k] = time.Duration(n) * time.Second
		}
	}
	if v, ok := vars["function_memory_mb"]; ok && v.Type().IsObjectType() {
		for k, x := range v.AsValueMap() {
			n, _ := x.AsBigFloat().Int64()
			d.FunctionMemoryMB[k] = int(n)
		}
	}
	if v, ok := vars["ydb_throttling_rcu_limit"]; ok && v.Type() == cty.Number {
		n, _ := v.AsBigFloat().Int64()
		d.YDBThrottleRU = int(n)
	}
	for _, need := range []string{"sagaadvancer", "orderapi"} {
		if d.FunctionTimeout[need] <= 0 || d.FunctionMemoryMB[need] <= 0 {
			return d, fmt.Errorf("terraform/variables.tf: no timeout or memory default for %s", need)
		}
	}
	return d, nil
}

// variableDefaults returns the default of every variable block of path
// that has a constant one.
func variableDefaults(path string) (map[string]cty.Value, error) {
	body, err := parseHCL(path)
	if err != nil {
		return nil, err
	}
	out := map[string]cty.Value{}
	for _, b := range body.Blocks {
		if b.Type != "variable" || len(b.Labels) != 1 {
			continue
		}
		if a, ok := b.Body.Attributes["default"]; ok {
			if v, diags := a.Expr.Value(nil); !diags.HasErrors() {
				out[b.Labels[0]] = v
			}
		}
	}
	return out, nil
}

// commonEnvironment evaluates local.common_environment of functions.tf: an
// object literal, or merge({...}, ...) whose first argument is one.
func commonEnvironment(path string, vars map[string]cty.Value) (map[string]string, error) {
	body, err := parseHCL(path)
	if err != nil {
		return nil, err
	}
	var expr hclsyntax.Expression
	for _, b := range body.Blocks {
		if b.Type == "locals" {
			if a, ok := b.Body.Attributes["common_environment"]; ok {
				expr = a.Expr
			}
		}
	}
	if call, ok := expr.(*hclsyntax.FunctionCallExpr); ok && len(call.Args) > 0 {
		expr = call.Args[0]
	}
	obj, ok := expr.(*hclsyntax.ObjectConsExpr)
	if !ok {
		return nil, fmt.Errorf("%s: local.common_environment is not an object literal", path)
	}
	env := map[string]string{}
	for _, item := range obj.Items {
		k, diags := item.KeyExpr.Value(nil)
		if diags.HasErrors() || k.Type() != cty.String {
			return nil, fmt.Errorf("%s: common_environment key at %s is not a name", path, item.KeyExpr.Range())
		}
		env[k.AsString()] = "placeholder"
		if v, diags := item.ValueExpr.Value(nil); !diags.HasErrors() && v.Type() == cty.String {
			env[k.AsString()] = v.AsString()
		}
		for _, tr := range item.ValueExpr.Variables() {
			if tr.RootName() != "var" || len(tr) != 2 {
				continue
			}
			a, ok := tr[1].(hcl.TraverseAttr)
			if !ok {
				continue
			}
			if v, ok := vars[a.Name]; ok {
				env[k.AsString()] = ctyString(v)
			}
		}
	}
	// The credentials come from Lockbox secrets, not the environment map.
	for _, k := range []string{"YMQ_ACCESS_KEY_ID", "YMQ_SECRET_ACCESS_KEY"} {
		if env[k] == "" {
			env[k] = "from-lockbox"
		}
	}
	return env, nil
}

// parseHCL parses one .tf file.
func parseHCL(path string) (*hclsyntax.Body, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	f, diags := hclparse.NewParser().ParseHCL(src, path)
	if diags.HasErrors() {
		return nil, fmt.Errorf("%s: %s", path, diags.Error())
	}
	return f.Body.(*hclsyntax.Body), nil
}

func ctyString(v cty.Value) string {
	switch {
	case v.Type() == cty.String:
		return v.AsString()
	case v.Type() == cty.Number:
		return v.AsBigFloat().Text('f', -1)
	case v.Type() == cty.Bool:
		return strconv.FormatBool(v.True())
	}
	return "placeholder"
}
