package config

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

func env(m map[string]string) Getenv { return func(k string) string { return m[k] } }

func TestDefaultsAreValid(t *testing.T) {
	c, err := Load(env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if c.Store != StoreSQLite || c.Queue != QueueSQLite || c.QueueSQLite != c.SQLitePath || c.Auth != AuthTokens {
		t.Errorf("defaults %+v", c)
	}
}

func TestCloudConfiguration(t *testing.T) {
	c, err := Load(env(map[string]string{
		"ORDERSAGA_STORE": "ydb", "YDB_CONNECTION_STRING": "grpcs://ydb.serverless.yandexcloud.net:2135/ru-central1/b1/etn",
		"ORDERSAGA_QUEUE": "ymq", "YMQ_ACCESS_KEY_ID": "id", "YMQ_SECRET_ACCESS_KEY": "secret",
		"SAGA_COMMANDS_QUEUE_URL": "https://q/1/saga-commands", "ORDER_EVENTS_QUEUE_URL": "https://q/1/order-events",
		"ORDERSAGA_AUTH": "gateway", "ORDERSAGA_METRICS": "monitoring", "MONITORING_FOLDER_ID": "b1g",
		"RELAY_BATCH_SIZE": "250", "SAGA_LEASE": "45s", "PAYMENT_FAILURE_RATE": "0.25", "ORDERSAGA_FUNCTION": "orderapi",
	}))
	if err != nil {
		t.Fatal(err)
	}
	if c.Relay.BatchSize != 250 || c.Saga.Lease != 45*time.Second || c.Payment.FailureRate != 0.25 || c.Function != "orderapi" {
		t.Errorf("overrides not applied: %+v", c)
	}
}

func TestInvalidConfigurationNamesTheVariable(t *testing.T) {
	cases := map[string]map[string]string{
		"ORDERSAGA_STORE":          {"ORDERSAGA_STORE": "postgres"},
		"YDB_CONNECTION_STRING":    {"ORDERSAGA_STORE": "ydb", "ORDERSAGA_QUEUE": "ymq", "YMQ_ACCESS_KEY_ID": "a", "YMQ_SECRET_ACCESS_KEY": "b"},
		"YDB_TOKEN":                {"ORDERSAGA_STORE": "ydb", "YDB_CONNECTION_STRING": "grpc://x:1/db", "YDB_AUTH": "token", "ORDERSAGA_QUEUE": "ymq", "YMQ_ACCESS_KEY_ID": "a", "YMQ_SECRET_ACCESS_KEY": "b"},
		"ORDERSAGA_QUEUE=sqlite":   {"ORDERSAGA_STORE": "ydb", "YDB_CONNECTION_STRING": "grpc://x:1/db"},
		"YMQ_SECRET_ACCESS_KEY":    {"ORDERSAGA_QUEUE": "ymq", "YMQ_ACCESS_KEY_ID": "a"},
		"RELAY_BATCH_SIZE":         {"RELAY_BATCH_SIZE": "lots"},
		"RELAY_BATCH_SIZE must be": {"RELAY_BATCH_SIZE": "0"},
		"SAGA_LEASE":               {"SAGA_LEASE": "forever"},
		"RECOVERY_MAX_RESENDS":     {"RECOVERY_MAX_RESENDS": "0"},
		"RECOVERY_MAX_WAIT":        {"RECOVERY_MAX_WAIT": "0s"},
		"RECOVERY_MAX_WAIT form":   {"RECOVERY_MAX_WAIT": "4 days"},
		"PAYMENT_FAILURE_RATE":     {"PAYMENT_FAILURE_RATE": "2"},
		"PAYMENT_DECLINE_ABOVE_MINOR must not be negative": {"PAYMENT_DECLINE_ABOVE_MINOR": "-1"},
		"PAYMENT_LATENCY must not be negative":             {"PAYMENT_LATENCY": "-1s"},
		"ORDERSAGA_AUTH":                                   {"ORDERSAGA_AUTH": "none"},
		"MONITORING_FOLDER_ID":                             {"ORDERSAGA_METRICS": "monitoring"},
		"ORDERSAGA_LOG_LEVEL":                              {"ORDERSAGA_LOG_LEVEL": "loud"},
		"RELAY_BACKOFF_CAP":                                {"RELAY_BACKOFF_BASE": "10m", "RELAY_BACKOFF_CAP": "1m"},
	}
	for want, vars := range cases {
		_, err := Load(env(vars))
		if err == nil || !strings.Contains(err.Error(), strings.SplitN(want, " ", 2)[0]) {
			t.Errorf("%v: err = %v, want it to name %s", vars, err, want)
		}
	}
}

func TestAllProblemsAreReportedAtOnce(t *testing.T) {
	_, err := Load(env(map[string]string{"RELAY_BATCH_SIZE": "x", "ORDERSAGA_AUTH": "none", "ORDERSAGA_LOG_LEVEL": "loud"}))
	for _, name := range []string{"RELAY_BATCH_SIZE", "ORDERSAGA_AUTH", "ORDERSAGA_LOG_LEVEL"} {
		if err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("error %v does not name %s", err, name)
		}
	}
}

func TestRelaySendConcurrency(t *testing.T) {
	if c := Default(); c.Relay.SendConcurrency != DefaultRelaySendConcurrency {
		t.Errorf("default RELAY_SEND_CONCURRENCY %d, want %d", c.Relay.SendConcurrency, DefaultRelaySendConcurrency)
	}
	for v, want := range map[string]string{
		"many": "RELAY_SEND_CONCURRENCY",
		"0":    "RELAY_SEND_CONCURRENCY must be positive (got 0)",
		"-3":   "RELAY_SEND_CONCURRENCY must be positive (got -3)",
		"101":  "RELAY_SEND_CONCURRENCY must be at most 100 (got 101)",
	} {
		if _, err := Load(env(map[string]string{"RELAY_SEND_CONCURRENCY": v})); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("RELAY_SEND_CONCURRENCY=%s: err = %v, want %q", v, err, want)
		}
	}
	for _, v := range []string{"1", "8", "100"} {
		c, err := Load(env(map[string]string{"RELAY_SEND_CONCURRENCY": v}))
		if err != nil || fmt.Sprint(c.Relay.SendConcurrency) != v {
			t.Errorf("RELAY_SEND_CONCURRENCY=%s: %d, %v", v, c.Relay.SendConcurrency, err)
		}
	}
}

func TestUTCClock(t *testing.T) {
	msk := time.FixedZone("MSK", 3*60*60)
	at := time.Date(2026, 12, 1, 15, 0, 0, 0, msk)
	if got := UTCClock(func() time.Time { return at })(); got.Location() != time.UTC || !got.Equal(at) {
		t.Errorf("UTCClock(fixed)() = %v, want %v in UTC", got, at)
	}
	if got := UTCClock(nil)(); got.Location() != time.UTC {
		t.Errorf("UTCClock(nil)() is in %v, want UTC", got.Location())
	}
}

func TestSagaBatchConcurrency(t *testing.T) {
	if c := Default(); c.Saga.BatchConcurrency != DefaultSagaBatchConcurrency {
		t.Errorf("default SAGA_BATCH_CONCURRENCY %d, want %d", c.Saga.BatchConcurrency, DefaultSagaBatchConcurrency)
	}
	for v, want := range map[string]string{
		"many": "SAGA_BATCH_CONCURRENCY",
		"0":    "SAGA_BATCH_CONCURRENCY must be positive (got 0)",
		"-1":   "SAGA_BATCH_CONCURRENCY must be positive (got -1)",
	} {
		if _, err := Load(env(map[string]string{"SAGA_BATCH_CONCURRENCY": v})); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("SAGA_BATCH_CONCURRENCY=%s: err = %v, want %q", v, err, want)
		}
	}
	if c, err := Load(env(map[string]string{"SAGA_BATCH_CONCURRENCY": "1"})); err != nil || c.Saga.BatchConcurrency != 1 {
		t.Errorf("SAGA_BATCH_CONCURRENCY=1: %d, %v", c.Saga.BatchConcurrency, err)
	}
}
