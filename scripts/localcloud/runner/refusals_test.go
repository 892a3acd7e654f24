package runner

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"ordersaga/shared/kit/config"
	"ordersaga/shared/wiring/handlers"
	"ordersaga/shared/wiring/triggers"
)

// newRefusalServer serves the runner's routes behind its faults endpoint,
// as main does, on a real HTTP server.
func newRefusalServer(t *testing.T) *httptest.Server {
	t.Helper()
	f, err := newFaults(config.Default(), &triggers.File{}, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	a, _ := newFaultApp(t, f)
	rt := &runner{app: a, log: slog.New(slog.NewTextHandler(io.Discard, nil)), functions: maps.Clone(handlers.Registry)}
	srv := httptest.NewServer(f.wrap(rt.routes()))
	t.Cleanup(srv.Close)
	return srv
}

type answer struct {
	status      int
	contentType string
	body        string
}

func do(t *testing.T, method, url, contentType string, body io.Reader, headers ...string) answer {
	t.Helper()
	req, err := http.NewRequest(method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return answer{resp.StatusCode, resp.Header.Get("Content-Type"), string(b)}
}

// wantProblem checks that a is one problem+json object of the given status
// and type, ending in a newline, and returns its detail.
func wantProblem(t *testing.T, what string, a answer, status int, typ string) string {
	t.Helper()
	var p struct {
		Type   string `json:"type"`
		Title  string `json:"title"`
		Status int    `json:"status"`
		Detail string `json:"detail"`
	}
	if a.status != status || a.contentType != "application/problem+json" {
		t.Fatalf("%s: %d %q %q, want %d application/problem+json", what, a.status, a.contentType, a.body, status)
	}
	if err := json.Unmarshal([]byte(a.body), &p); err != nil || p.Status != status || p.Type != typ || p.Title == "" {
		t.Fatalf("%s: body %q (%v), want a problem of status %d and type %s", what, a.body, err, status, typ)
	}
	if !strings.HasSuffix(a.body, "}\n") {
		t.Errorf("%s: body %q does not end in a newline", what, a.body)
	}
	return p.Detail
}

// TestEveryRefusalIsProblemJSON: whatever refuses a request — the API's
// own body limit (64 KiB), the platform's request limit (3.5 MB) before
// any function runs, the invoke endpoint, the queue endpoint, the faults
// endpoint — the answer is problem+json of the API's shape, ending in a
// newline; a body past the platform limit gets the same problem type as one
// past the API's limit.
func TestEveryRefusalIsProblemJSON(t *testing.T) {
	srv := newRefusalServer(t)
	user := []string{"Authorization", "Bearer dev-user", "Idempotency-Key", "k-big"}
	const tooLarge = "urn:ordersaga:problem:too-large"
	for _, size := range []int{1_000_000, 5_000_000} {
		a := do(t, http.MethodPost, srv.URL+"/orders", "application/json", strings.NewReader(strings.Repeat("a", size)), user...)
		wantProblem(t, fmt.Sprintf("POST /orders of %d bytes", size), a, 413, tooLarge)
	}
	a := do(t, http.MethodPost, srv.URL+"/_invoke/dlqredrive", "application/json", strings.NewReader(strings.Repeat("a", 4_000_000)))
	wantProblem(t, "POST /_invoke of 4 MB", a, 413, tooLarge)
	a = do(t, http.MethodGet, srv.URL+"/_invoke/dlqredrive", "", nil)
	wantProblem(t, "GET /_invoke", a, 405, "urn:ordersaga:problem:method-not-allowed")
	a = do(t, http.MethodPost, srv.URL+"/_invoke/nosuch", "application/json", strings.NewReader("{}"))
	wantProblem(t, "POST /_invoke/nosuch", a, 404, "urn:ordersaga:problem:not-found")
	a = do(t, http.MethodPost, srv.URL+"/_queues/nosuch", "application/json", strings.NewReader(`{"body":"x"}`))
	wantProblem(t, "POST /_queues/nosuch", a, 404, "urn:ordersaga:problem:not-found")
	a = do(t, http.MethodGet, srv.URL+"/_queues/nosuch", "", nil)
	wantProblem(t, "GET /_queues", a, 405, "urn:ordersaga:problem:method-not-allowed")
	a = do(t, http.MethodPatch, srv.URL+faultsPath, "application/json", strings.NewReader(`{"nope":1}`))
	wantProblem(t, "PATCH /_faults with an unknown field", a, 400, "urn:ordersaga:problem:invalid-request")
	a = do(t, http.MethodDelete, srv.URL+faultsPath, "", nil)
	wantProblem(t, "DELETE /_faults", a, 405, "urn:ordersaga:problem:method-not-allowed")
	a = do(t, http.MethodGet, srv.URL+"/metrics", "", nil)
	wantProblem(t, "GET /metrics without metrics", a, 404, "urn:ordersaga:problem:not-found")
}

// TestMalformedJSONSaysWhatIsWrong: a body cut off inside its object is
// refused naming the request body (no empty field name), and the answer
// ends in a newline.
func TestMalformedJSONSaysWhatIsWrong(t *testing.T) {
	srv := newRefusalServer(t)
	for _, body := range []string{`{"customer_id":`, `{"customer_id":"c-1"`, `{"customer_id" "c-1"}`, `[1,`} {
		a := do(t, http.MethodPost, srv.URL+"/orders", "application/json", strings.NewReader(body),
			"Authorization", "Bearer dev-user", "Idempotency-Key", "k-bad")
		detail := wantProblem(t, body, a, 400, "urn:ordersaga:problem:invalid-request")
		if strings.Contains(detail, "  ") || strings.HasPrefix(detail, "field ") || !strings.HasPrefix(detail, "request body ") {
			t.Errorf("%s: detail %q, want it to name the request body", body, detail)
		}
	}
}

// TestJSONAnswersEndInANewline: a created order, its replay, a read and
// the faults state all end in a newline, so a terminal's prompt starts on
// its own line; the replay is byte for byte the first answer.
func TestJSONAnswersEndInANewline(t *testing.T) {
	srv := newRefusalServer(t)
	user := []string{"Authorization", "Bearer dev-user", "Idempotency-Key", "k-nl"}
	order := `{"customer_id":"c-1","currency":"RUB","items":[{"sku":"sku-1","quantity":1,"unit_price_minor":100}]}`
	first := do(t, http.MethodPost, srv.URL+"/orders", "application/json", strings.NewReader(order), user...)
	again := do(t, http.MethodPost, srv.URL+"/orders", "application/json", strings.NewReader(order), user...)
	if first.status != 201 || again.status != 201 || first.body != again.body {
		t.Fatalf("create %d %q, replay %d %q: want two identical 201s", first.status, first.body, again.status, again.body)
	}
	var o struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal([]byte(first.body), &o); err != nil || o.ID == "" {
		t.Fatalf("create body %q: %v", first.body, err)
	}
	read := do(t, http.MethodGet, srv.URL+"/orders/"+o.ID, "", nil, user[:2]...)
	faults := do(t, http.MethodGet, srv.URL+faultsPath, "", nil)
	for what, a := range map[string]answer{"create": first, "read": read, "faults": faults} {
		if a.status != 200 && a.status != 201 || !strings.HasSuffix(a.body, "}\n") || strings.HasSuffix(a.body, "\n\n") {
			t.Errorf("%s: %d %q, want a JSON object ending in one newline", what, a.status, a.body)
		}
	}
}
