# The function's own service account and its grants: the folder roles it is
# given, ydb.editor on the one database, lockbox.payloadViewer on its own
# key's secret (lockbox.tf). Nothing here makes the function public.
resource "yandex_iam_service_account" "this" {
  name        = "${local.full_name}-fn"
  folder_id   = var.folder_id
  description = "Runs ${local.full_name}: ${var.description}"
}

resource "yandex_resourcemanager_folder_iam_member" "role" {
  for_each = toset(var.folder_roles)

  folder_id = var.folder_id
  role      = each.key
  member    = "serviceAccount:${yandex_iam_service_account.this.id}"
}

resource "yandex_ydb_database_iam_member" "editor" {
  database_id = var.ydb_database_id
  role        = "ydb.editor"
  member      = "serviceAccount:${yandex_iam_service_account.this.id}"
}
