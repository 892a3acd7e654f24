# The five cloud functions, one module call each (modules/function: the
# function, its own service account with only the roles listed here, and its
# Message Queue key in Lockbox). One block per folder under functions/; the
# consistency test (shared/checks/deploycheck) fails when they drift apart.
#
# Message Queue is signed with a static key (platform-notes §4.1), so the
# YMQ roles below are what each function's key may do: every function sends
# (ymq.writer); dlqredrive and sagarecovery also receive and delete
# (ymq.reader, to move messages out of saga-commands-dlq into the
# dead-letter store). All functions write YDB
# (ydb.editor, on this database only: ydb.tf) and custom metrics
# (monitoring.editor, folder level — the only level it exists at) and their
# logs (logging.writer).
#
# Message Queue roles exist only at folder (or cloud) level, so every
# function may use every queue of the folder: give each stand its own folder
# (terraform/README.md, "One folder per stand").

locals {
  # Settings every function shares; config.Load validates them at cold start.
  common_environment = merge({
    ORDERSAGA_STORE         = "ydb"
    YDB_CONNECTION_STRING   = yandex_ydb_database_serverless.main.ydb_full_endpoint
    YDB_AUTH                = "metadata"
    ORDERSAGA_QUEUE         = "ymq"
    YMQ_ENDPOINT            = var.ymq_endpoint
    YMQ_REGION              = var.ymq_region
    SAGA_COMMANDS_QUEUE_URL = local.queue_urls["saga-commands"]
    SAGA_COMMANDS_DLQ_URL   = local.queue_urls["saga-commands-dlq"]
    ORDER_EVENTS_QUEUE_URL  = local.queue_urls["order-events"]
    ORDERSAGA_AUTH          = "gateway"
    ORDERSAGA_METRICS       = "monitoring"
    MONITORING_FOLDER_ID    = var.folder_id
    ORDERSAGA_LOG_LEVEL     = var.log_level
  }, var.extra_environment)

  base_roles = ["monitoring.editor", "logging.writer"]

  # Where the zips are, from the root module's own directory (path.root), so
  # the result does not depend on where terraform is started; an absolute
  # var.dist_dir is used as it is.
  dist_dir = startswith(var.dist_dir, "/") ? var.dist_dir : "${path.root}/${var.dist_dir}"

  # Function folder name → function ID (triggers.tf, api.tf, outputs.tf).
  function_ids = {
    orderapi     = module.orderapi.function_id
    outboxrelay  = module.outboxrelay.function_id
    sagaadvancer = module.sagaadvancer.function_id
    sagarecovery = module.sagarecovery.function_id
    dlqredrive   = module.dlqredrive.function_id
  }

  # Function folder name → its service account ID (ydb.tf, outputs.tf).
  function_service_accounts = {
    orderapi     = module.orderapi.service_account_id
    outboxrelay  = module.outboxrelay.service_account_id
    sagaadvancer = module.sagaadvancer.service_account_id
    sagarecovery = module.sagarecovery.service_account_id
    dlqredrive   = module.dlqredrive.service_account_id
  }

  # Function folder name → ID of its $latest version (outputs.tf).
  function_versions = {
    orderapi     = module.orderapi.version
    outboxrelay  = module.outboxrelay.version
    sagaadvancer = module.sagaadvancer.version
    sagarecovery = module.sagarecovery.version
    dlqredrive   = module.dlqredrive.version
  }
}

resource "yandex_logging_group" "functions" {
  name             = "${var.name_prefix}-functions"
  folder_id        = var.folder_id
  retention_period = var.log_retention
}

module "orderapi" {
  source = "./modules/function"

  name            = "orderapi"
  description     = "HTTP API behind API Gateway: POST /orders, GET /orders/{id}, admin routes."
  name_prefix     = var.name_prefix
  folder_id       = var.folder_id
  dist_dir        = local.dist_dir
  memory_mb       = var.function_memory_mb["orderapi"]
  timeout_seconds = var.function_timeout_seconds["orderapi"]
  environment     = local.common_environment
  folder_roles    = concat(local.base_roles, ["ymq.writer"])
  iam_wait        = var.iam_propagation_seconds
  log_group_id    = yandex_logging_group.functions.id
}

module "outboxrelay" {
  source = "./modules/function"

  name            = "outboxrelay"
  description     = "Timer: relays outbox rows to Message Queue."
  name_prefix     = var.name_prefix
  folder_id       = var.folder_id
  dist_dir        = local.dist_dir
  memory_mb       = var.function_memory_mb["outboxrelay"]
  timeout_seconds = var.function_timeout_seconds["outboxrelay"]
  environment     = local.common_environment
  folder_roles    = concat(local.base_roles, ["ymq.writer"])
  iam_wait        = var.iam_propagation_seconds
  log_group_id    = yandex_logging_group.functions.id
}

module "sagaadvancer" {
  source = "./modules/function"

  name            = "sagaadvancer"
  description     = "Message Queue trigger on saga-commands: advances each saga by one step."
  name_prefix     = var.name_prefix
  folder_id       = var.folder_id
  dist_dir        = local.dist_dir
  memory_mb       = var.function_memory_mb["sagaadvancer"]
  timeout_seconds = var.function_timeout_seconds["sagaadvancer"]
  environment     = local.common_environment
  folder_roles    = concat(local.base_roles, ["ymq.writer"])
  iam_wait        = var.iam_propagation_seconds
  log_group_id    = yandex_logging_group.functions.id
}

module "sagarecovery" {
  source = "./modules/function"

  name            = "sagarecovery"
  description     = "Timer: resends stuck sagas and abandoned idempotency keys."
  name_prefix     = var.name_prefix
  folder_id       = var.folder_id
  dist_dir        = local.dist_dir
  memory_mb       = var.function_memory_mb["sagarecovery"]
  timeout_seconds = var.function_timeout_seconds["sagarecovery"]
  environment     = local.common_environment
  folder_roles    = concat(local.base_roles, ["ymq.writer", "ymq.reader"])
  iam_wait        = var.iam_propagation_seconds
  log_group_id    = yandex_logging_group.functions.id
}

module "dlqredrive" {
  source = "./modules/function"

  name            = "dlqredrive"
  description     = "Console invoke: list, show, redrive or discard dead letters."
  name_prefix     = var.name_prefix
  folder_id       = var.folder_id
  dist_dir        = local.dist_dir
  memory_mb       = var.function_memory_mb["dlqredrive"]
  timeout_seconds = var.function_timeout_seconds["dlqredrive"]
  environment     = local.common_environment
  folder_roles    = concat(local.base_roles, ["ymq.reader", "ymq.writer"])
  iam_wait        = var.iam_propagation_seconds
  log_group_id    = yandex_logging_group.functions.id
}
