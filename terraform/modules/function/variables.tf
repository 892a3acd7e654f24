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
  description = "Directory with the zips built by scripts/package."
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

variable "ydb_database_id" {
  description = "YDB database the function's service account may read and write (ydb.editor on this database only)."
  type        = string
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
