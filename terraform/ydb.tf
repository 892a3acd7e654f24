# The serverless YDB database: orders, sagas, outbox, inbox, idempotency keys,
# dead letters. Its schema is applied by `go run ./scripts/migrate` after
# apply (scripts/deploy.sh does it). Functions reach it with their service
# account's IAM token (YDB_AUTH=metadata); each function's account gets
# ydb.editor on this database only (modules/function/iam.tf).
resource "yandex_ydb_database_serverless" "main" {
  name                = "${var.name_prefix}-db"
  folder_id           = var.folder_id
  location_id         = "ru-central1"
  deletion_protection = var.ydb_deletion_protection

  # Cost guard (issue 12 item 7): past throttling_rcu_limit request units
  # per second the database answers OVERLOADED instead of billing more;
  # the adapter retries OVERLOADED a bounded number of times (docs/ydb.md,
  # "Cost guard"). 0 turns the limit off.
  serverless_database {
    storage_size_limit          = var.ydb_storage_limit_gb
    enable_throttling_rcu_limit = var.ydb_throttling_rcu_limit > 0
    throttling_rcu_limit        = var.ydb_throttling_rcu_limit
  }
}

# ydb.editor (read and write data) for every function's service account, on
# this database only. The provider has no yandex_ydb_database_iam_member,
# only this binding for one role on one database. Creating it adds these
# members and removes no one; its read keeps only the members it lists, so
# another holder of ydb.editor on this database shows no diff; a change of
# the member list rewrites the role and then drops members it does not list
# (provider v0.222.0, yandex/iam_binding.go). Folder roles such as the
# deployer's are never touched. Hence one binding with every member, never
# one per function (each update would drop the others). It is the
# least privilege the platform offers: ydb.viewer cannot write, and finer
# grants (per table) exist only as YDB ACLs inside the database, which
# Terraform does not manage.
# Nothing reads the database until a trigger fires or the gateway is called,
# so triggers.tf and api.tf wait for this binding (sleep_after included).
resource "yandex_ydb_database_iam_binding" "functions_editor" {
  database_id = yandex_ydb_database_serverless.main.id
  role        = "ydb.editor"
  members     = [for id in values(local.function_service_accounts) : "serviceAccount:${id}"]
  sleep_after = var.iam_propagation_seconds
}
