# Inputs. None of them is a secret: credentials come from the environment
# (providers.tf) and the Message Queue keys are created by Terraform straight
# into Lockbox (modules/function/lockbox.tf).

variable "cloud_id" {
  description = "Yandex Cloud cloud ID (yc config get cloud-id)."
  type        = string
}

variable "folder_id" {
  description = "Folder that receives every resource (yc config get folder-id)."
  type        = string
}

variable "zone" {
  description = "Default availability zone of the provider."
  type        = string
  default     = "ru-central1-a"
}

variable "name_prefix" {
  description = "Prefix of every resource name. Give every stand its own folder as well: Message Queue roles are folder-wide, so stands sharing a folder can read each other's queues."
  type        = string
  default     = "ordersaga"

  validation {
    condition     = can(regex("^[a-z][-a-z0-9]{0,30}$", var.name_prefix))
    error_message = "name_prefix: lower-case letters, digits and '-', starting with a letter, at most 31 characters."
  }
}

variable "dist_dir" {
  description = "Directory with the function zips built by `go run ./scripts/package`: absolute, or relative to the root module terraform/ (resolved from path.root, not from the working directory)."
  type        = string
  default     = "../dist"
}

variable "iam_propagation_seconds" {
  description = "Seconds every grant waits after its creation (sleep_after) before what uses it is created: IAM changes take a few seconds to reach every service."
  type        = number
  default     = 15

  validation {
    condition     = var.iam_propagation_seconds >= 0 && var.iam_propagation_seconds <= 300
    error_message = "iam_propagation_seconds must be between 0 and 300."
  }
}

variable "function_memory_mb" {
  description = "Memory of each function in MB (a multiple of 128; CPU share grows with it)."
  type        = map(number)
  default = {
    orderapi     = 256
    outboxrelay  = 256
    sagaadvancer = 256
    sagarecovery = 128
    dlqredrive   = 256
  }

  validation {
    condition     = alltrue([for m in values(var.function_memory_mb) : m >= 128 && m <= 4096 && m % 128 == 0])
    error_message = "function_memory_mb: each value must be a multiple of 128 between 128 and 4096."
  }
}

variable "function_timeout_seconds" {
  description = "Execution timeout of each function in seconds. The saga-commands visibility timeouts in triggers/triggers.yaml must be at least sagaadvancer's."
  type        = map(number)
  default = {
    orderapi     = 15
    outboxrelay  = 60
    sagaadvancer = 60
    sagarecovery = 60
    dlqredrive   = 300
  }

  validation {
    condition     = alltrue([for t in values(var.function_timeout_seconds) : t >= 1 && t <= 600])
    error_message = "function_timeout_seconds: each value must be between 1 and 600 (longer needs long-lived functions)."
  }
}

variable "log_level" {
  description = "ORDERSAGA_LOG_LEVEL of every function: debug, info, warn or error."
  type        = string
  default     = "info"

  validation {
    condition     = contains(["debug", "info", "warn", "error"], var.log_level)
    error_message = "log_level must be debug, info, warn or error."
  }
}

variable "log_retention" {
  description = "Retention of the functions' log group (Cloud Logging duration, e.g. 72h)."
  type        = string
  default     = "72h"
}

variable "extra_environment" {
  description = "Additional non-secret settings for every function (e.g. RELAY_BUDGET = \"45s\"); see README's configuration reference. Secrets belong in Lockbox."
  type        = map(string)
  default     = {}
}

variable "ymq_endpoint" {
  description = "Message Queue (SQS API) endpoint."
  type        = string
  default     = "https://message-queue.api.cloud.yandex.net"
}

variable "ymq_region" {
  description = "Message Queue signing region."
  type        = string
  default     = "ru-central1"
}

variable "ydb_storage_limit_gb" {
  description = "Storage limit of the serverless YDB database, GB."
  type        = number
  default     = 10
}

variable "ydb_throttling_rcu_limit" {
  description = "Throughput limit of the serverless YDB database in request units per second (a cost guard: requests past it are throttled, not billed); 0 disables the limit. The default admits the README's burst of 600 orders (119 RU each) from 5 minutes of unused RU and 2.5 confirmed orders/s sustained; docs/ydb.md, \"Cost guard\", sizes it for N orders/s."
  type        = number
  default     = 300

  validation {
    condition     = var.ydb_throttling_rcu_limit >= 0 && floor(var.ydb_throttling_rcu_limit) == var.ydb_throttling_rcu_limit
    error_message = "ydb_throttling_rcu_limit must be a whole number >= 0."
  }
}

variable "ydb_deletion_protection" {
  description = "Protect the database from deletion. Set true for production; `terraform destroy` then needs it set false first."
  type        = bool
  default     = false
}

variable "trigger_queue_role" {
  description = "Folder role that lets the trigger service account read saga-commands. ymq.reader covers receive, delete and visibility changes; the platform docs name editor — use it only if trigger creation is refused."
  type        = string
  default     = "ymq.reader"
}

variable "jwt_issuer" {
  description = "Issuer (iss) of the JWTs the API Gateway accepts, e.g. https://auth.example.com; <issuer>/.well-known/openid-configuration must exist."
  type        = string
}

variable "jwt_jwks_uri" {
  description = "JWKS URL with the keys that sign the accepted JWTs."
  type        = string
}

variable "jwt_audience" {
  description = "Audience (aud) the accepted JWTs must carry."
  type        = string
}

variable "jwt_jwk_ttl_seconds" {
  description = "How long API Gateway caches the signing keys it fetched from jwt_jwks_uri (jwkTtlInSeconds). Publish a new signing key in the JWKS at least this long before tokens are signed with it."
  type        = number
  default     = 600

  validation {
    condition     = var.jwt_jwk_ttl_seconds >= 60 && var.jwt_jwk_ttl_seconds <= 86400 && floor(var.jwt_jwk_ttl_seconds) == var.jwt_jwk_ttl_seconds
    error_message = "jwt_jwk_ttl_seconds must be whole seconds between 60 and 86400."
  }
}
