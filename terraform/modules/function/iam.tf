# The function's own service account and its grants: the folder roles it is
# given and lockbox.payloadViewer on its own key's secret (lockbox.tf).
# ydb.editor on the database is granted at the root (ydb.tf): the provider
# has only the authoritative yandex_ydb_database_iam_binding for databases,
# one per role, so it must list every function's account in one place.
# Nothing here makes the function public.
#
# IAM changes take a few seconds to reach every service; sleep_after
# (seconds, provider v0.222.0 yandex/iam_member.go) holds each grant's create
# until it is usable, because the function version below is created right
# after it and reads the Lockbox secret as this account.
resource "yandex_iam_service_account" "this" {
  name        = "${local.full_name}-fn"
  folder_id   = var.folder_id
  description = "Runs ${local.full_name}: ${var.description}"
}

resource "yandex_resourcemanager_folder_iam_member" "role" {
  for_each = toset(var.folder_roles)

  folder_id   = var.folder_id
  role        = each.key
  member      = "serviceAccount:${yandex_iam_service_account.this.id}"
  sleep_after = var.iam_wait
}
