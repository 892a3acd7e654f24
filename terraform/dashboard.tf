# The operator's dashboard in Yandex Monitoring: one section per concern
# (saga, outbox, dead letters, breaker, HTTP), every chart a query over the
# custom metrics the functions push (shared/domain/metrics/catalog.go, pushed by
# shared/adapters/ycmetrics: counters as per-invocation DGAUGE deltas, so sums over a
# window are totals; histograms as H_count/H_sum/H_max/H_bucket{bin}).
# Every point carries function=<folder name under functions/>; stands are
# told apart by folder (one folder per stand), so no name_prefix label.
# The runbook in docs/deploy.md names panels by their chart_id; the
# consistency test (shared/checks/deploycheck) checks that every metric and label
# below is in the catalogue and every panel the runbook names exists.
locals {
  # Selector of every ordersaga series of this stand.
  m = "folderId=\"${var.folder_id}\", service=\"custom\""

  dashboard_sections = [
    {
      title = "Saga"
      panels = [
        { id = "saga-steps", title = "Saga steps by status (forward)", type = "VISUALIZATION_TYPE_STACK",
        queries = ["series_sum(\"status\", \"saga_steps_total\"{${local.m}, direction=\"forward\"})"] },
        { id = "saga-compensations", title = "Compensations by status", type = "VISUALIZATION_TYPE_STACK",
        queries = ["series_sum(\"status\", \"compensations_total\"{${local.m}})"] },
        { id = "saga-duration", title = "Longest saga (s) by type", type = "VISUALIZATION_TYPE_LINE",
        queries = ["series_max(\"saga_type\", \"saga_duration_seconds_max\"{${local.m}})"] },
        { id = "saga-messages", title = "Saga commands by advancer result", type = "VISUALIZATION_TYPE_STACK",
        queries = ["series_sum(\"result\", \"saga_messages_total\"{${local.m}})"] },
        { id = "saga-recovery", title = "Recovery resends and reconciliations", type = "VISUALIZATION_TYPE_COLUMN",
          queries = [
            "series_sum(\"recovery_resent_total\"{${local.m}})",
            "series_sum(\"reconciled_total\"{${local.m}})",
        ] },
      ]
    },
    {
      title = "Outbox"
      panels = [
        { id = "outbox-lag", title = "Oldest pending outbox row (s)", type = "VISUALIZATION_TYPE_LINE",
        queries = ["series_max(\"outbox_lag_seconds\"{${local.m}})"] },
        { id = "outbox-pending", title = "Pending outbox rows", type = "VISUALIZATION_TYPE_LINE",
        queries = ["series_max(\"outbox_pending\"{${local.m}})"] },
        { id = "outbox-publish", title = "Published and failed publishes by destination", type = "VISUALIZATION_TYPE_LINE",
          queries = [
            "series_sum(\"destination\", \"outbox_published_total\"{${local.m}})",
            "series_sum(\"destination\", \"outbox_failed_total\"{${local.m}})",
        ] },
      ]
    },
    {
      title = "Dead letters"
      panels = [
        { id = "dlq-size", title = "Dead letters by queue", type = "VISUALIZATION_TYPE_LINE",
        queries = ["series_max(\"queue\", \"dlq_size\"{${local.m}})"] },
        { id = "dlq-additions", title = "New dead letters by error type", type = "VISUALIZATION_TYPE_STACK",
        queries = ["series_sum(\"error_type\", \"dlq_additions_total\"{${local.m}})"] },
        { id = "dlq-redrive", title = "Redrive actions by outcome", type = "VISUALIZATION_TYPE_COLUMN",
        queries = ["series_sum(\"outcome\", \"redrive_actions_total\"{${local.m}})"] },
      ]
    },
    {
      title = "Payment breaker and bulkhead"
      panels = [
        { id = "breaker-state", title = "Breaker state (0 closed, 1 half-open, 2 open)", type = "VISUALIZATION_TYPE_LINE",
        queries = ["series_max(\"dependency\", \"breaker_state\"{${local.m}})"] },
        { id = "breaker-transitions", title = "Breaker transitions by new state", type = "VISUALIZATION_TYPE_COLUMN",
        queries = ["series_sum(\"to\", \"breaker_transitions_total\"{${local.m}})"] },
        { id = "bulkhead-rejections", title = "Calls refused by a full bulkhead", type = "VISUALIZATION_TYPE_COLUMN",
        queries = ["series_sum(\"dependency\", \"bulkhead_rejections_total\"{${local.m}})"] },
      ]
    },
    {
      title = "HTTP API"
      panels = [
        { id = "http-requests", title = "Requests by status", type = "VISUALIZATION_TYPE_STACK",
        queries = ["series_sum(\"status\", \"http_requests_total\"{${local.m}})"] },
        { id = "http-5xx", title = "5xx responses by route", type = "VISUALIZATION_TYPE_COLUMN",
        queries = ["series_sum(\"route\", \"http_requests_total\"{${local.m}, status=\"5*\"})"] },
        { id = "http-latency", title = "Slowest request (s) by route", type = "VISUALIZATION_TYPE_LINE",
        queries = ["series_max(\"route\", \"http_request_duration_seconds_max\"{${local.m}})"] },
        { id = "http-idempotency", title = "Idempotent requests by outcome", type = "VISUALIZATION_TYPE_STACK",
        queries = ["series_sum(\"outcome\", \"idempotency_requests_total\"{${local.m}})"] },
        { id = "metrics-dropped", title = "Metric points dropped by reason", type = "VISUALIZATION_TYPE_COLUMN",
        queries = ["series_sum(\"reason\", \"ordersaga_metrics_dropped_total\"{${local.m}})"] },
      ]
    },
  ]

  # Layout: each section is a title row (height 2) and rows of three charts
  # (12 wide, 8 high) on the 36-column grid.
  dashboard_rows = [for s in local.dashboard_sections : 2 + 8 * ceil(length(s.panels) / 3)]
  dashboard_widgets = flatten([
    for si, s in local.dashboard_sections : concat(
      [{ kind = "title", text = s.title, x = 0, y = sum(concat([0], slice(local.dashboard_rows, 0, si))), w = 36, h = 2, panel = null }],
      [for pi, p in s.panels : {
        kind = "chart", text = "", panel = p,
        x    = 12 * (pi % 3), y = sum(concat([0], slice(local.dashboard_rows, 0, si))) + 2 + 8 * floor(pi / 3), w = 12, h = 8
      }],
    )
  ])
}

resource "yandex_monitoring_dashboard" "main" {
  name        = "${var.name_prefix}-operations"
  folder_id   = var.folder_id
  title       = "ordersaga ${var.name_prefix}: operations"
  description = "Saga, outbox, dead letters, breaker and HTTP of ${var.name_prefix}. Runbook: docs/deploy.md."

  dynamic "widgets" {
    for_each = local.dashboard_widgets
    content {
      position {
        x = widgets.value.x
        y = widgets.value.y
        w = widgets.value.w
        h = widgets.value.h
      }

      dynamic "title" {
        for_each = widgets.value.kind == "title" ? [widgets.value.text] : []
        content {
          text = title.value
          size = "TITLE_SIZE_M"
        }
      }

      dynamic "chart" {
        for_each = widgets.value.kind == "chart" ? [widgets.value.panel] : []
        content {
          chart_id       = chart.value.id
          title          = chart.value.title
          display_legend = true

          queries {
            dynamic "target" {
              for_each = chart.value.queries
              content {
                query     = target.value
                text_mode = true
              }
            }
            downsampling {
              grid_aggregation = "GRID_AGGREGATION_SUM"
              gap_filling      = "GAP_FILLING_NULL"
              max_points       = 300
            }
          }

          visualization_settings {
            type        = chart.value.type
            aggregation = "SERIES_AGGREGATION_LAST"
          }
        }
      }
    }
  }
}
