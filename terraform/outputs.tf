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
  value       = local.function_service_accounts
}

output "function_versions" {
  description = "Function folder name → ID of its $latest version (scripts/deploy.sh fails when one is empty)."
  value       = local.function_versions
}

output "function_code_tags" {
  description = "Function folder name → version tag naming the zip its $latest version must be built from."
  value = {
    orderapi     = module.orderapi.code_tag
    outboxrelay  = module.outboxrelay.code_tag
    sagaadvancer = module.sagaadvancer.code_tag
    sagarecovery = module.sagarecovery.code_tag
    dlqredrive   = module.dlqredrive.code_tag
  }
}

output "dashboard_id" {
  description = "Yandex Monitoring dashboard of the stand (docs/deploy.md, Dashboard)."
  value       = yandex_monitoring_dashboard.main.id
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
