package runner

import (
	"context"
	"maps"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"ordersaga/shared/kit/config"
	"ordersaga/shared/wiring/app"
	"ordersaga/shared/wiring/handlers"
	"ordersaga/shared/wiring/localwiring"
	"ordersaga/shared/wiring/triggers"
)

// newFaultApp builds an App on a fresh SQLite file with the faults' port
// decoration, as the runner does, and attaches the faults to a copy of the
// function registry.
func newFaultApp(t *testing.T, f *faults) (*app.App, map[string]handlers.Func) {
	t.Helper()
	db := filepath.Join(t.TempDir(), "o.db")
	cfg, err := config.Load(func(k string) string {
		if k == "ORDERSAGA_SQLITE_PATH" {
			return db
		}
		return ""
	})
	if err != nil {
		t.Fatal(err)
	}
	open := func(ctx context.Context, cfg config.Config, env app.Env) (app.Ports, error) {
		p, err := localwiring.Open(ctx, cfg, env)
		if err != nil {
			return p, err
		}
		return f.decorate(p), nil
	}
	a, err := app.New(context.Background(), cfg, open, app.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close() })
	fns := maps.Clone(handlers.Registry)
	f.attach(a, fns)
	return a, fns
}

func TestInstallFaultsRejectsBadSettings(t *testing.T) {
	env := map[string]string{envFaultPublishSKU: "no spaces", envVisibility: "500ms"}
	tf := triggers.File{QueueTriggers: []triggers.QueueTrigger{{Name: "t", VisibilityTimeoutSeconds: 120}}}
	_, err := newFaults(config.Default(), &tf, func(k string) string { return env[k] })
	if err == nil || !strings.Contains(err.Error(), envFaultPublishSKU) || !strings.Contains(err.Error(), envVisibility) {
		t.Fatalf("newFaults(bad settings) = %v, want an error naming both variables", err)
	}
	if tf.QueueTriggers[0].VisibilityTimeoutSeconds != 120 {
		t.Fatalf("a refused setting changed the trigger: %+v", tf.QueueTriggers[0])
	}

	env = map[string]string{envVisibility: "2s", envFaultAdvancerSKU: "sku-5"}
	f, err := newFaults(config.Default(), &tf, func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if _, fns := newFaultApp(t, f); fns["sagaadvancer"] == nil {
		t.Fatal("attach dropped the sagaadvancer function")
	}
	if tf.QueueTriggers[0].VisibilityTimeoutSeconds != 2 {
		t.Fatalf("LOCAL_VISIBILITY_TIMEOUT=2s: trigger visibility = %d s, want 2", tf.QueueTriggers[0].VisibilityTimeoutSeconds)
	}
	if _, adv := f.skus(); adv != "sku-5" {
		t.Fatalf("advancer SKU = %q, want sku-5", adv)
	}
}

func TestFaultsPatchChangesOnlyWhatItNames(t *testing.T) {
	env := map[string]string{envFaultPublishSKU: "sku-4"}
	f, err := newFaults(config.Default(), &triggers.File{}, func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	a, _ := newFaultApp(t, f)
	h := f.wrap(http.NotFoundHandler())
	do := func(method, ct, body string) int {
		req := httptest.NewRequest(method, faultsPath, strings.NewReader(body))
		if ct != "" {
			req.Header.Set("Content-Type", ct)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec.Code
	}
	for _, bad := range []struct{ ct, body string }{
		{"", `{"payment_failure_rate":1}`},
		{"application/json", `{"payment_failure_rate":1.5}`},
		{"application/json", `{"publish_sku":"bad sku","payment_failure_rate":1}`},
		{"application/json", `{"unknown":true}`},
	} {
		if code := do(http.MethodPatch, bad.ct, bad.body); code != http.StatusBadRequest {
			t.Errorf("PATCH %q (Content-Type %q) = %d, want 400", bad.body, bad.ct, code)
		}
	}
	if pub, _ := f.skus(); pub != "sku-4" || a.PaymentSimulator().FailureRate() != 0 {
		t.Fatalf("refused PATCHes changed the faults: publish %q, payment rate %v", pub, a.PaymentSimulator().FailureRate())
	}
	if code := do(http.MethodPatch, "application/json", `{"payment_failure_rate":1}`); code != http.StatusOK {
		t.Fatalf("PATCH payment_failure_rate = %d, want 200", code)
	}
	if pub, _ := f.skus(); pub != "sku-4" || a.PaymentSimulator().FailureRate() != 1 {
		t.Fatalf("after PATCH: publish %q (want kept sku-4), payment rate %v (want 1)", pub, a.PaymentSimulator().FailureRate())
	}
	if code := do(http.MethodDelete, "", ""); code != http.StatusMethodNotAllowed {
		t.Fatalf("DELETE /_faults = %d, want 405", code)
	}
	req := httptest.NewRequest(http.MethodGet, "/orders", nil)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusNotFound {
		t.Fatalf("GET /orders through wrap = %d, want the wrapped handler's 404", rec.Code)
	}
}
