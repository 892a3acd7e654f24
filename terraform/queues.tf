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
#
# "Access denied" reads as "deleted": the provider's read of a queue treats
# an access error like a missing queue and drops the queue from the state.
# A broken or rotated-away queue-admin key (or a lost ymq.admin grant)
# therefore makes the next plan "create" every queue. Nothing is deleted:
# the queues and their messages are still there, and creating one again
# with the same name and attributes returns the same URL; but the plan is
# misleading, and a create with other attributes fails. scripts/deploy.sh
# refuses to apply a plan that creates a queue the state held before, and
# says what to check (terraform/README.md, "When a plan recreates the
# queues").
#
# Message size: a queue trigger drops an event over 230 KB silently
# (platform notes, 1.6), while Message Queue accepts messages up to
# 256 KiB. max_message_size makes the queue itself refuse what a trigger
# would drop, so the sender gets an error (the relay dead-letters the row,
# visibly) instead of the message vanishing. 224 KiB leaves 6 KiB of the
# 230 KB for the trigger's envelope (ids, attributes, JSON escaping of the
# body; the order API caps a request at 64 KiB).

locals {
  max_message_size = 224 * 1024

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
  max_message_size           = local.max_message_size

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
  max_message_size           = local.max_message_size
  redrive_policy = jsonencode({
    deadLetterTargetArn = yandex_message_queue.plain[each.value.dead_letter_queue].arn
    maxReceiveCount     = each.value.max_receive_count
  })

  access_key = yandex_iam_service_account_static_access_key.queue_admin.access_key
  secret_key = yandex_iam_service_account_static_access_key.queue_admin.secret_key

  depends_on = [yandex_resourcemanager_folder_iam_member.queue_admin]
}
