package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"ordersaga/shared/adapters/sqlitestore"
	"ordersaga/shared/adapters/sqlitestore/sqlitetest"
	"ordersaga/shared/app/orders"
	"ordersaga/shared/domain/outbox"
	"ordersaga/shared/domain/queue"
	"ordersaga/shared/domain/queue/queuetest"
	"ordersaga/shared/domain/store"
	"ordersaga/shared/kit/text"
	"ordersaga/shared/transport/httpapi"
	"ordersaga/shared/transport/identity"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// apiEnv is the real order API handler over the real order service on a
// SQLite file.
type apiEnv struct {
	path  string
	store store.Store
	h     http.Handler
	ids   atomic.Int64
}

func newAPI(t *testing.T) *apiEnv {
	t.Helper()
	e := &apiEnv{path: filepath.Join(t.TempDir(), "api.db")}
	s, err := sqlitestore.Open(context.Background(), e.path, sqlitestore.Config{Now: func() time.Time { return t0 }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	e.store = s
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	svc, err := orders.New(orders.Config{Store: s, Now: func() time.Time { return t0 }, Log: log,
		NewID: func() string { return fmt.Sprintf("id-%05d", e.ids.Add(1)) }})
	if err != nil {
		t.Fatal(err)
	}
	e.h = mustNew(t, httpapi.Config{Orders: svc, Log: log,
		Auth: identity.Tokens{"usr": {Subject: "bob", Role: identity.RoleUser}}})
	return e
}

type reply struct {
	status int
	ctype  string
	body   map[string]any
}

func (e *apiEnv) post(t *testing.T, key, body string) reply {
	t.Helper()
	req := httptest.NewRequest("POST", "/orders", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer usr")
	req.Header.Set("Content-Type", "application/json")
	req.Header["Idempotency-Key"] = []string{key} // raw bytes, as a client may send them
	rec := httptest.NewRecorder()
	e.h.ServeHTTP(rec, req)
	out := reply{status: rec.Code, ctype: rec.Header().Get("Content-Type")}
	if err := json.Unmarshal(rec.Body.Bytes(), &out.body); err != nil {
		t.Fatalf("body %q is not JSON: %v", rec.Body.String(), err)
	}
	return out
}

// rowCounts counts the rows of every table in the database file.
func (e *apiEnv) rowCounts(t *testing.T) map[string]int {
	t.Helper()
	return sqlitetest.RowCounts(t, e.path)
}

func orderBody(customer string) string {
	c, _ := json.Marshal(customer)
	return `{"customer_id":` + string(c) + `,"currency":"RUB","items":[{"sku":"sku-1","quantity":1,"unit_price_minor":100}]}`
}

const okBody = `{"customer_id":"c-1","currency":"RUB","items":[{"sku":"sku-1","quantity":1,"unit_price_minor":100}]}`

func pointers(r reply) []string {
	var out []string
	errs, _ := r.body["errors"].([]any)
	for _, e := range errs {
		out = append(out, e.(map[string]any)["pointer"].(string))
	}
	return out
}

// TestRefusesTextTheQueueWouldRefuse: a key or a text field holding a
// character SQS refuses (U+FFFE, U+FFFF, invalid UTF-8, ...) is a 400
// problem naming the field, and nothing is written.
func TestRefusesTextTheQueueWouldRefuse(t *testing.T) {
	e := newAPI(t)
	cases := []struct {
		name, key, body string
		pointer         string // "" for header problems, named in the detail
		detail          string
	}{
		{"key with U+FFFE", "k-\uFFFE", okBody, "", "Idempotency-Key"},
		{"key with U+FFFF", "k-\uFFFF", okBody, "", "Idempotency-Key"},
		{"key with invalid UTF-8", "k-\xff", okBody, "", "Idempotency-Key"},
		{"customer_id with U+FFFF escaped", "k1", strings.Replace(okBody, `"c-1"`, `"c-\uffff"`, 1), "/customer_id", "U+FFFF"},
		{"customer_id with U+FFFE raw", "k2", orderBody("c-\uFFFE"), "/customer_id", "U+FFFE"},
		{"customer_id with NUL", "k3", orderBody("c-\x00"), "/customer_id", "U+0000"},
		{"customer_id with invalid UTF-8", "k4", strings.Replace(okBody, `"c-1"`, "\"c-\xff\"", 1), "", "UTF-8"},
		{"sku with U+FFFF", "k5", strings.Replace(okBody, `"sku-1"`, `"sku-\uffff"`, 1), "/items/0/sku", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := e.rowCounts(t)
			r := e.post(t, c.key, c.body)
			if r.status != 400 || r.ctype != "application/problem+json" {
				t.Fatalf("status %d %s, want 400 problem+json: %v", r.status, r.ctype, r.body)
			}
			detail, _ := r.body["detail"].(string)
			if c.pointer != "" {
				if ps := pointers(r); len(ps) != 1 || ps[0] != c.pointer {
					t.Errorf("pointers %v, want [%s]: %v", ps, c.pointer, r.body)
				}
				for _, fe := range r.body["errors"].([]any) {
					detail += " " + fe.(map[string]any)["detail"].(string)
				}
			}
			if !strings.Contains(detail, c.detail) {
				t.Errorf("detail %q does not mention %q", detail, c.detail)
			}
			if after := e.rowCounts(t); !maps.Equal(before, after) {
				t.Errorf("rows changed: %v → %v", before, after)
			}
		})
	}
}

// TestAcceptedTextIsPublishable: whatever text the boundary accepts in the
// key and in customer_id ends up in outbox rows the queue port accepts
// (body and attributes), so no accepted order can be unpublishable.
func TestAcceptedTextIsPublishable(t *testing.T) {
	e := newAPI(t)
	n := 0
	for i, s := range queuetest.TextRuleSamples(7, 40) {
		if !text.Printable(s) || strings.TrimSpace(s) != s || len([]rune(s)) > 128 {
			continue // the key and the id refuse control characters and edge spaces on top of the rule
		}
		r := e.post(t, s, orderBody(s))
		if r.status != 201 {
			t.Errorf("sample %d %+q: status %d %v", i, s, r.status, r.body)
			continue
		}
		n++
	}
	if n < 30 {
		t.Fatalf("only %d samples were sent", n)
	}
	var rows []outbox.Event
	err := e.store.View(context.Background(), func(ctx context.Context, tx store.Tx) error {
		var err error
		rows, err = tx.ListOutboxDue(ctx, 0, t0.Add(time.Hour), 10*n)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2*n {
		t.Fatalf("%d outbox rows, want %d", len(rows), 2*n)
	}
	for _, ev := range rows {
		m := queue.OutMessage{ID: "e", Body: string(ev.Payload), Attributes: ev.Attributes()}
		if err := queue.CheckMessage(m); err != nil {
			t.Errorf("outbox row %s (%s) is unpublishable: %v", ev.ID, ev.EventType, err)
		}
	}
}

// TestRefusesDuplicateMembers: a member named twice, at any depth, is a 400
// naming it (encoding/json alone would keep the last value), and nothing is
// written.
func TestRefusesDuplicateMembers(t *testing.T) {
	e := newAPI(t)
	for i, tc := range []struct{ body, ptr string }{
		{`{"customer_id":"a","customer_id":"b","currency":"RUB","items":[{"sku":"s","quantity":1,"unit_price_minor":1}]}`, "/customer_id"},
		{`{"customer_id":"a","currency":"RUB","items":[{"sku":"s","quantity":1,"quantity":9,"unit_price_minor":1}]}`, "/items/0/quantity"},
		{`{"customer_id":"a","currency":"RUB","items":[],"items":[{"sku":"s","quantity":1,"unit_price_minor":1}]}`, "/items"},
	} {
		before := e.rowCounts(t)
		r := e.post(t, fmt.Sprintf("dup-%d", i), tc.body)
		if r.status != 400 || r.ctype != "application/problem+json" {
			t.Fatalf("%s: status %d %s: %v", tc.body, r.status, r.ctype, r.body)
		}
		if ps := pointers(r); len(ps) != 1 || ps[0] != tc.ptr {
			t.Errorf("%s: pointers %v, want [%s]", tc.body, ps, tc.ptr)
		}
		if after := e.rowCounts(t); !maps.Equal(before, after) {
			t.Errorf("rows changed: %v → %v", before, after)
		}
	}
	if r := e.post(t, "dup-ok", okBody); r.status != 201 {
		t.Fatalf("good body: %d %v", r.status, r.body)
	}
}
