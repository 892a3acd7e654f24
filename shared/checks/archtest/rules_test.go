package archtest

import "testing"

// TestRules holds each rule to one allowed and one refused import, so a
// rule that stops refusing anything fails here, not silently.
func TestRules(t *testing.T) {
	tests := []struct {
		name, from, to string
		internal       bool
		ok             bool
	}{
		{"domain to domain", "domain/order", "domain/apperr", true, true},
		{"domain to kit", "domain/order", "kit/jsonstrict", true, true},
		{"domain to use case", "domain/order", "app/orders", true, false},
		{"domain to adapter", "domain/store", "adapters/sqlitestore", true, false},
		{"domain to net/http", "domain/order", "net/http", false, false},
		{"domain to os", "domain/order", "os", false, false},
		{"domain to database/sql/driver", "domain/store", "database/sql/driver", false, false},
		{"domain to an SDK", "domain/store", "github.com/ydb-platform/ydb-go-sdk/v3/query", false, false},
		{"domain to uuid", "domain/store/storetest", "github.com/google/uuid", false, true},
		{"domain to encoding/json", "domain/saga", "encoding/json", false, true},
		{"kit to kit", "kit/jsonstrict", "kit/textrule", true, true},
		{"kit to apperr", "kit/resilience", "domain/apperr", true, true},
		{"kit to domain", "kit/config", "domain/order", true, false},
		{"kit to use case", "kit/config", "app/relay", true, false},
		{"use case to domain", "app/relay", "domain/outbox", true, true},
		{"use case to kit", "app/relay", "kit/resilience", true, true},
		{"use case to another", "app/orchestrator", "app/orders", true, false},
		{"use case to adapter", "app/relay", "adapters/ymq", true, false},
		{"job to use case", "app/jobs/sagabatch", "app/orchestrator", true, true},
		{"job to domain", "app/jobs/maintenance", "domain/store", true, true},
		{"job to another job", "app/jobs/sagabatch", "app/jobs/maintenance", true, false},
		{"use case to job", "app/redrive", "app/jobs/dlqoperator", true, false},
		{"job to adapter", "app/jobs/sagabatch", "adapters/sqlitestore", true, false},
		{"job to wiring", "app/jobs/maintenance", "wiring/app", true, false},
		{"use case to transport", "app/orders", "transport/httpapi", true, false},
		{"use case to wiring", "app/relay", "wiring/app", true, false},
		{"use case may do I/O", "app/payments", "net/http", false, true},
		{"adapter to domain", "adapters/ydbstore", "domain/store", true, true},
		{"adapter to its own sub-package", "adapters/sqlitestore", "adapters/sqlitestore/sqlitetest", true, true},
		{"adapter to another adapter", "adapters/sqlitequeue", "adapters/sqlitestore", true, false},
		{"adapter to use case", "adapters/paymentsim", "app/relay", true, false},
		{"transport to use case", "transport/httpapi", "app/orders", true, true},
		{"transport to transport", "transport/adminapi", "transport/httpapi", true, true},
		{"transport to adapter", "transport/httpapi", "adapters/sqlitestore", true, false},
		{"transport to wiring", "transport/yc", "wiring/app", true, false},
		{"wiring to adapter", "wiring/localwiring", "adapters/sqlitestore", true, true},
		{"wiring to checks", "wiring/app", "checks/chaos", true, false},
		{"checks to anything", "checks/chaos", "adapters/sqlitequeue", true, true},
		{"outside the layer folders", "wiring/app", "orders", true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			why := rule(tt.from, tt.to, tt.internal)
			if got := why == ""; got != tt.ok {
				t.Errorf("rule(%q, %q) = %q, want allowed=%v", tt.from, tt.to, why, tt.ok)
			}
		})
	}
}
