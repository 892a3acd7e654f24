# The API Gateway, from the OpenAPI document terraform/api/openapi.yaml.
# Every operation integrates orderapi (payload_format_version "1.0") and is
# called as the gateway service account, which may invoke orderapi only; no
# function is public. JWTs are checked by the gateway's jwt authorizer.
resource "yandex_api_gateway" "api" {
  name        = "${var.name_prefix}-api"
  folder_id   = var.folder_id
  description = "ordersaga HTTP API"

  spec = templatefile("${path.module}/api/openapi.yaml", {
    orderapi_function_id       = module.orderapi.function_id
    gateway_service_account_id = yandex_iam_service_account.gateway.id
    jwt_jwks_uri               = var.jwt_jwks_uri
    jwt_issuer                 = var.jwt_issuer
    jwt_audience               = var.jwt_audience
    jwt_jwk_ttl_seconds        = var.jwt_jwk_ttl_seconds
  })

  depends_on = [
    yandex_function_iam_member.gateway_invokes_orderapi,
    yandex_ydb_database_iam_binding.functions_editor,
  ]
}

resource "yandex_function_iam_member" "gateway_invokes_orderapi" {
  function_id = module.orderapi.function_id
  role        = "functions.functionInvoker"
  member      = "serviceAccount:${yandex_iam_service_account.gateway.id}"
  sleep_after = var.iam_propagation_seconds
}
