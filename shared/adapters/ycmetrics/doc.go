// Package ycmetrics is the metrics.Recorder adapter for Yandex Cloud
// Functions: it accumulates metrics in memory during an invocation, and
// Flush pushes them to Yandex Monitoring's custom-metrics write API in one
// request:
//
//	POST https://monitoring.api.cloud.yandex.net/monitoring/v2/data/write?folderId=<folder>&service=custom
//	Authorization: Bearer <IAM token of the function's service account>
//	Content-Type: application/json
//
//	{"ts":"2025-01-02T03:04:05.123Z","labels":{"function":"saga-advancer"},
//	 "metrics":[{"name":"saga_steps_total","labels":{"step":"reserve_stock","direction":"forward","status":"succeeded"},
//	             "type":"DGAUGE","ts":"2025-01-02T03:04:05.123Z","value":1}, ...]}
//
// Field names are those of the MetricsData.write reference (yandex-cloud/docs
// en/monitoring/api-ref/MetricsData/write.md): top-level ts (RFC 3339) and
// labels common to all metrics; per metric name, labels, type (DGAUGE,
// GAUGE/IGAUGE, COUNTER, RATE; default DGAUGE), ts and value. The service
// account needs the monitoring.editor role on the folder (the docs'
// "Writing custom metrics via the API" page).
//
// # Counters are pushed as per-invocation deltas (DGAUGE)
//
// Monitoring's COUNTER and RATE types expect one writer to send a growing
// cumulative value per time series and derive rates from consecutive points.
// Function instances come and go and several run at once: their cumulative
// values would interleave in one series (garbage derivatives) unless every
// instance had its own label value, which makes the number of series grow
// without bound. So a counter is pushed as a DGAUGE whose value is the
// increment recorded since the previous Flush of this Recorder (normally:
// during this invocation), and only when non-zero. Totals over a window are
// the sum of the points (alert aggregation "Sum", or moving_sum in a query).
// Residual risk: two instances flushing the same series at the same
// millisecond share a timestamp, and Monitoring may keep only one of the two
// points; timestamps carry milliseconds to make this rare.
//
// # Gauges
//
// A gauge is pushed as a DGAUGE with the last value Set during the
// invocation (Add adjusts that value, starting from 0). Gauges not touched
// during an invocation are not pushed.
//
// # Histograms
//
// A histogram metric H is pushed as these DGAUGE series, each holding the
// per-invocation value: H_count (observations), H_sum (their sum), H_max
// (the largest) and, for every non-empty bucket, H_bucket with label
// bin=<upper bound> ("inf" for the overflow bucket) holding the number of
// observations in that bucket alone (not cumulative). Monitoring's
// histogram_percentile(level, "bin", ...) works on such per-bucket series;
// H_max makes "longest saga in the window" a plain Max aggregation.
//
// # Labels
//
// Every point carries the common label function=<Config.Function> plus
// Config.Labels; empty label values are omitted. Monitoring allows 16 labels
// per metric including cloudId, folderId and service; New checks the budget.
//
// # Failures
//
// Flush never panics and never blocks longer than Config.Timeout (token
// fetch plus POST). On failure it logs one slog warning, counts the lost
// points in ordersaga_metrics_dropped_total{reason="flush_failed"} (pushed
// with the next successful Flush) and returns an apperr error the caller
// may ignore. Recording beyond Config.MaxPoints buffered points is dropped
// and counted with reason "overflow".
//
// # Alerts in Yandex Monitoring
//
// The Terraform provider yandex-cloud/yandex has no alert resource (only
// yandex_monitoring_dashboard; provider issues #166 and #427), so the alerts
// of ops/prometheus/alerts.yml are created in the console. Suggested
// definitions (selectors also need folderId="<folder>", service="custom";
// check each query in Metric Explorer first):
//
//   - Saga duration: query "saga_duration_seconds_max"{...}; aggregation Max;
//     window 15m; Alarm > 300.
//   - Dead-letter growth: query series_sum("queue", "dlq_additions_total"{...});
//     aggregation Sum; window 1h; Alarm > 100. For YMQ dead-letter queues
//     (messages moved by the redrive policy, which ordersaga does not see):
//     query diff("dlq_size"{...}); aggregation Sum (= growth); window 1h; Alarm > 100.
//   - Compensation failure rate: A = moving_sum(series_sum("compensations_total"{status="failed|gave_up", ...}), 30m),
//     B = moving_sum(series_sum("compensations_total"{...}), 30m), test query
//     C = A / B; aggregation Max; window 5m; Alarm > 0.01.
//   - Outbox backlog: query "outbox_lag_seconds"{...}; aggregation "at all
//     times"; window 5m; Alarm > 300 (the relay sets it on every run).
//   - Breaker open: query "breaker_state"{...}; aggregation Max; window 2m;
//     Alarm >= 2.
package ycmetrics
