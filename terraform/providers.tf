# Provider and Terraform versions. Authentication is taken from the
# environment, never from variables: YC_TOKEN (yc iam create-token) or
# YC_SERVICE_ACCOUNT_KEY_FILE (an authorized key of a deployer service
# account). See terraform/README.md.
#
# The provider is pinned to exactly the version this configuration was
# reviewed against (platform notes, section 6): a fresh machine must not take
# a newer one. The checksums live in .terraform.lock.hcl, which only
# `terraform init` with registry (or mirror) access can write: commit the
# one the first init writes (terraform/README.md, "Provider and mirror").
terraform {
  required_version = ">= 1.5.0"

  required_providers {
    yandex = {
      source  = "yandex-cloud/yandex"
      version = "= 0.222.0"
    }
  }
}

provider "yandex" {
  cloud_id  = var.cloud_id
  folder_id = var.folder_id
  zone      = var.zone
}
