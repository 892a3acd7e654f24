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
