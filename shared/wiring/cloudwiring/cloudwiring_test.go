package cloudwiring

import (
	"context"
	"strings"
	"testing"

	"ordersaga/shared/adapters/ydbstore"
	"ordersaga/shared/kit/config"
	"ordersaga/shared/wiring/app"
)

// A function started without its cloud configuration (the local defaults)
// fails its cold start naming every setting it cannot serve, and dials
// nothing.
func TestRefusesLocalAdaptersNamingTheSettings(t *testing.T) {
	_, err := Open(context.Background(), config.Default(), app.Env{})
	if err == nil {
		t.Fatal("the cloud build opened the local defaults")
	}
	for _, want := range []string{"ORDERSAGA_STORE=sqlite", "ORDERSAGA_QUEUE=sqlite", "docs/wiring.md"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %s", err, want)
		}
	}
}

func TestRefusesPrometheusBeforeDialling(t *testing.T) {
	cfg := config.Default()
	cfg.Store, cfg.YDB.ConnectionString, cfg.YDB.Auth = config.StoreYDB, "grpc://127.0.0.1:1/local", "anonymous"
	cfg.Queue = config.QueueYMQ
	cfg.Metrics = "prometheus"
	_, err := Open(context.Background(), cfg, app.Env{})
	if err == nil || !strings.Contains(err.Error(), "ORDERSAGA_METRICS=prometheus") {
		t.Errorf("err = %v, want it to name ORDERSAGA_METRICS=prometheus", err)
	}
}

// The schema probe counts what a dry run did not list as applied, and
// names what it did list as pending.
func TestSchemaState(t *testing.T) {
	ms := []ydbstore.Migration{{Version: 1, Name: "0001_a.sql"}, {Version: 2, Name: "0002_b.sql"}, {Version: 3, Name: "0003_c.sql"}}
	got := schemaState(ms, ms[2:])
	if got.Applied != 2 || got.Latest != 2 || len(got.Pending) != 1 || got.Pending[0] != "0003_c.sql" {
		t.Errorf("schemaState = %+v", got)
	}
	if got := schemaState(ms, nil); got.Applied != 3 || got.Latest != 3 || got.Pending != nil {
		t.Errorf("all applied: %+v", got)
	}
}
