package adminapi_test

import (
	"context"
	"io"
	"log/slog"
	"maps"
	"path/filepath"
	"testing"
	"time"

	"ordersaga/shared/adapters/sqlitequeue"
	"ordersaga/shared/adapters/sqlitestore"
	"ordersaga/shared/adapters/sqlitestore/sqlitetest"
	"ordersaga/shared/app/redrive"
	"ordersaga/shared/app/stock"
	"ordersaga/shared/transport/adminapi"
	"ordersaga/shared/transport/httpapi"
	"ordersaga/shared/transport/identity"
)

// newStockEnv is newEnv with the stock routes mounted; it returns the
// database path for row counts.
func newStockEnv(t *testing.T) (*env, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "admin.db")
	now := func() time.Time { return t0 }
	s, err := sqlitestore.Open(context.Background(), path, sqlitestore.Config{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	q, err := sqlitequeue.Open(path, sqlitequeue.Config{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = q.Close(); _ = s.Close() })
	e := &env{store: s}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	svc, err := redrive.New(redrive.Config{Store: s, Queue: q, Now: now, NewID: e.newID, Log: log,
		Sleep: func(context.Context, time.Duration) error { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	tokens := identity.Tokens{"adm": {Subject: "alice", Role: identity.RoleAdmin}}
	st, err := stock.New(stock.Config{Store: s, Now: now, NewID: e.newID})
	if err != nil {
		t.Fatal(err)
	}
	e.srv = mustServe(t, httpapi.Config{Auth: tokens, Log: log}, adminapi.Config{Redrive: svc, Auth: tokens, Stock: st})
	return e, path
}

func countRows(t *testing.T, path string) map[string]int {
	t.Helper()
	return sqlitetest.RowCounts(t, path)
}

// TestAdminInputsFollowTheTextRule: admin inputs holding characters the
// queue refuses, or bytes that are not UTF-8, are a 400 naming the field,
// and nothing is written (not even an audit record).
func TestAdminInputsFollowTheTextRule(t *testing.T) {
	e, path := newStockEnv(t)
	id := e.addDeadOutbox(t, "ev-1")
	for _, tc := range []struct{ method, path, body, ptr string }{
		{"PUT", "/admin/stock/sku-%EF%BF%BF", `{"available":5}`, "/sku"},
		{"PUT", "/admin/stock/sku-%EF%BF%BE", `{"available":5}`, "/sku"},
		{"PUT", "/admin/stock/sku-%FF", `{"available":5}`, "/sku"},
		{"POST", "/admin/dlq/" + id + "/discard", `{"reason":"bad \uffff"}`, "/reason"},
		{"POST", "/admin/dlq/" + id + "/discard", "{\"reason\":\"bad \xff\"}", ""},
		{"POST", "/admin/dlq/bulk-retry", `{"ids":["` + id + `"],"reason":"r\ufffe"}`, "/reason"},
		{"POST", "/admin/dlq/bulk-retry", `{"filter":{"order_id":"o\uffff"}}`, "/filter/order_id"},
	} {
		before := countRows(t, path)
		r := e.do(t, tc.method, tc.path, "adm", tc.body)
		if r.status != 400 || !contains(pointers(r), tc.ptr) {
			t.Errorf("%s %s %q = %d %v, want 400 at %q", tc.method, tc.path, tc.body, r.status, r.body, tc.ptr)
		}
		if after := countRows(t, path); !maps.Equal(before, after) {
			t.Errorf("%s %s: rows changed %v → %v", tc.method, tc.path, before, after)
		}
	}
	// The same routes accept good input.
	if r := e.do(t, "PUT", "/admin/stock/sku-1", "adm", `{"available":5}`); r.status != 200 {
		t.Fatalf("good stock set = %d %v", r.status, r.body)
	}
	if r := e.do(t, "POST", "/admin/dlq/"+id+"/discard", "adm", `{"reason":"тест 😀"}`); r.status != 200 {
		t.Fatalf("good discard = %d %v", r.status, r.body)
	}
}

// TestAdminRefusesDuplicateMembers: at every depth, on every body route.
func TestAdminRefusesDuplicateMembers(t *testing.T) {
	e, path := newStockEnv(t)
	id := e.addDeadOutbox(t, "ev-1")
	for _, tc := range []struct{ method, path, body, ptr string }{
		{"PUT", "/admin/stock/sku-1", `{"available":1,"available":2}`, "/available"},
		{"POST", "/admin/dlq/" + id + "/discard", `{"reason":"a","reason":"b"}`, "/reason"},
		{"POST", "/admin/dlq/" + id + "/retry", `{"dry_run":true,"dry_run":false}`, "/dry_run"},
		{"POST", "/admin/dlq/bulk-retry", `{"filter":{"order_id":"o-1","order_id":"o-2"}}`, "/filter/order_id"},
	} {
		before := countRows(t, path)
		r := e.do(t, tc.method, tc.path, "adm", tc.body)
		if r.status != 400 || !contains(pointers(r), tc.ptr) {
			t.Errorf("%s %s %s = %d %v, want 400 at %q", tc.method, tc.path, tc.body, r.status, r.body, tc.ptr)
		}
		if after := countRows(t, path); !maps.Equal(before, after) {
			t.Errorf("%s %s: rows changed %v → %v", tc.method, tc.path, before, after)
		}
	}
}
