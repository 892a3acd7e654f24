# Outputs of one function: IDs only.

output "function_id" {
  description = "Cloud Function ID."
  value       = yandex_function.this.id
}

output "function_name" {
  description = "Cloud Function name."
  value       = yandex_function.this.name
}

output "version" {
  description = "ID of the function version created from the current zip."
  value       = yandex_function.this.version
}

output "code_tag" {
  description = "Version tag that names the zip the $latest version must be built from."
  value       = local.code_tag
}

output "service_account_id" {
  description = "ID of the function's service account."
  value       = yandex_iam_service_account.this.id
}

output "ymq_key_secret_id" {
  description = "ID of the Lockbox secret with the function's Message Queue key (not the key)."
  value       = yandex_lockbox_secret.ymq_key.id
}
