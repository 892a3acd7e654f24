# Message Queue queues, created from triggers/triggers.yaml (the same file
# the local runner reads). A queue that names a dead_letter_queue gets a
# RedrivePolicy; its dead-letter queue must be a plain queue (a DLQ with a
# DLQ of its own is refused by the check below).
#
# The yandex_message_queue resource talks to the SQS API and needs a static
# access key: that of the queue-admin service account (iam.tf). Its secret
# key is used only as a sensitive resource argument — never a variable or an
# output — but like every credential a resource creates it is stored in the
# Terraform state: keep the state private (README: remote state).

locals {
  triggers_file = yamldecode(file("${path.module}/../triggers/triggers.yaml"))

  queues          = { for q in local.triggers_file.queues : q.name => q }
  plain_queues    = { for name, q in local.queues : name => q if try(q.dead_letter_queue, "") == "" }
  redriven_queues = { for name, q in local.queues : name => q if try(q.dead_letter_queue, "") != "" }

  # Logical queue name → URL / ARN, for functions, triggers and outputs.
  queue_urls = merge(
    { for name, q in yandex_message_queue.plain : name => q.id },
    { for name, q in yandex_message_queue.redriven : name => q.id },
  )
  queue_arns = merge(
    { for name, q in yandex_message_queue.plain : name => q.arn },
    { for name, q in yandex_message_queue.redriven : name => q.arn },
  )
}

check "dead_letter_queues_are_plain" {
  assert {
    condition     = alltrue([for q in values(local.redriven_queues) : contains(keys(local.plain_queues), q.dead_letter_queue)])
    error_message = "triggers.yaml: every dead_letter_queue must name a queue that has no dead_letter_queue itself."
  }
}

resource "yandex_message_queue" "plain" {
  for_each = local.plain_queues

  name                       = "${var.name_prefix}-${each.key}"
  region_id                  = var.ymq_region
  visibility_timeout_seconds = each.value.visibility_timeout_seconds
  message_retention_seconds  = each.value.message_retention_seconds

  access_key = yandex_iam_service_account_static_access_key.queue_admin.access_key
  secret_key = yandex_iam_service_account_static_access_key.queue_admin.secret_key

  depends_on = [yandex_resourcemanager_folder_iam_member.queue_admin]
}

resource "yandex_message_queue" "redriven" {
  for_each = local.redriven_queues

  name                       = "${var.name_prefix}-${each.key}"
  region_id                  = var.ymq_region
  visibility_timeout_seconds = each.value.visibility_timeout_seconds
  message_retention_seconds  = each.value.message_retention_seconds
  redrive_policy = jsonencode({
    deadLetterTargetArn = yandex_message_queue.plain[each.value.dead_letter_queue].arn
    maxReceiveCount     = each.value.max_receive_count
  })

  access_key = yandex_iam_service_account_static_access_key.queue_admin.access_key
  secret_key = yandex_iam_service_account_static_access_key.queue_admin.secret_key

  depends_on = [yandex_resourcemanager_folder_iam_member.queue_admin]
}
