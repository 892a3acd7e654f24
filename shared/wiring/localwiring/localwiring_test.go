package localwiring

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/uuid"

	"ordersaga/shared/domain/queue"
	"ordersaga/shared/kit/config"
	"ordersaga/shared/wiring/app"
)

func TestOpensTheLocalAdaptersOnOneFile(t *testing.T) {
	cfg := config.Default()
	cfg.SQLitePath = filepath.Join(t.TempDir(), "w.db")
	cfg.QueueSQLite, cfg.Metrics = cfg.SQLitePath, "prometheus"
	p, err := Open(context.Background(), cfg, app.Env{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Store == nil || p.Queue == nil || p.Metrics == nil || p.MetricsHandler == nil || p.Close == nil {
		t.Fatalf("ports %+v", p)
	}
	if _, err := p.Queue.Ensure(context.Background(), queue.QueueSpec{Name: "q"}); err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestRefusesCloudAdaptersNamingTheSetting(t *testing.T) {
	ydb := config.Default()
	ydb.Store, ydb.YDB.ConnectionString = config.StoreYDB, "grpc://127.0.0.1:1/local"
	ymq := config.Default()
	ymq.SQLitePath = filepath.Join(t.TempDir(), "w.db")
	ymq.QueueSQLite, ymq.Queue = ymq.SQLitePath, config.QueueYMQ
	mon := config.Default()
	mon.Metrics = "monitoring"
	for want, cfg := range map[string]config.Config{
		"ORDERSAGA_STORE=ydb": ydb, "ORDERSAGA_QUEUE=ymq": ymq, "ORDERSAGA_METRICS=monitoring": mon,
	} {
		_, err := Open(context.Background(), cfg, app.Env{})
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "scripts/localcloud/cloudadapters") {
			t.Errorf("%s: err = %v, want it to name the setting and the cloud-adapter build", want, err)
		}
	}
}

// The local target's ids are time-ordered UUIDs: each sorts after the one
// before (SQLite appends their rows), and they are still distinct UUIDs.
func TestLocalIDsAreTimeOrderedUUIDs(t *testing.T) {
	prev := ""
	for i := 0; i < 1000; i++ {
		id := NewID()
		u, err := uuid.Parse(id)
		if err != nil || u.Version() != 7 {
			t.Fatalf("%q: version %d, err %v; want a version-7 UUID", id, u.Version(), err)
		}
		if id <= prev {
			t.Fatalf("id %d (%s) does not sort after the one before (%s)", i, id, prev)
		}
		prev = id
	}
}
