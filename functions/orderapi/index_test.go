package main

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"ordersaga/shared/transport/yc"
)

// Deployed without its cloud configuration, the function answers its
// documented cold-start failure (503 problem+json with Retry-After), never
// a panic or a bare 502.
func TestColdStartWithoutCloudConfigurationIs503(t *testing.T) {
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "ORDERSAGA_") || strings.HasPrefix(k, "YDB_") || strings.HasPrefix(k, "YMQ_") {
			t.Setenv(k, "")
		}
	}
	ev, _ := json.Marshal(map[string]any{"httpMethod": "GET", "path": "/orders/x", "headers": map[string]string{}})
	res, err := Handler(context.Background(), ev)
	if err != nil {
		t.Fatal(err)
	}
	resp, ok := res.(*yc.HTTPResponse)
	if !ok {
		t.Fatalf("result %T, want *yc.HTTPResponse", res)
	}
	if resp.StatusCode != 503 || resp.Headers["Content-Type"] != "application/problem+json" || resp.Headers["Retry-After"] == "" {
		t.Errorf("response %+v", resp)
	}
}

// The console's self-check event gets the self-check report, not an HTTP
// response; deployed without its cloud configuration, the report's config
// line fails with the cold start's error.
func TestSelfCheckEventAnswersAReport(t *testing.T) {
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "ORDERSAGA_") || strings.HasPrefix(k, "YDB_") || strings.HasPrefix(k, "YMQ_") {
			t.Setenv(k, "")
		}
	}
	t.Setenv("ORDERSAGA_STORE", "ydb")
	t.Setenv("ORDERSAGA_QUEUE", "ymq")
	res, err := Handler(context.Background(), []byte(`{"action":"selfcheck"}`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(res)
	for _, want := range []string{`"action":"selfcheck"`, `"function":"orderapi"`, `"verdict":"FAIL"`, "YDB_CONNECTION_STRING"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("report lacks %s: %s", want, b)
		}
	}
}
