# Outputs: addresses and IDs only — never a key, a token or a secret value.

output "api_url" {
  description = "Base URL of the HTTP API."
  value       = "https://${yandex_api_gateway.api.domain}"
}

output "function_ids" {
  description = "Function folder name → Cloud Function ID (yc serverless function invoke <id>)."
  value       = local.function_ids
}

output "function_service_accounts" {
  description = "Function folder name → its service account ID."
  value = {
    orderapi     = module.orderapi.service_account_id
    outboxrelay  = module.outboxrelay.service_account_id
    sagaadvancer = module.sagaadvancer.service_account_id
    sagarecovery = module.sagarecovery.service_account_id
    dlqredrive   = module.dlqredrive.service_account_id
  }
}

output "queue_urls" {
  description = "Logical queue name (triggers.yaml) → Message Queue URL."
  value       = local.queue_urls
}

output "ydb_endpoint" {
  description = "YDB connection string (for go run ./scripts/migrate -dsn ...)."
  value       = yandex_ydb_database_serverless.main.ydb_full_endpoint
}

output "ymq_key_lockbox_secret_ids" {
  description = "Function folder name → ID of the Lockbox secret holding its Message Queue key (the values stay in Lockbox)."
  value = {
    orderapi     = module.orderapi.ymq_key_secret_id
    outboxrelay  = module.outboxrelay.ymq_key_secret_id
    sagaadvancer = module.sagaadvancer.ymq_key_secret_id
    sagarecovery = module.sagarecovery.ymq_key_secret_id
    dlqredrive   = module.dlqredrive.ymq_key_secret_id
  }
}
