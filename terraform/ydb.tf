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

  serverless_database {
    storage_size_limit = var.ydb_storage_limit_gb
  }
}

# ydb.editor (read and write data) for every function's service account, on
# this database only. The provider has no yandex_ydb_database_iam_member,
# only this binding, which is authoritative for one role on one database: it
# sets the complete member list of ydb.editor here and removes anyone else
# holding ydb.editor on this database (database-level grants only; folder
# roles such as the deployer's are not touched). Hence one binding with every
# member, never one per function (they would overwrite each other). It is the
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
