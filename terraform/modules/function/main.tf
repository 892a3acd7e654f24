# One ordersaga cloud function: the golang123 runtime, entry point
# index.Handler, code from the zip that scripts/package built (a new version
# whenever the zip's SHA-256 changes), environment, Lockbox secrets and logs.
#
# The provider turns a failed version build into a warning
# (yandex/resource_yandex_function.go, resourceYandexFunctionDiagsFromCreateVersionError)
# and never reads user_hash back, so neither `apply` nor the next `plan`
# would notice. The version therefore carries a tag naming its code
# (code_tag), which the provider does read back from the $latest version:
# the postcondition fails the apply when $latest is not a version of this
# zip — no version at all, or an older one because the new build failed —
# and a version retagged by hand shows up in the next plan as a change.
#
# A settings-only change (environment, memory, timeout, account, secret
# version) also makes a new version, with the same code tag: were its build
# to fail, the old $latest would still carry code-<hash> and pass. So the
# version carries a second tag, cfg-<16 hex digits of the SHA-256 of its
# settings>, and the postcondition wants both. (The settings tag is not an
# output: it hashes the Lockbox secret's version id, and no output reads a
# credential resource; scripts/deploy.sh checks that $latest carries one.)
locals {
  full_name = "${var.name_prefix}-${var.name}"
  zip_path  = "${var.dist_dir}/${var.name}.zip"
  zip_hash  = filesha256(local.zip_path)
  # Version tags match [a-z][-_0-9a-z]*; 16 hex digits of SHA-256 name the zip.
  code_tag = "code-${substr(local.zip_hash, 0, 16)}"

  environment = merge(var.environment, { ORDERSAGA_FUNCTION = var.name })
  # Everything besides the code that makes a new version.
  settings_hash = sha256(jsonencode({
    environment     = local.environment
    memory          = var.memory_mb
    timeout         = var.timeout_seconds
    service_account = yandex_iam_service_account.this.id
    secret_version  = yandex_iam_service_account_static_access_key.ymq.output_to_lockbox_version_id
    log_group       = var.log_group_id
    log_min_level   = var.log_min_level
  }))
  settings_tag = "cfg-${substr(local.settings_hash, 0, 16)}"
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
  user_hash          = local.zip_hash
  tags               = [local.code_tag, local.settings_tag]
  environment        = local.environment

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
  # (the version reads its Lockbox secret as this account); each grant
  # waits var.iam_wait after its creation (iam.tf).
  depends_on = [
    yandex_resourcemanager_folder_iam_member.role,
    yandex_lockbox_secret_iam_member.ymq_key_reader,
  ]

  lifecycle {
    postcondition {
      condition     = self.version != null && self.version != "" && contains(self.tags, local.code_tag) && contains(self.tags, local.settings_tag)
      error_message = "${local.full_name}: the $latest version is not built from ${local.zip_path} with these settings (tags ${local.code_tag}, ${local.settings_tag}): the version build failed — see the warning above or the builder log of the newest version (yc serverless function version list --function-name ${local.full_name}). Fix it and apply again."
    }
  }
}
