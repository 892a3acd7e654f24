package main

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
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
	resp, err := Handler(context.Background(), ev)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 503 || resp.Headers["Content-Type"] != "application/problem+json" || resp.Headers["Retry-After"] == "" {
		t.Errorf("response %+v", resp)
	}
}
