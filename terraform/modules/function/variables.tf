# Inputs of one cloud function of ordersaga.

variable "name" {
  description = "Function folder name under functions/ (e.g. orderapi); the zip is <dist_dir>/<name>.zip."
  type        = string
}

variable "description" {
  description = "What the function does."
  type        = string
  default     = ""
}

variable "name_prefix" {
  description = "Prefix of the cloud resource names."
  type        = string
}

variable "folder_id" {
  description = "Folder of the function, its service account and its Lockbox secret."
  type        = string
}

variable "dist_dir" {
  description = "Directory with the zips built by scripts/package: absolute, or built from path.root by the caller (never relative to the working directory)."
  type        = string
}

variable "memory_mb" {
  description = "Memory in MB (multiple of 128)."
  type        = number
}

variable "timeout_seconds" {
  description = "Execution timeout in seconds."
  type        = number
}

variable "environment" {
  description = "Environment variables (non-secret; the YMQ key comes from Lockbox)."
  type        = map(string)
}

variable "folder_roles" {
  description = "Folder-level roles of the function's service account (roles that exist only at folder level: ymq.*, monitoring.*, logging.*)."
  type        = list(string)
}

variable "log_group_id" {
  description = "Cloud Logging group for the function's logs."
  type        = string
}

variable "log_min_level" {
  description = "Lowest log level shipped to Cloud Logging."
  type        = string
  default     = "INFO"
}

variable "iam_wait" {
  description = "Seconds each grant waits after it is created (sleep_after) before anything that uses it is created."
  type        = number
}
