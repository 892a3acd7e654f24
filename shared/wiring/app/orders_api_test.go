package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"ordersaga/shared/domain/outbox"
	"ordersaga/shared/domain/store"
	"ordersaga/shared/kit/config"
	"ordersaga/shared/wiring/app"
)

const orderBody = `{"customer_id":"c-1","currency":"RUB","items":[{"sku":"sku-1","quantity":2,"unit_price_minor":1500}]}`

func TestCreateOrderReturns201WithContract(t *testing.T) {
	env := newTestEnv(t)
	r := env.do("POST", "/orders", "dev-user", "key-contract", []byte(orderBody))
	if r.status != 201 {
		t.Fatalf("status = %d, want 201; body %s", r.status, r.body)
	}
	var got map[string]any
	if err := json.Unmarshal(r.body, &got); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"id", "customer_id", "status", "currency", "items", "total_minor", "created_at", "updated_at"} {
		if _, ok := got[f]; !ok {
			t.Errorf("response lacks %q: %s", f, r.body)
		}
	}
	if got["status"] != "PENDING" || got["total_minor"] != float64(3000) {
		t.Errorf("status/total = %v/%v, want PENDING/3000", got["status"], got["total_minor"])
	}
	if loc := r.header.Get("Location"); loc != "/orders/"+got["id"].(string) {
		t.Errorf("Location = %q", loc)
	}
	if r.header.Get("Idempotent-Replayed") != "" {
		t.Error("first response must not be marked replayed")
	}
	// The owner reads it back; another user gets 404; an admin reads it.
	id := got["id"].(string)
	if g := env.do("GET", "/orders/"+id, "dev-user", "", nil); g.status != 200 {
		t.Errorf("owner GET = %d %s", g.status, g.body)
	}
	if g := env.do("GET", "/orders/"+id, "dev-admin", "", nil); g.status != 200 {
		t.Errorf("admin GET = %d", g.status)
	}
}

func TestConcurrentSameKeyCreatesOneOrder(t *testing.T) {
	env := newTestEnv(t)
	const n = 50
	var wg sync.WaitGroup
	replies := make([]reply, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			replies[i] = env.do("POST", "/orders", "dev-user", "same-key", []byte(orderBody))
		}(i)
	}
	wg.Wait()
	var body201 []byte
	for i, r := range replies {
		switch r.status {
		case 201:
			if body201 == nil {
				body201 = r.body
			} else if !bytes.Equal(body201, r.body) {
				t.Errorf("reply %d: 201 body differs:\n%s\n%s", i, r.body, body201)
			}
		case 409:
			if r.header.Get("Retry-After") == "" {
				t.Errorf("reply %d: 409 without Retry-After", i)
			}
		default:
			t.Errorf("reply %d: status %d (%s), want 201 or 409", i, r.status, r.body)
		}
	}
	if c := env.rowCounts()["orders"]; c != 1 {
		t.Fatalf("orders rows = %d, want exactly 1", c)
	}
}

func TestReplayIsByteIdenticalAndMarked(t *testing.T) {
	env := newTestEnv(t)
	first := env.do("POST", "/orders", "dev-user", "k-replay", []byte(orderBody))
	// Same request with different whitespace: same fingerprint.
	spaced := strings.ReplaceAll(orderBody, ",", " ,\n ")
	second := env.do("POST", "/orders", "dev-user", "k-replay", []byte(spaced))
	if first.status != 201 || second.status != 201 {
		t.Fatalf("statuses %d, %d", first.status, second.status)
	}
	if !bytes.Equal(first.body, second.body) {
		t.Errorf("replayed body differs:\n%s\n%s", first.body, second.body)
	}
	if second.header.Get("Idempotent-Replayed") != "true" {
		t.Error("replay lacks Idempotent-Replayed: true")
	}
	if first.header.Get("Location") != second.header.Get("Location") {
		t.Error("replay Location differs")
	}
	// Structured-field form of the same key is the same key.
	third := env.do("POST", "/orders", "dev-user", `"k-replay"`, []byte(orderBody))
	if !bytes.Equal(third.body, first.body) {
		t.Errorf("quoted key did not replay: %d %s", third.status, third.body)
	}
	if c := env.rowCounts()["orders"]; c != 1 {
		t.Errorf("orders = %d, want 1", c)
	}
}

func TestKeyReuseWithOtherBodyIs422(t *testing.T) {
	env := newTestEnv(t)
	env.do("POST", "/orders", "dev-user", "k-reuse", []byte(orderBody))
	before := env.rowCounts()
	other := strings.Replace(orderBody, `"quantity":2`, `"quantity":3`, 1)
	r := env.do("POST", "/orders", "dev-user", "k-reuse", []byte(other))
	if r.status != 422 {
		t.Fatalf("status = %d, want 422: %s", r.status, r.body)
	}
	assertProblem(t, r)
	if after := env.rowCounts(); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("rows changed:\n%v\n%v", before, after)
	}
}

func TestKeysAreScopedByCaller(t *testing.T) {
	env := newTestEnv(t)
	a := env.do("POST", "/orders", "dev-user", "shared-key", []byte(orderBody))
	b := env.do("POST", "/orders", "dev-admin", "shared-key", []byte(orderBody))
	if a.status != 201 || b.status != 201 {
		t.Fatalf("statuses %d %d", a.status, b.status)
	}
	if b.header.Get("Idempotent-Replayed") != "" || a.header.Get("Location") == b.header.Get("Location") {
		t.Error("the same key from another caller must create another order")
	}
	// dev-user cannot read the admin's order.
	if g := env.do("GET", b.header.Get("Location"), "dev-user", "", nil); g.status != 404 {
		t.Errorf("foreign GET = %d, want 404", g.status)
	}
}

func TestBadInputChangesNothing(t *testing.T) {
	env := newTestEnv(t)
	long := strings.Repeat("k", 256)
	big := `{"customer_id":"c-1","currency":"RUB","items":[` + strings.Repeat(`{"sku":"s","quantity":1,"unit_price_minor":1},`, 1500) + `{"sku":"t","quantity":1,"unit_price_minor":1}]}`
	items101 := `{"customer_id":"c","currency":"RUB","items":[` + strings.TrimSuffix(strings.Repeat(`{"sku":"s","quantity":1,"unit_price_minor":1},`, 101), ",") + `]}`
	cases := []struct {
		name, token, key, body string
		hdr                    []string
		want                   int
	}{
		{"no identity", "", "k1", orderBody, nil, 401},
		{"unknown token", "nope", "k1", orderBody, nil, 401},
		{"missing key", "dev-user", "", orderBody, nil, 400},
		{"key too long", "dev-user", long, orderBody, nil, 400},
		{"key with control char", "dev-user", "a\tb", orderBody, nil, 400},
		{"malformed json", "dev-user", "k2", `{"customer_id":`, nil, 400},
		{"not an object", "dev-user", "k2", `[1,2]`, nil, 400},
		{"trailing data", "dev-user", "k2", orderBody + `{}`, nil, 400},
		{"unknown field", "dev-user", "k2", strings.Replace(orderBody, `"currency"`, `"coupon":"x","currency"`, 1), nil, 400},
		{"empty items", "dev-user", "k2", `{"customer_id":"c","currency":"RUB","items":[]}`, nil, 400},
		{"too many items", "dev-user", "k2", items101, nil, 400},
		{"zero quantity", "dev-user", "k2", strings.Replace(orderBody, `"quantity":2`, `"quantity":0`, 1), nil, 400},
		{"negative price", "dev-user", "k2", strings.Replace(orderBody, `1500`, `-1`, 1), nil, 400},
		{"fractional quantity", "dev-user", "k2", strings.Replace(orderBody, `"quantity":2`, `"quantity":2.5`, 1), nil, 400},
		{"bad currency", "dev-user", "k2", strings.Replace(orderBody, `RUB`, `RUBX`, 1), nil, 400},
		{"lowercase currency", "dev-user", "k2", strings.Replace(orderBody, `RUB`, `rub`, 1), nil, 400},
		{"unknown currency", "dev-user", "k2", strings.Replace(orderBody, `RUB`, `XYZ`, 1), nil, 400},
		{"missing customer", "dev-user", "k2", strings.Replace(orderBody, `"c-1"`, `""`, 1), nil, 400},
		{"body over 64 KiB", "dev-user", "k2", big, nil, 413},
		{"wrong content type", "dev-user", "k2", orderBody, []string{"Content-Type", "text/plain"}, 415},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := env.rowCounts()
			r := env.do("POST", "/orders", tc.token, tc.key, []byte(tc.body), tc.hdr...)
			if r.status != tc.want {
				t.Fatalf("status = %d, want %d: %s", r.status, tc.want, r.body)
			}
			assertProblem(t, r)
			if after := env.rowCounts(); fmt.Sprint(after) != fmt.Sprint(before) {
				t.Errorf("rows changed:\n%v\n%v", before, after)
			}
		})
	}
	t.Run("get unknown order", func(t *testing.T) {
		r := env.do("GET", "/orders/does-not-exist", "dev-user", "", nil)
		if r.status != 404 {
			t.Fatalf("status %d", r.status)
		}
		assertProblem(t, r)
	})
	t.Run("unknown route and method", func(t *testing.T) {
		if r := env.do("GET", "/nope", "dev-user", "", nil); r.status != 404 {
			t.Errorf("unknown route = %d", r.status)
		}
		r := env.do("DELETE", "/orders", "dev-user", "", nil)
		if r.status != 405 || r.header.Get("Allow") == "" {
			t.Errorf("wrong method = %d allow=%q", r.status, r.header.Get("Allow"))
		}
	})
}

func assertProblem(t *testing.T, r reply) {
	t.Helper()
	if ct := r.header.Get("Content-Type"); ct != "application/problem+json" {
		t.Errorf("Content-Type = %q, want application/problem+json", ct)
	}
	var p struct {
		Type   string `json:"type"`
		Title  string `json:"title"`
		Status int    `json:"status"`
		Detail string `json:"detail"`
	}
	if err := json.Unmarshal(r.body, &p); err != nil || p.Status != r.status || p.Title == "" || p.Type == "" {
		t.Errorf("bad problem body %s (err %v)", r.body, err)
	}
}

// failingStore wraps a store and makes InsertOutbox fail or panic, to prove
// the order, saga, outbox rows and key are written all or nothing.
type failingStore struct {
	store.Store
	panicking bool
}

type failingTx struct {
	store.Tx
	panicking bool
}

func (f failingStore) InTx(ctx context.Context, fn func(context.Context, store.Tx) error) error {
	return f.Store.InTx(ctx, func(ctx context.Context, tx store.Tx) error {
		return fn(ctx, failingTx{Tx: tx, panicking: f.panicking})
	})
}

func (f failingTx) InsertOutbox(ctx context.Context, e outbox.Event) error {
	if f.panicking {
		panic("crash inside the order transaction")
	}
	return fmt.Errorf("disk on fire")
}

func TestCrashInsideTransactionLeavesNothing(t *testing.T) {
	for _, panicking := range []bool{false, true} {
		t.Run(fmt.Sprintf("panic=%v", panicking), func(t *testing.T) {
			env := newTestEnv(t)
			base, err := app.New(context.Background(), env.app.Config, app.Use(app.Ports{Store: failingStore{Store: env.ports.Store, panicking: panicking}, Queue: env.ports.Queue}), app.Options{})
			if err != nil {
				t.Fatal(err)
			}
			before := env.rowCounts()
			_, err = func() (resp any, err error) {
				defer func() {
					if p := recover(); p != nil {
						err = fmt.Errorf("panic: %v", p)
					}
				}()
				return base.Commands.Orders.Create(context.Background(), createCmd("crash-key"))
			}()
			if err == nil {
				t.Fatal("create succeeded through a failing store")
			}
			if after := env.rowCounts(); fmt.Sprint(after) != fmt.Sprint(before) {
				t.Errorf("rows changed:\n%v\n%v", before, after)
			}
			// The key was not stored: a retry with a healthy store succeeds.
			if r := env.do("POST", "/orders", "dev-user", "crash-key", []byte(orderBody)); r.status != 201 || r.header.Get("Idempotent-Replayed") != "" {
				t.Errorf("retry after crash = %d replayed=%q", r.status, r.header.Get("Idempotent-Replayed"))
			}
		})
	}
}

func TestServerErrorsAreNotStored(t *testing.T) {
	env := newTestEnv(t, func(c *config.Config, o *app.Options) {})
	broken, err := app.New(context.Background(), env.app.Config, app.Use(app.Ports{Store: failingStore{Store: env.ports.Store}, Queue: env.ports.Queue}), app.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := broken.Commands.Orders.Create(context.Background(), createCmd("k5xx")); err == nil {
		t.Fatal("want an error")
	}
	if r := env.do("POST", "/orders", "dev-user", "k5xx", []byte(orderBody)); r.status != 201 || r.header.Get("Idempotent-Replayed") != "" {
		t.Errorf("after a 5xx the retry must run again: %d", r.status)
	}
}

func TestTransactionBudget(t *testing.T) {
	env := newTestEnv(t)
	env.txCount.Store(0)
	if r := env.do("POST", "/orders", "dev-user", "budget", []byte(orderBody)); r.status != 201 {
		t.Fatal(r.status)
	}
	if n := env.txCount.Load(); n > 2 {
		t.Errorf("new order used %d store transactions, budget 2", n)
	}
	env.txCount.Store(0)
	if r := env.do("POST", "/orders", "dev-user", "budget", []byte(orderBody)); r.header.Get("Idempotent-Replayed") != "true" {
		t.Fatal("not a replay")
	}
	if n := env.txCount.Load(); n != 1 {
		t.Errorf("replay used %d store transactions, budget 1", n)
	}
}

// With the embedded queue on the store's file (the local default), the
// fast path runs inside the order's own transaction: one transaction in
// all, no publish mark after it.
func TestNewOrderOnOneFileIsOneTransaction(t *testing.T) {
	env := newTestEnv(t)
	env.txCount.Store(0)
	if r := env.do("POST", "/orders", "dev-user", "one-tx", []byte(orderBody)); r.status != 201 {
		t.Fatal(r.status)
	}
	if n := env.txCount.Load(); n != 1 {
		t.Errorf("new order used %d store transactions, want 1 (the in-transaction fast path)", n)
	}
}
