terraform {
  required_providers {
    yandex = {
      source  = "yandex-cloud/yandex"
      version = "= 0.222.0" # the root module's pin (providers.tf)
    }
  }
}
