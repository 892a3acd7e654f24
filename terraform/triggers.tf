# Triggers, created from triggers/triggers.yaml (the local runner fires the
# same ones): timers for the relay and the recovery, the Message Queue trigger
# for the saga advancer. All of them invoke as the triggers service account,
# which may invoke exactly the functions named here.
#
# Message Queue triggers take no retry or DLQ settings (the provider rejects
# them): redelivery is the queue's visibility timeout, and after
# max_receive_count receives the queue's own RedrivePolicy moves the message
# to its dead-letter queue (queues.tf).

locals {
  timers         = { for t in local.triggers_file.timers : t.name => t }
  queue_triggers = { for t in try(local.triggers_file.queue_triggers, []) : t.name => t }

  triggered_functions = toset(concat(
    [for t in values(local.timers) : t.function],
    [for t in values(local.queue_triggers) : t.function],
  ))
}

resource "yandex_function_iam_member" "triggers_invoke" {
  for_each = local.triggered_functions

  function_id = local.function_ids[each.key]
  role        = "functions.functionInvoker"
  member      = "serviceAccount:${yandex_iam_service_account.triggers.id}"
  sleep_after = var.iam_propagation_seconds
}

resource "yandex_function_trigger" "timer" {
  for_each = local.timers

  name        = "${var.name_prefix}-${each.key}"
  folder_id   = var.folder_id
  description = "Fires ${each.value.function} (${each.value.cron}, UTC)."

  timer {
    cron_expression = each.value.cron
    payload         = try(each.value.payload, "")
  }

  function {
    id                 = local.function_ids[each.value.function]
    service_account_id = yandex_iam_service_account.triggers.id
  }

  # Fires within a minute of creation: the invoker grant and the functions'
  # database role must be usable by then.
  depends_on = [
    yandex_function_iam_member.triggers_invoke,
    yandex_ydb_database_iam_binding.functions_editor,
  ]
}

resource "yandex_function_trigger" "queue" {
  for_each = local.queue_triggers

  name        = "${var.name_prefix}-${each.key}"
  folder_id   = var.folder_id
  description = "Delivers ${each.value.queue} to ${each.value.function}."

  message_queue {
    queue_id           = local.queue_arns[each.value.queue]
    service_account_id = yandex_iam_service_account.triggers.id
    batch_size         = tostring(each.value.batch_size)
    batch_cutoff       = tostring(each.value.batch_cutoff_seconds)
    visibility_timeout = tostring(each.value.visibility_timeout_seconds)
  }

  function {
    id                 = local.function_ids[each.value.function]
    service_account_id = yandex_iam_service_account.triggers.id
  }

  lifecycle {
    precondition {
      condition = (each.value.visibility_timeout_seconds >= var.function_timeout_seconds[each.value.function] &&
      local.queues[each.value.queue].visibility_timeout_seconds >= var.function_timeout_seconds[each.value.function])
      error_message = "triggers.yaml: ${each.key}: the trigger's and the queue's visibility timeouts must be at least ${each.value.function}'s execution timeout, or a batch still running is delivered again."
    }
  }

  depends_on = [
    yandex_function_iam_member.triggers_invoke,
    yandex_resourcemanager_folder_iam_member.triggers_queue_reader,
    yandex_ydb_database_iam_binding.functions_editor,
  ]
}
