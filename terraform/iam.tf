# Service accounts that are not a function's own (those live in
# modules/function): the queue administrator Terraform uses, the API
# Gateway's invoker and the triggers' invoker. Every grant is as narrow as the
# platform allows: function invocation is granted per function; Message Queue
# roles exist only at folder (or cloud) level.

# --- Queue administration (Terraform itself) ---------------------------------
# ymq.admin: create queues, set attributes (RedrivePolicy needs it), delete.
# The platform docs use editor; ymq.admin is the narrower role that covers it.
resource "yandex_iam_service_account" "queue_admin" {
  name        = "${var.name_prefix}-queue-admin"
  folder_id   = var.folder_id
  description = "Terraform's Message Queue administrator for ${var.name_prefix} (static key used by yandex_message_queue only)."
}

# The queues are created with this grant right after it exists: sleep_after
# gives IAM the time to propagate.
resource "yandex_resourcemanager_folder_iam_member" "queue_admin" {
  folder_id   = var.folder_id
  role        = "ymq.admin"
  member      = "serviceAccount:${yandex_iam_service_account.queue_admin.id}"
  sleep_after = var.iam_propagation_seconds
}

# create_before_destroy: on rotation (-replace) the queues switch to the new
# key before the old one is deleted.
resource "yandex_iam_service_account_static_access_key" "queue_admin" {
  service_account_id = yandex_iam_service_account.queue_admin.id
  description        = "Terraform manages the ${var.name_prefix} queues with this key."

  lifecycle {
    create_before_destroy = true
  }
}

# --- API Gateway -------------------------------------------------------------
# Invokes orderapi, and nothing else (granted on that function only, api.tf).
resource "yandex_iam_service_account" "gateway" {
  name        = "${var.name_prefix}-gateway"
  folder_id   = var.folder_id
  description = "API Gateway ${var.name_prefix}-api invokes orderapi as this account."
}

# --- Triggers ----------------------------------------------------------------
# Invokes the functions named in triggers.yaml (granted per function,
# triggers.tf) and reads the queues of the queue triggers: receive, delete,
# change visibility — var.trigger_queue_role (ymq.reader by default; the docs
# name editor, which would also let it create and delete any resource in the
# folder).
resource "yandex_iam_service_account" "triggers" {
  name        = "${var.name_prefix}-triggers"
  folder_id   = var.folder_id
  description = "Timer and Message Queue triggers of ${var.name_prefix} invoke functions and read queues as this account."
}

resource "yandex_resourcemanager_folder_iam_member" "triggers_queue_reader" {
  folder_id   = var.folder_id
  role        = var.trigger_queue_role
  member      = "serviceAccount:${yandex_iam_service_account.triggers.id}"
  sleep_after = var.iam_propagation_seconds
}
