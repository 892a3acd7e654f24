package deploycheck

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// The checks must be able to fail: each is run here on a small broken
// configuration and must report exactly the planted problems.

func fixture(t *testing.T, files map[string]string) tfModule {
	t.Helper()
	dir := t.TempDir()
	for name, src := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return loadModule(t, dir)
}

func wantProblems(t *testing.T, got []string, want ...string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d problems %q, want %d matching %q", len(got), got, len(want), want)
	}
	for _, w := range want {
		found := false
		for _, g := range got {
			found = found || strings.Contains(g, w)
		}
		if !found {
			t.Errorf("no problem mentions %q in %q", w, got)
		}
	}
}

func TestPublicGrantIsFound(t *testing.T) {
	m := fixture(t, map[string]string{"iam.tf": `
resource "yandex_function_iam_binding" "public" {
  function_id = "x"
  role        = "functions.functionInvoker"
  members     = ["system:allUsers"]
}
resource "yandex_function_iam_member" "ok" {
  function_id = "x"
  role        = "functions.functionInvoker"
  member      = "serviceAccount:abc"
}
resource "yandex_resourcemanager_folder_iam_member" "everyone" {
  folder_id = "f"
  role      = "viewer"
  member    = "system:allAuthenticatedUsers"
}
`})
	wantProblems(t, publicGrants(m), "yandex_function_iam_binding.public", "folder_iam_member.everyone")
}

func TestSecretVariablesAreFound(t *testing.T) {
	m := fixture(t, map[string]string{"variables.tf": `
variable "db_password" {
  default = "hunter2"
}
variable "api_token" {
  type      = string
  sensitive = true
}
variable "region" {
  default = "ru-central1"
}
variable "settings" {
  default = { key = "YCAJEabcdefghijklmnopqrstuvwxyz" }
}
variable "ymq_secret_key" {
  type    = string
  default = ""
}
`})
	wantProblems(t, secretVariables(t, m),
		"db_password looks like a secret and has a default", "db_password looks like a secret but is not sensitive",
		"settings: default looks like a credential", "ymq_secret_key looks like a secret but is not sensitive")
}

func TestSecretOutputsAreFound(t *testing.T) {
	child := fixture(t, map[string]string{"outputs.tf": `
output "key" {
  value = yandex_iam_service_account_static_access_key.k.id
}
output "id" {
  value = yandex_function.f.id
}
`})
	root := fixture(t, map[string]string{"main.tf": `
variable "pw" {
  sensitive = true
}
locals {
  indirect = yandex_iam_service_account_static_access_key.admin.secret_key
}
output "direct" {
  value = yandex_storage_bucket.b.access_key
}
output "via_local" {
  value = { k = local.indirect }
}
output "via_module" {
  value = module.fn.key
}
output "variable" {
  value = var.pw
}
output "fine" {
  value = [module.fn.id, local.other]
}
`})
	d := deployment{Root: root, Mods: map[string]tfModule{"fn": child}}
	wantProblems(t, d.secretOutputs(root, sensitiveVariables(root)),
		"direct exposes yandex_storage_bucket.b.access_key",
		"via_local exposes yandex_iam_service_account_static_access_key.admin.secret_key",
		"via_local reads credential resource",
		"via_module reads credential resource yandex_iam_service_account_static_access_key.k.id",
		"variable exposes sensitive variable pw")
}

func TestWrongFunctionSettingsAreFound(t *testing.T) {
	child := fixture(t, map[string]string{"main.tf": `
resource "yandex_function" "this" {
  runtime    = "golang121"
  entrypoint = "main.Handler"
}
`})
	root := fixture(t, map[string]string{"main.tf": `
module "orderapi" {
  source = "./modules/function"
  name   = "orderapi"
}
`})
	d := deployment{Root: root, Mods: map[string]tfModule{"orderapi": child}, Calls: map[string]*hclsyntax.Block{}}
	d.Calls["orderapi"] = root.blocks("module", "orderapi")[0]
	refs, problems := d.functionRefs(t)
	if refs["module.orderapi"] != "orderapi" {
		t.Errorf("refs = %v", refs)
	}
	wantProblems(t, problems, "runtime \"golang121\"", "entrypoint \"main.Handler\"", "no service_account_id", "no content")
}

func TestBrokenSpecIsFound(t *testing.T) {
	spec := `
x-yc-apigateway: {}
security:
  - fn: []
paths:
  /a:
    get:
      security:
        - fn: []
      x-yc-apigateway-integration:
        type: cloud_functions
        function_id: ${orderapi_function_id}
        service_account_id: ${sa}
        payload_format_version: "0.1"
    post:
      security:
        - fn: []
      summary: no integration
    delete:
      security:
        - {}
      x-yc-apigateway-integration: { type: dummy }
    patch:
      security:
        - other: []
      x-yc-apigateway-integration: { type: dummy }
  /b:
    put:
      x-yc-apigateway-integration:
        type: cloud_functions
        function_id: ${jwt_issuer}
    parameters: []
components:
  securitySchemes:
    fn:
      x-yc-apigateway-authorizer:
        type: function
        function_id: ${unknown_id}
`
	vars := map[string]string{"orderapi_function_id": "orderapi", "sa": "", "jwt_issuer": ""}
	wantProblems(t, checkSpec([]byte(spec), vars),
		"${unknown_id} is not passed", `payload_format_version 0.1`, "POST /a: no x-yc-apigateway-integration",
		"PUT /b: function_id ${jwt_issuer} does not map", "PUT /b: payload_format_version <nil>",
		"PUT /b: no service_account_id", "securityScheme fn: function_id ${unknown_id} does not map",
		"PUT /b: no operation-level security", "DELETE /a: an empty security requirement",
		`PATCH /a: security scheme "other" is not in`)
	if p := checkSpec([]byte("paths: {}\nx: '%{ if }'\n"), nil); len(p) != 2 {
		t.Errorf("template directive and empty spec: %q", p)
	}
}

func TestLayoutProblemsAreFound(t *testing.T) {
	src := "resource \"a\" \"b\" {\n\tname = 1\n   x = 2 \n  y = <<EOT\n odd heredoc lines are fine\nEOT\n}\n\n"
	wantProblems(t, layoutProblems("f.tf", []byte(src)), "exactly one newline", "f.tf:2: tab", "f.tf:3: trailing", "f.tf:3: indentation")
}
