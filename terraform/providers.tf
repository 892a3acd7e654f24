# Provider and Terraform versions. Authentication is taken from the
# environment, never from variables: YC_TOKEN (yc iam create-token) or
# YC_SERVICE_ACCOUNT_KEY_FILE (an authorized key of a deployer service
# account). See terraform/README.md.
terraform {
  required_version = ">= 1.5.0"

  required_providers {
    yandex = {
      source  = "yandex-cloud/yandex"
      version = "~> 0.222"
    }
  }
}

provider "yandex" {
  cloud_id  = var.cloud_id
  folder_id = var.folder_id
  zone      = var.zone
}
