package app

import (
	"context"
	"fmt"
	"net/http"

	"ordersaga/shared/config"
	"ordersaga/shared/metrics"
	"ordersaga/shared/prommetrics"
	"ordersaga/shared/ycmetrics"
)

// openMetrics builds the configured metrics recorder. The Prometheus one
// also returns its /metrics handler.
func openMetrics(cfg config.Config, a *App) (metrics.Recorder, http.Handler, error) {
	switch cfg.Metrics {
	case "prometheus":
		r := prommetrics.New()
		return r, r.Handler(), nil
	case "monitoring":
		r, err := ycmetrics.New(ycmetrics.Config{
			FolderID: cfg.Monitoring.FolderID, Endpoint: cfg.Monitoring.Endpoint, Function: cfg.Function,
			Tokens: ycmetrics.InstanceServiceAccount(), Now: a.Now, Log: a.Log,
		})
		if err != nil {
			return nil, nil, fmt.Errorf("Yandex Monitoring metrics: %w", err)
		}
		return r, nil, nil
	default:
		return metrics.Nop{}, nil, nil
	}
}

// FlushMetrics pushes what this invocation recorded (Yandex Monitoring);
// a failure is logged by the recorder and never fails the invocation.
func (a *App) FlushMetrics(ctx context.Context) {
	_ = a.Metrics.Flush(ctx)
}
