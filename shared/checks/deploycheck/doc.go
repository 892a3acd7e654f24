// Package deploycheck holds no code: its tests check that the deployment
// description — terraform/ (root module and modules/), triggers/triggers.yaml
// and terraform/api/openapi.yaml — is consistent with the code in functions/
// and keeps the deployment's safety rules (no public function, no secret in a
// variable default or an output, terraform fmt layout) and the yandex
// provider's rules that `terraform validate` cannot see (rules_test.go: no
// yandex_ydb_database_iam_member, one authoritative binding per role at the
// root, sleep_after on every grant, a version postcondition on every
// function, create_before_destroy static keys, file paths from path.module or
// path.root, security on every OpenAPI operation, dashboard queries over
// catalogued metrics and a runbook that names its panels). They read the
// repository's files only; nothing touches the network.
package deploycheck
