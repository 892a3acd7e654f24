# The function's Message Queue static access key. Terraform creates it with
# output_to_lockbox, so the key goes straight into this Lockbox secret and
# never into the Terraform state, a variable or an output; the function reads
# it through its secrets{} blocks (YMQ_ACCESS_KEY_ID, YMQ_SECRET_ACCESS_KEY).
# Only the function's own service account may read the secret. Rotate with
#   terraform apply -replace='module.<name>.yandex_iam_service_account_static_access_key.ymq'
# create_before_destroy: the new key (a new Lockbox version) exists and the
# function's new version points at it before the old key is deleted, so the
# running version never holds a deleted key.
resource "yandex_lockbox_secret" "ymq_key" {
  name        = "${local.full_name}-ymq-key"
  folder_id   = var.folder_id
  description = "Message Queue static access key of ${local.full_name} (written by Terraform via output_to_lockbox)."
}

resource "yandex_iam_service_account_static_access_key" "ymq" {
  service_account_id = yandex_iam_service_account.this.id
  description        = "Message Queue key of ${local.full_name}; the values live in Lockbox secret ${yandex_lockbox_secret.ymq_key.name}."

  output_to_lockbox {
    secret_id            = yandex_lockbox_secret.ymq_key.id
    entry_for_access_key = "access_key_id"
    entry_for_secret_key = "secret_access_key"
  }

  lifecycle {
    create_before_destroy = true
  }
}

resource "yandex_lockbox_secret_iam_member" "ymq_key_reader" {
  secret_id   = yandex_lockbox_secret.ymq_key.id
  role        = "lockbox.payloadViewer"
  member      = "serviceAccount:${yandex_iam_service_account.this.id}"
  sleep_after = var.iam_wait
}
