package deploycheck

import (
	"testing"
)

// Each rule on a small broken configuration: it must report exactly the
// planted problems (and nothing about the correct blocks next to them).

func TestYDBGrantProblemsAreFound(t *testing.T) {
	root := fixture(t, map[string]string{"main.tf": `
resource "yandex_ydb_database_iam_member" "old" {
  database_id = "db"
  role        = "ydb.editor"
  member      = "serviceAccount:a"
}
resource "yandex_ydb_database_iam_binding" "one" {
  database_id = yandex_ydb_database_serverless.main.id
  role        = "ydb.editor"
  members     = ["serviceAccount:a"]
}
resource "yandex_ydb_database_iam_binding" "two" {
  database_id = yandex_ydb_database_serverless.main.id
  role        = "ydb.editor"
  members     = ["serviceAccount:b"]
}
resource "yandex_ydb_database_iam_binding" "viewer" {
  database_id = yandex_ydb_database_serverless.main.id
  role        = "ydb.viewer"
  members     = ["serviceAccount:b"]
}
`})
	mod := fixture(t, map[string]string{"iam.tf": `
resource "yandex_ydb_database_iam_binding" "editor" {
  database_id = var.db
  role        = "ydb.editor"
  members     = ["serviceAccount:x"]
}
`})
	wantProblems(t, ydbGrantProblems(root, map[string]tfModule{"fn": mod}),
		"yandex_ydb_database_iam_member.old: the provider has no such resource",
		"module fn: yandex_ydb_database_iam_binding.editor is authoritative",
		"yandex_ydb_database_iam_binding.one and .two bind the same role")
}

func TestGrantWithoutWaitIsFound(t *testing.T) {
	m := fixture(t, map[string]string{"iam.tf": `
resource "yandex_resourcemanager_folder_iam_member" "nowait" {
  folder_id = "f"
  role      = "ymq.writer"
  member    = "serviceAccount:a"
}
resource "yandex_lockbox_secret_iam_member" "zero" {
  secret_id   = "s"
  role        = "lockbox.payloadViewer"
  member      = "serviceAccount:a"
  sleep_after = 0
}
resource "yandex_function_iam_member" "ok" {
  function_id = "x"
  role        = "functions.functionInvoker"
  member      = "serviceAccount:a"
  sleep_after = var.wait
}
resource "yandex_ydb_database_iam_binding" "nowait" {
  database_id = "db"
  role        = "ydb.editor"
  members     = ["serviceAccount:a"]
}
resource "yandex_iam_service_account" "not_a_grant" {
  name = "a"
}
`})
	wantProblems(t, grantWaitProblems(m),
		"folder_iam_member.nowait has no sleep_after", "lockbox_secret_iam_member.zero: sleep_after = 0",
		"yandex_ydb_database_iam_binding.nowait has no sleep_after")
}

func TestFunctionWithoutVersionCheckIsFound(t *testing.T) {
	m := fixture(t, map[string]string{"main.tf": `
resource "yandex_function" "bare" {
  name = "a"
}
resource "yandex_function" "version_only" {
  name = "b"
  tags = ["code-1"]
  lifecycle {
    postcondition {
      condition     = self.version != ""
      error_message = "no version"
    }
  }
}
resource "yandex_function" "ok" {
  name = "c"
  tags = [local.code_tag]
  lifecycle {
    postcondition {
      condition     = self.version != "" && contains(self.tags, local.code_tag)
      error_message = "not this code"
    }
  }
}
`})
	wantProblems(t, functionVersionProblems(m),
		"yandex_function.bare: no tags", "yandex_function.bare: no lifecycle postcondition",
		"yandex_function.version_only: postcondition does not check self.tags")
}

func TestStaticKeyWithoutCreateBeforeDestroyIsFound(t *testing.T) {
	m := fixture(t, map[string]string{"keys.tf": `
resource "yandex_iam_service_account_static_access_key" "plain" {
  service_account_id = "a"
}
resource "yandex_iam_service_account_static_access_key" "off" {
  service_account_id = "a"
  lifecycle {
    create_before_destroy = false
  }
}
resource "yandex_iam_service_account_static_access_key" "ok" {
  service_account_id = "a"
  lifecycle {
    create_before_destroy = true
  }
}
`})
	wantProblems(t, staticKeyProblems(m), "static_access_key.plain: no create_before_destroy", "static_access_key.off: no create_before_destroy")
}

func TestWorkingDirectoryPathsAreFound(t *testing.T) {
	root := fixture(t, map[string]string{"main.tf": `
locals {
  dist   = "${path.root}/../dist"
  loose  = "../dist"
  config = yamldecode(file("../triggers/triggers.yaml"))
  fine   = yamldecode(file("${path.module}/../triggers/triggers.yaml"))
}
module "good" {
  source   = "./modules/function"
  dist_dir = local.dist
}
module "bad" {
  source   = "./modules/function"
  dist_dir = local.loose
}
`})
	mod := fixture(t, map[string]string{"main.tf": `
locals {
  zip = "${var.dist_dir}/x.zip"
}
resource "yandex_function" "this" {
  user_hash = filesha256(local.zip)
  content {
    zip_filename = local.zip
  }
}
`})
	wantProblems(t, pathProblems(root, nil), `file(): path "../triggers/triggers.yaml"`)
	if p := pathProblems(mod, rootedCallArgs(root, root.blocks("module", "good")[0])); len(p) != 0 {
		t.Errorf("module called with a path.root dist_dir: %q", p)
	}
	wantProblems(t, pathProblems(mod, rootedCallArgs(root, root.blocks("module", "bad")[0])),
		"filesha256(): path local.zip", "zip_filename: path local.zip")
}

func TestDashboardProblemsAreFound(t *testing.T) {
	panels := []panel{
		{ID: "saga-steps", Queries: []string{`series_sum("status", "saga_steps_total"{folderId="f", service="custom", direction="forward"})`}},
		{ID: "saga-steps", Queries: []string{`series_sum("colour", "saga_steps_total"{folderId="f", service="custom"})`}},
		{ID: "outbox-lag", Queries: []string{`"outbox_lag"{folderId="f", service="custom"}`}},
		{ID: "http-latency", Queries: []string{`series_max("route", "http_request_duration_seconds_max"{folderId="f", service="custom", verb="GET"})`}},
		{ID: "http-bins", Queries: []string{`"http_request_duration_seconds_bucket"{folderId="f", service="custom", bin="0.1"}`}},
		{ID: "dlq-size", Queries: []string{`"dlq_size"{queue="x"}`}},
		{ID: "empty"},
	}
	runbook := "Look at panel `saga-steps`, then panel `nowhere`; panel `http-latency`, panel `dlq-size`."
	wantProblems(t, dashboardProblems(panels, runbook),
		`panel id "saga-steps" twice`, `groups saga_steps_total by "colour"`,
		`"outbox_lag" is not a metric the code pushes`, `http_request_duration_seconds_max has no label "verb"`,
		`selector of dlq_size lacks folderId`, "panel empty has no query",
		"no panel shows a outbox_* metric", "no panel shows a breaker_* metric",
		"runbook: panel `nowhere` is not on the dashboard", "no entry points to a outbox-* panel",
		"no entry points to a breaker-* panel")
}
