package adminapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"ordersaga/shared/adapters/sqlitequeue"
	"ordersaga/shared/adapters/sqlitestore"
	"ordersaga/shared/app/redrive"
	"ordersaga/shared/domain/dlq"
	"ordersaga/shared/domain/outbox"
	"ordersaga/shared/domain/store"
	"ordersaga/shared/transport/adminapi"
	"ordersaga/shared/transport/httpapi"
	"ordersaga/shared/transport/identity"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

type env struct {
	store store.Store
	srv   http.Handler
	ids   atomic.Int64
}

func newEnv(t *testing.T) *env {
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
	tokens := identity.Tokens{"adm": {Subject: "alice", Role: identity.RoleAdmin}, "usr": {Subject: "bob", Role: identity.RoleUser}}
	// Mounted the way the lead wires it: through the order API's handler.
	e.srv = mustServe(t, httpapi.Config{Auth: tokens, Log: log}, adminapi.Config{Redrive: svc, Auth: tokens})
	return e
}

func (e *env) newID() string { return fmt.Sprintf("id-%04d", e.ids.Add(1)) }

// addDeadOutbox adds a dead outbox row and its open dead letter.
func (e *env) addDeadOutbox(t *testing.T, row string) string {
	t.Helper()
	id := e.newID()
	err := e.store.InTx(context.Background(), func(ctx context.Context, tx store.Tx) error {
		ev := outbox.Event{ID: row, AggregateType: "order", AggregateID: "o-" + row, EventType: outbox.TypeOrderCreated,
			Destination: outbox.DestOrderEvents, Payload: []byte(`{}`), Status: outbox.StatusDead, Attempts: 10,
			CreatedAt: t0, Version: 2}
		if err := tx.InsertOutbox(ctx, ev); err != nil {
			return err
		}
		return tx.InsertDeadLetter(ctx, dlq.DeadLetter{ID: id, Source: dlq.SourceOutbox, SourceRef: row,
			Queue: outbox.DestOrderEvents, Payload: []byte(`{}`), ErrorType: "transient", Error: "down",
			FirstFailedAt: t0, LastFailedAt: t0, Status: dlq.StatusOpen, OrderID: "o-" + row, CreatedAt: t0,
			UpdatedAt: t0, Version: 1})
	})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func (e *env) entry(t *testing.T, id string) dlq.DeadLetter {
	t.Helper()
	var d dlq.DeadLetter
	err := e.store.View(context.Background(), func(ctx context.Context, tx store.Tx) error {
		var err error
		d, err = tx.GetDeadLetter(ctx, id)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

type response struct {
	status int
	header http.Header
	body   map[string]any
}

func (e *env) do(t *testing.T, method, path, token, body string, header ...string) response {
	t.Helper()
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	e.srv.ServeHTTP(rec, req)
	out := response{status: rec.Code, header: rec.Header()}
	if err := json.Unmarshal(rec.Body.Bytes(), &out.body); err != nil {
		t.Fatalf("%s %s: body %q is not a JSON object: %v", method, path, rec.Body.String(), err)
	}
	if rec.Code >= 400 {
		if ct := rec.Header().Get("Content-Type"); ct != "application/problem+json" {
			t.Errorf("%s %s: error content type %q", method, path, ct)
		}
		if out.body["status"] != float64(rec.Code) || out.body["detail"] == "" {
			t.Errorf("%s %s: problem %v", method, path, out.body)
		}
	}
	return out
}

func pointers(r response) []string {
	var out []string
	errs, _ := r.body["errors"].([]any)
	for _, e := range errs {
		out = append(out, e.(map[string]any)["pointer"].(string))
	}
	return out
}

func TestEveryRouteNeedsAnAdmin(t *testing.T) {
	e := newEnv(t)
	id := e.addDeadOutbox(t, "ev-1")
	routes := [][2]string{
		{"GET", "/admin/dlq"}, {"GET", "/admin/dlq/" + id}, {"POST", "/admin/dlq/" + id + "/retry"},
		{"POST", "/admin/dlq/" + id + "/discard"}, {"POST", "/admin/dlq/bulk-retry"}, {"DELETE", "/admin/dlq/" + id},
		{"GET", "/admin/audit"}, {"GET", "/admin/nothing-here"},
	}
	for _, rt := range routes {
		if r := e.do(t, rt[0], rt[1], "", `{"reason":"x","all":true}`); r.status != 401 || r.header.Get("WWW-Authenticate") == "" {
			t.Errorf("%s %s without identity: %d", rt[0], rt[1], r.status)
		}
		if r := e.do(t, rt[0], rt[1], "wrong", `{}`); r.status != 401 {
			t.Errorf("%s %s with an unknown token: %d", rt[0], rt[1], r.status)
		}
		if r := e.do(t, rt[0], rt[1], "usr", `{"reason":"x","all":true}`); r.status != 403 {
			t.Errorf("%s %s as a user: %d", rt[0], rt[1], r.status)
		}
	}
	if d := e.entry(t, id); d.Status != dlq.StatusOpen || d.Version != 1 {
		t.Fatalf("a refused call changed the entry: %+v", d)
	}
}

func TestListAndShow(t *testing.T) {
	e := newEnv(t)
	id := e.addDeadOutbox(t, "ev-1")
	e.addDeadOutbox(t, "ev-2")
	r := e.do(t, "GET", "/admin/dlq?source=outbox&status=open&limit=1", "adm", "")
	if r.status != 200 || len(r.body["entries"].([]any)) != 1 || r.body["next_cursor"] == nil {
		t.Fatalf("list = %d %v", r.status, r.body)
	}
	next := r.body["next_cursor"].(string)
	if r := e.do(t, "GET", "/admin/dlq?limit=1&cursor="+next, "adm", ""); r.status != 200 || len(r.body["entries"].([]any)) != 1 {
		t.Fatalf("page 2 = %d %v", r.status, r.body)
	}
	tests := []struct {
		query string
		ptr   string
	}{
		{"status=zombie", "/status"},
		{"bogus=1", "/bogus"},
		{"limit=0", "/limit"},
		{"limit=abc", "/limit"},
		{"flagged=maybe", "/flagged"},
		{"from=yesterday", "/from"},
		{"source=kafka", "/source"},
		{"status=open&status=discarded", "/status"},
	}
	for _, tc := range tests {
		r := e.do(t, "GET", "/admin/dlq?"+tc.query, "adm", "")
		if r.status != 400 || !contains(pointers(r), tc.ptr) {
			t.Errorf("?%s = %d %v, want 400 at %s", tc.query, r.status, pointers(r), tc.ptr)
		}
	}
	if r := e.do(t, "GET", "/admin/dlq?cursor=bm9wZQ", "adm", ""); r.status != 400 {
		t.Errorf("bad cursor = %d", r.status)
	}

	r = e.do(t, "GET", "/admin/dlq/"+id, "adm", "")
	if r.status != 200 || r.body["id"] != id || r.body["outbox"] == nil || r.body["history"] == nil {
		t.Fatalf("show = %d %v", r.status, r.body)
	}
	for _, bad := range []string{"/admin/dlq/missing", "/admin/dlq/%2E%2E"} {
		if r := e.do(t, "GET", bad, "adm", ""); r.status != 404 {
			t.Errorf("GET %s = %d", bad, r.status)
		}
	}
}

func TestRetry(t *testing.T) {
	e := newEnv(t)
	id := e.addDeadOutbox(t, "ev-1")
	path := "/admin/dlq/" + id + "/retry"
	for _, tc := range []struct {
		body, ptr string
	}{
		{`{"dry_run":"yes"}`, "/dry_run"},
		{`{"actor":"mallory"}`, "/actor"},
		{`{"ids":["other"]}`, "/ids"},
		{`{"force":true,"force":false}`, "/force"},
		{`[true]`, ""},
		{`{"dry_run":true} {}`, ""},
	} {
		if r := e.do(t, "POST", path, "adm", tc.body); r.status != 400 || !contains(pointers(r), tc.ptr) {
			t.Errorf("retry %s = %d %v, want 400 at %q", tc.body, r.status, pointers(r), tc.ptr)
		}
	}
	if r := e.do(t, "POST", path, "adm", `{}`, "Content-Type", "text/plain"); r.status != 415 {
		t.Errorf("text/plain body = %d", r.status)
	}
	if r := e.do(t, "POST", path, "adm", strings.Repeat(" ", redrive.MaxCommandBytes+1)); r.status != 413 {
		t.Errorf("oversize body = %d", r.status)
	}
	if r := e.do(t, "POST", "/admin/dlq/missing/retry", "adm", ""); r.status != 404 {
		t.Errorf("retry of a missing entry = %d", r.status)
	}

	r := e.do(t, "POST", path, "adm", `{"dry_run":true}`, "Content-Type", "application/json")
	if r.status != 200 || r.body["would_redrive"] != 1.0 || e.entry(t, id).Status != dlq.StatusOpen {
		t.Fatalf("dry-run retry = %d %v", r.status, r.body)
	}
	r = e.do(t, "POST", path, "adm", "")
	if r.status != 200 || r.body["redriven"] != 1.0 {
		t.Fatalf("retry = %d %v", r.status, r.body)
	}
	if d := e.entry(t, id); d.Status != dlq.StatusRedriven || d.ResolvedBy != "alice" {
		t.Fatalf("entry after retry = %+v", d)
	}
	if r := e.do(t, "POST", path, "adm", ""); r.status != 409 || !strings.Contains(r.body["detail"].(string), "status is redriven") {
		t.Fatalf("second retry = %d %v", r.status, r.body)
	}
}

func TestBulkRetryDiscardDeleteAndAudit(t *testing.T) {
	e := newEnv(t)
	a := e.addDeadOutbox(t, "ev-1")
	b := e.addDeadOutbox(t, "ev-2")
	c := e.addDeadOutbox(t, "ev-3")

	for _, tc := range []struct{ body, ptr string }{
		{`{}`, "/ids"},
		{``, ""},
		{`{"all":true,"max":1e308}`, "/max"},
		{`{"all":true,"action":"purge"}`, "/action"},
		{`{"ids":["` + a + `","nope"]}`, "/ids/1"},
	} {
		r := e.do(t, "POST", "/admin/dlq/bulk-retry", "adm", tc.body)
		if (r.status != 400 && r.status != 404) || !contains(pointers(r), tc.ptr) {
			t.Errorf("bulk-retry %s = %d %v, want an error at %q", tc.body, r.status, pointers(r), tc.ptr)
		}
	}
	r := e.do(t, "POST", "/admin/dlq/bulk-retry", "adm", `{"source":"outbox","all":true,"max":2,"rate_per_sec":5}`)
	if r.status != 200 || r.body["redriven"] != 2.0 {
		t.Fatalf("bulk-retry = %d %v", r.status, r.body)
	}

	if r := e.do(t, "POST", "/admin/dlq/"+c+"/discard", "adm", `{}`); r.status != 400 || !contains(pointers(r), "/reason") {
		t.Fatalf("discard without reason = %d %v", r.status, pointers(r))
	}
	if r := e.do(t, "POST", "/admin/dlq/"+c+"/discard", "adm", `{"reason":"test order"}`); r.status != 200 || r.body["changed"] != 1.0 {
		t.Fatalf("discard = %d %v", r.status, r.body)
	}
	if r := e.do(t, "DELETE", "/admin/dlq/"+a, "adm", ""); r.status != 200 {
		t.Fatalf("delete = %d %v", r.status, r.body)
	}
	if d := e.entry(t, a); d.Status != dlq.StatusDiscarded {
		t.Fatalf("soft-deleted entry = %+v", d)
	}
	if r := e.do(t, "DELETE", "/admin/dlq/missing", "adm", ""); r.status != 404 {
		t.Fatalf("delete missing = %d", r.status)
	}
	_ = b

	r = e.do(t, "GET", "/admin/audit?limit=10", "adm", "")
	recs, _ := r.body["audit"].([]any)
	if r.status != 200 || len(recs) != 3 {
		t.Fatalf("audit = %d %v", r.status, r.body)
	}
	var got []string
	for _, x := range recs {
		m := x.(map[string]any)
		got = append(got, m["action"].(string)+":"+m["actor"].(string))
	}
	if want := []string{"delete:alice", "discard:alice", "redrive:alice"}; strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("audit = %v, want %v", got, want)
	}
	for _, q := range []string{"limit=0", "limit=5000", "x=1"} {
		if r := e.do(t, "GET", "/admin/audit?"+q, "adm", ""); r.status != 400 {
			t.Errorf("audit ?%s = %d", q, r.status)
		}
	}
}

func TestUnknownRoutesAndMethods(t *testing.T) {
	e := newEnv(t)
	if r := e.do(t, "GET", "/admin/dlq/a/b/c", "adm", ""); r.status != 404 {
		t.Errorf("unknown route = %d", r.status)
	}
	if r := e.do(t, "POST", "/admin/dlq", "adm", ""); r.status != 405 || r.header.Get("Allow") != "GET" {
		t.Errorf("POST /admin/dlq = %d, Allow %q", r.status, r.header.Get("Allow"))
	}
}

func contains(xs []string, x string) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}
