# One ordersaga cloud function: the golang123 runtime, entry point
# index.Handler, code from the zip that scripts/package built (a new version
# whenever the zip's SHA-256 changes), environment, Lockbox secrets and logs.
locals {
  full_name = "${var.name_prefix}-${var.name}"
  zip_path  = "${var.dist_dir}/${var.name}.zip"
}

resource "yandex_function" "this" {
  name               = local.full_name
  folder_id          = var.folder_id
  description        = var.description
  runtime            = "golang123"
  entrypoint         = "index.Handler"
  memory             = var.memory_mb
  execution_timeout  = tostring(var.timeout_seconds)
  service_account_id = yandex_iam_service_account.this.id
  user_hash          = filesha256(local.zip_path)
  environment        = merge(var.environment, { ORDERSAGA_FUNCTION = var.name })

  content {
    zip_filename = local.zip_path
  }

  secrets {
    id                   = yandex_lockbox_secret.ymq_key.id
    version_id           = yandex_iam_service_account_static_access_key.ymq.output_to_lockbox_version_id
    key                  = "access_key_id"
    environment_variable = "YMQ_ACCESS_KEY_ID"
  }

  secrets {
    id                   = yandex_lockbox_secret.ymq_key.id
    version_id           = yandex_iam_service_account_static_access_key.ymq.output_to_lockbox_version_id
    key                  = "secret_access_key"
    environment_variable = "YMQ_SECRET_ACCESS_KEY"
  }

  log_options {
    log_group_id = var.log_group_id
    min_level    = var.log_min_level
  }

  # Metadata credentials (YDB_AUTH=metadata) need the metadata endpoint.
  metadata_options {
    gce_http_endpoint = 1
  }

  # The account must hold its roles before the first version is created
  # (the version reads its Lockbox secret as this account).
  depends_on = [
    yandex_resourcemanager_folder_iam_member.role,
    yandex_ydb_database_iam_member.editor,
    yandex_lockbox_secret_iam_member.ymq_key_reader,
  ]
}
