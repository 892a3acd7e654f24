package console_test

import (
	"context"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"ordersaga/shared/kit/config"
	"ordersaga/shared/wiring/app"
	"ordersaga/shared/wiring/localwiring"
)

type env struct {
	t   *testing.T
	srv *httptest.Server
	app *app.App
}

func newEnv(t *testing.T) *env {
	t.Helper()
	cfg := config.Default()
	cfg.SQLitePath = filepath.Join(t.TempDir(), "ordersaga.db")
	cfg.QueueSQLite = cfg.SQLitePath
	cfg.LogLevel = "error"
	a, err := app.New(context.Background(), cfg, localwiring.Open, app.Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(a.HTTP)
	t.Cleanup(func() { srv.Close(); _ = a.Close() })
	return &env{t: t, srv: srv, app: a}
}

type reply struct {
	status int
	header http.Header
	body   string
}

// do sends a request; auth is "" (none), "Bearer x" (header) or "cookie:x".
func (e *env) do(method, path, auth string, form url.Values, hdr ...string) reply {
	e.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, e.srv.URL+path, body)
	if err != nil {
		e.t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	switch {
	case strings.HasPrefix(auth, "cookie:"):
		req.AddCookie(&http.Cookie{Name: "ordersaga_console", Value: strings.TrimPrefix(auth, "cookie:")})
	case auth != "":
		req.Header.Set("Authorization", auth)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return reply{resp.StatusCode, resp.Header, string(b)}
}

var consoleGets = []string{"/admin/console", "/admin/console/orders?customer=c-1", "/admin/console/orders/x",
	"/admin/console/dlq?status=open", "/admin/console/dlq/x", "/admin/console/dlq/progress?id=x",
	"/admin/console/audit", "/admin/console/stock", "/admin/console/static/console.css", "/admin/console/nope"}

// Without an admin identity no console route answers with data: anonymous
// callers get the sign-in form (401), user tokens 403, by header, cookie or
// the sign-in link, and no session cookie is set for them.
func TestNoPageAndNoDataWithoutAnAdmin(t *testing.T) {
	e := newEnv(t)
	for _, p := range consoleGets {
		for _, c := range []struct {
			auth string
			want int
		}{{"", 401}, {"Bearer nope", 401}, {"cookie:nope", 401}, {"Bearer dev-user", 403}, {"cookie:dev-user", 403}} {
			got := e.do("GET", p, c.auth, nil)
			if got.status != c.want {
				t.Errorf("GET %s as %q: status %d, want %d", p, c.auth, got.status, c.want)
			}
			for _, leak := range []string{"<table", "sku-", "Overview", "Sign out", "csrf"} {
				if strings.Contains(got.body, leak) {
					t.Errorf("GET %s as %q: body holds %q", p, c.auth, leak)
				}
			}
		}
	}
	for _, tok := range []string{"dev-user", "nope", ""} {
		got := e.do("GET", "/admin/console/signin?token="+tok, "", nil)
		if got.status == http.StatusSeeOther || strings.Contains(got.header.Get("Set-Cookie"), "=dev-user") {
			t.Errorf("sign-in with %q: status %d, cookie %q; want refused without a session", tok, got.status, got.header.Get("Set-Cookie"))
		}
	}
	// POSTs are refused the same way, before any form is read.
	got := e.do("POST", "/admin/console/stock", "cookie:dev-user", url.Values{"sku": {"sku-1"}, "available": {"1"}})
	if got.status != http.StatusForbidden {
		t.Errorf("POST stock as user: %d, want 403", got.status)
	}
}

var valueAttr = regexp.MustCompile(`value="[^"]*"`)

var csrfRE = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

func (e *env) csrf(auth string) string {
	e.t.Helper()
	got := e.do("GET", "/admin/console/stock", auth, nil)
	m := csrfRE.FindStringSubmatch(got.body)
	if got.status != 200 || m == nil {
		e.t.Fatalf("stock page: %d, no csrf field", got.status)
	}
	return m[1]
}

func stockOf(t *testing.T, e *env, sku string) string {
	t.Helper()
	got := e.do("GET", "/admin/stock", "Bearer dev-admin", nil)
	i := strings.Index(got.body, `"sku":"`+sku+`"`)
	if i < 0 {
		return ""
	}
	return got.body[i : i+strings.Index(got.body[i:], "}")]
}

// A change needs the session's CSRF token in the form and a same-origin
// request: the cookie alone changes nothing.
func TestChangesNeedTheCSRFToken(t *testing.T) {
	e := newEnv(t)
	signin := e.do("GET", "/admin/console/signin?token=dev-admin", "", nil)
	if signin.status != http.StatusSeeOther || !strings.Contains(signin.header.Get("Set-Cookie"), "HttpOnly") ||
		!strings.Contains(signin.header.Get("Set-Cookie"), "SameSite=Strict") {
		t.Fatalf("admin sign-in: %d %q, want 303 with an HttpOnly SameSite=Strict cookie", signin.status, signin.header.Get("Set-Cookie"))
	}
	tok := e.csrf("cookie:dev-admin")
	before := stockOf(t, e, "sku-9")
	for name, c := range map[string]struct {
		form url.Values
		hdr  []string
	}{
		"no token":         {url.Values{"sku": {"sku-9"}, "available": {"7"}}, nil},
		"wrong token":      {url.Values{"sku": {"sku-9"}, "available": {"7"}, "csrf": {tok + "x"}}, nil},
		"another session":  {url.Values{"sku": {"sku-9"}, "available": {"7"}, "csrf": {"dev-admin"}}, nil},
		"cross-site fetch": {url.Values{"sku": {"sku-9"}, "available": {"7"}, "csrf": {tok}}, []string{"Sec-Fetch-Site", "cross-site"}},
	} {
		got := e.do("POST", "/admin/console/stock", "cookie:dev-admin", c.form, c.hdr...)
		if got.status != http.StatusForbidden {
			t.Errorf("%s: status %d, want 403", name, got.status)
		}
		if now := stockOf(t, e, "sku-9"); now != before {
			t.Errorf("%s: stock changed from %q to %q", name, before, now)
		}
	}
	got := e.do("POST", "/admin/console/stock", "cookie:dev-admin",
		url.Values{"sku": {"sku-9"}, "available": {"7"}, "csrf": {tok}}, "Sec-Fetch-Site", "same-origin")
	if got.status != http.StatusSeeOther {
		t.Fatalf("with the token: status %d, want 303; body %s", got.status, got.body)
	}
	if now := stockOf(t, e, "sku-9"); !strings.Contains(now, `"available":7`) {
		t.Errorf("stock after the change: %q, want available 7", now)
	}
	audit := e.do("GET", "/admin/audit", "Bearer dev-admin", nil)
	if !strings.Contains(audit.body, `"actor":"dev-admin"`) {
		t.Errorf("the change is not audited with the caller as actor: %s", audit.body)
	}
}

// Pages are small, carry the strict policy and hold no script; stored text
// is escaped and format characters are shown as code points.
func TestPagesAreStrictAndEscapeStoredText(t *testing.T) {
	e := newEnv(t)
	hostile := "<script>alert(1)</script>\u202egnp.exe"
	req, _ := http.NewRequest("POST", e.srv.URL+"/orders", strings.NewReader(
		`{"customer_id":"`+strings.ReplaceAll(hostile, "<", `\u003c`)+`","currency":"RUB","items":[{"sku":"sku-1","quantity":1,"unit_price_minor":100}]}`))
	req.Header.Set("Authorization", "Bearer dev-user")
	req.Header.Set("Idempotency-Key", "hostile-1")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	loc := resp.Header.Get("Location")
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated || loc == "" {
		t.Fatalf("create: %d", resp.StatusCode)
	}
	for _, p := range []string{"/admin/console" + loc, "/admin/console/orders?customer=" + url.QueryEscape(hostile),
		"/admin/console/orders?key=hostile-1&caller=dev-user"} {
		got := e.do("GET", p, "cookie:dev-admin", nil)
		if got.status == http.StatusSeeOther {
			got = e.do("GET", got.header.Get("Location"), "cookie:dev-admin", nil)
		}
		if got.status != 200 {
			t.Fatalf("GET %s: %d", p, got.status)
		}
		// A form field may hold the text searched for (an input's value
		// cannot reorder the page); nowhere else may the override appear raw.
		text := valueAttr.ReplaceAllString(got.body, "")
		if strings.Contains(got.body, "<script") || strings.Contains(text, "\u202e") {
			t.Errorf("GET %s: the page holds a script tag or a raw bidi override", p)
		}
		if !strings.Contains(got.body, "&lt;script&gt;alert(1)&lt;/script&gt;⟨U&#43;202E⟩gnp.exe") {
			t.Errorf("GET %s: the customer id is not shown escaped", p)
		}
		csp := got.header.Get("Content-Security-Policy")
		if !strings.Contains(csp, "default-src 'none'") || strings.Contains(csp, "unsafe") {
			t.Errorf("GET %s: CSP %q", p, csp)
		}
		if len(got.body) > 100<<10 {
			t.Errorf("GET %s: %d bytes, want < 100 KB", p, len(got.body))
		}
	}
}

// Every page renders for an admin, under 100 KB.
func TestEveryPageRendersForAnAdmin(t *testing.T) {
	e := newEnv(t)
	for _, p := range []string{"/admin/console", "/admin/console/orders", "/admin/console/orders?customer=c-1",
		"/admin/console/orders?state=completed", "/admin/console/orders?customer=c-1&after_id=x&after_at=2026-01-02T03:04:05.000006Z",
		"/admin/console/dlq", "/admin/console/dlq?status=open&source=saga&flagged=false", "/admin/console/audit",
		"/admin/console/stock", "/admin/console/static/console.css"} {
		got := e.do("GET", p, "cookie:dev-admin", nil)
		if got.status != http.StatusOK || strings.Contains(got.body, "could not be rendered") {
			t.Errorf("GET %s: %d %.200s", p, got.status, got.body)
		}
		if len(got.body) > 100<<10 {
			t.Errorf("GET %s: %d bytes", p, len(got.body))
		}
	}
	for _, p := range []string{"/admin/console/dlq?nope=1", "/admin/console/dlq?flagged=maybe", "/admin/console/dlq?status=gone",
		"/admin/console/orders?customer=c-1&state=completed", "/admin/console/orders?customer=c-1&after_id=x&after_at=yesterday"} {
		if got := e.do("GET", p, "cookie:dev-admin", nil); got.status != http.StatusBadRequest {
			t.Errorf("GET %s: %d, want 400", p, got.status)
		}
	}
}

// createOrder places an order for customer through the public API and
// returns its id.
func (e *env) createOrder(key, customer string) string {
	e.t.Helper()
	req, _ := http.NewRequest("POST", e.srv.URL+"/orders", strings.NewReader(
		`{"customer_id":"`+customer+`","currency":"RUB","items":[{"sku":"sku-1","quantity":1,"unit_price_minor":100}]}`))
	req.Header.Set("Authorization", "Bearer dev-user")
	req.Header.Set("Idempotency-Key", key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	resp.Body.Close()
	loc := resp.Header.Get("Location")
	if resp.StatusCode != http.StatusCreated || !strings.HasPrefix(loc, "/orders/") {
		e.t.Fatalf("create %s: %d %q", key, resp.StatusCode, loc)
	}
	return strings.TrimPrefix(loc, "/orders/")
}

var (
	orderLink = regexp.MustCompile(`<a href="/admin/console/orders/([^"?]+)">`)
	olderLink = regexp.MustCompile(`<a id="older" href="([^"]+)">`)
)

// A customer's orders are listed newest first a page at a time: every page
// but the last links to the older orders, and following the links lists
// each of the customer's orders once, the first one placed last, and no
// other customer's.
func TestFindByCustomerPagesThroughEveryOrder(t *testing.T) {
	e := newEnv(t)
	var want []string // newest first
	for i := range 23 {
		want = append([]string{e.createOrder("pg-"+strconv.Itoa(i), "c-pages")}, want...)
		if i%5 == 0 {
			e.createOrder("other-"+strconv.Itoa(i), "c-other")
		}
	}
	var got []string
	p := "/admin/console/orders?customer=c-pages"
	for pages := 1; p != ""; pages++ {
		if pages > 3 {
			t.Fatal("more than 3 pages")
		}
		r := e.do("GET", p, "cookie:dev-admin", nil)
		if r.status != http.StatusOK || len(r.body) > 100<<10 {
			t.Fatalf("GET %s: %d, %d bytes", p, r.status, len(r.body))
		}
		n := 0
		for _, m := range orderLink.FindAllStringSubmatch(r.body, -1) {
			got = append(got, m[1])
			n++
		}
		if want := min(20, 23-20*(pages-1)); n != want {
			t.Errorf("page %d lists %d orders, want %d", pages, n, want)
		}
		if pages > 1 != strings.Contains(r.body, `id="newest"`) {
			t.Errorf("page %d: a link to the newest orders only on later pages", pages)
		}
		p = ""
		if m := olderLink.FindStringSubmatch(r.body); m != nil {
			p = html.UnescapeString(m[1])
		}
	}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("orders listed:\n%v\nwant newest first:\n%v", got, want)
	}
	if r := e.do("GET", "/admin/console/orders?customer=nobody", "cookie:dev-admin", nil); r.status != 200 || !strings.Contains(r.body, "No order of this customer.") {
		t.Errorf("an unknown customer: %d %.300s", r.status, r.body)
	}
}
