package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"ordersaga/shared/app/orders"
	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/transport/httpapi"
	"ordersaga/shared/transport/identity"
)

// stalledOrders waits for its context to end, then fails as the store does
// when a transaction is cut short: a Transient error wrapping ctx.Err().
type stalledOrders struct{ err error }

func (s stalledOrders) Create(ctx context.Context, _ orders.CreateCommand) (orders.Response, error) {
	if s.err != nil {
		return orders.Response{}, s.err
	}
	<-ctx.Done()
	return orders.Response{}, apperr.Wrap(apperr.Transient, ctx.Err(), "store: create order")
}

func (stalledOrders) Get(context.Context, identity.Identity, string) (orders.View, error) {
	return orders.View{}, apperr.New(apperr.NotFound, "no")
}

type observed struct {
	status int
	logs   string
}

func createWith(t *testing.T, o httpapi.Orders, ctx context.Context) observed {
	t.Helper()
	var logs bytes.Buffer
	var got observed
	h := mustNew(t, httpapi.Config{Orders: o, Log: slog.New(slog.NewJSONHandler(&logs, nil)),
		Auth:      identity.Tokens{"usr": {Subject: "bob", Role: identity.RoleUser}},
		OnRequest: func(_ string, status int, _ time.Duration) { got.status = status }})
	req := httptest.NewRequest("POST", "/orders", strings.NewReader(`{"customer_id":"c","currency":"RUB","items":[{"sku":"s","quantity":1,"unit_price_minor":1}]}`)).WithContext(ctx)
	req.Header.Set("Authorization", "Bearer usr")
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", "k-1")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != got.status {
		t.Errorf("response %d, observed %d", rec.Code, got.status)
	}
	var p httpapi.Problem
	if err := json.Unmarshal(rec.Body.Bytes(), &p); err != nil || p.Status != rec.Code || p.Title == "" {
		t.Errorf("problem %s (%v)", rec.Body.String(), err)
	}
	got.logs = logs.String()
	return got
}

// A client that gives up is answered and counted as 499, and logged below
// ERROR: the 5xx rate and the error alerts mean the server failed.
func TestClientThatGivesUpIs499NotAnError(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(10 * time.Millisecond); cancel() }()
	got := createWith(t, stalledOrders{}, ctx)
	if got.status != httpapi.StatusClientClosedRequest {
		t.Errorf("status %d, want 499", got.status)
	}
	if strings.Contains(got.logs, `"level":"ERROR"`) {
		t.Errorf("logged as an error: %s", got.logs)
	}
	if !strings.Contains(got.logs, "client closed the request") {
		t.Errorf("not logged at all: %q", got.logs)
	}
}

// The server's own failures stay 503 and ERROR, whether a dependency was
// unavailable or the server's deadline (not the client) cut the work short.
func TestServerFailuresStay503(t *testing.T) {
	got := createWith(t, stalledOrders{err: apperr.Wrap(apperr.Transient, context.Canceled, "a dependency's own cancellation")}, context.Background())
	if got.status != 503 || !strings.Contains(got.logs, `"level":"ERROR"`) {
		t.Errorf("a cancellation the client did not cause: status %d, logs %s", got.status, got.logs)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	got = createWith(t, stalledOrders{}, ctx)
	if got.status != 503 || !strings.Contains(got.logs, `"level":"ERROR"`) {
		t.Errorf("deadline: status %d, logs %s", got.status, got.logs)
	}
}
