// Package console is the operator console: server-rendered HTML pages
// (html/template, assets embedded) at /admin/console over the same use
// cases as the admin API — the dead-letter service (package redrive), the
// order reads (package orders), stock — with the admin API's authorization
// (adminapi.Authorize: an admin identity, every change audited with the
// caller's subject as actor).
//
// A browser cannot send an Authorization header on a navigation, so the
// console also reads the bearer token from an HttpOnly, SameSite=Strict
// cookie that GET /admin/console/signin?token=… sets (in the cloud the
// API Gateway authorizer verifies the cookie's and the query's JWT itself).
// Cookies never authorize a change alone: every POST carries a form field
// csrf derived from the session token (an HMAC keyed by it), which a page of
// another origin cannot read or compute, and a cross-site Sec-Fetch-Site is
// refused. Pages carry a strict Content-Security-Policy (no script at all,
// styles from the console's own origin only) and every text is escaped by
// html/template; format characters such as bidi overrides are shown as
// their code points.
package console

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"html/template"
	"net/http"
	"strings"
	"time"

	"ordersaga/shared/app/orders"
	"ordersaga/shared/app/redrive"
	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/inventory"
	"ordersaga/shared/domain/store"
	"ordersaga/shared/kit/validate"
	"ordersaga/shared/transport/identity"
)

// Path is where the console is served.
const Path = "/admin/console"

// CookieName is the session cookie holding the bearer token.
const CookieName = "ordersaga_console"

// Orders is what the console reads about orders (orders.Service).
type Orders interface {
	Get(ctx context.Context, caller identity.Identity, id string) (orders.View, error)
	FindByKey(ctx context.Context, caller identity.Identity, scope, key string) (orders.View, error)
	RecentSagas(ctx context.Context, caller identity.Identity, customerID string, scan int) ([]orders.SagaRef, error)
	ListByCustomer(ctx context.Context, caller identity.Identity, customerID string, after store.OrderCursor, limit int) (orders.CustomerPage, error)
	SagaCounts(ctx context.Context, caller identity.Identity, scan int) ([]orders.StateCount, error)
	Backlog(ctx context.Context, caller identity.Identity) (pending int, oldestAge time.Duration, err error)
}

var _ Orders = (*orders.Service)(nil)

// Stock is what the console needs to show and set stock (stock.Service).
type Stock interface {
	List(ctx context.Context) ([]inventory.Stock, error)
	SetAvailable(ctx context.Context, actor, sku string, available int64) (inventory.Stock, error)
}

// Breaker is one dependency's circuit breaker state.
type Breaker struct {
	Dependency string
	State      string
	Since      time.Time
}

// Config configures the console (New): its collaborators, all but
// Breakers required.
type Config struct {
	// Authorize resolves an admin caller exactly as the admin API does
	// (adminapi.Authorize): Unauthenticated or Forbidden otherwise.
	Authorize func(r *http.Request) (identity.Identity, error)
	Redrive   *redrive.Service
	Orders    Orders
	Stock     Stock
	// Breakers lists the dependencies' breakers (nil: none shown).
	Breakers func() []Breaker
	// SecureCookie marks the session cookie Secure (always behind HTTPS,
	// as API Gateway is); it is also set for a request that arrived over TLS
	// or with X-Forwarded-Proto https.
	SecureCookie bool
}

type handler struct {
	d     Config
	pages map[string]*template.Template
	rt    routes
}

//go:embed templates/*.html static/console.css
var assets embed.FS

// New returns the console handler for Path and everything under it. It
// fails (apperr.Invalid, naming the fields) without Authorize, Redrive,
// Orders or Stock.
func New(cfg Config) (http.Handler, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	h := &handler{d: cfg, pages: parsePages()}
	h.rt = h.routeTable()
	return h, nil
}

// Validate reports what New would refuse: a missing Authorize, Redrive,
// Orders or Stock. Errors are apperr.Invalid and name the fields.
func (c Config) Validate() error {
	var p validate.Problems
	p.Require(c.Authorize != nil, "Authorize")
	p.Require(c.Redrive != nil, "Redrive")
	p.Require(c.Orders != nil, "Orders")
	p.Require(c.Stock != nil, "Stock")
	return p.Err("console.New")
}

// csp is the policy of every console response: nothing runs, styles and
// forms stay on the console's origin, no framing.
const csp = "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; " +
	"frame-ancestors 'none'; base-uri 'none'"

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hd := w.Header()
	hd.Set("Content-Security-Policy", csp)
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("X-Frame-Options", "DENY")
	hd.Set("Referrer-Policy", "no-referrer")
	hd.Set("Cache-Control", "no-store")

	signin := r.Method == http.MethodGet && r.URL.Path == Path+"/signin"
	ar, token := credentials(r, signin)
	caller, err := h.d.Authorize(ar)
	if err != nil {
		h.refuse(w, r, err)
		return
	}
	if signin {
		h.signIn(w, r, token)
		return
	}
	if r.Method == http.MethodPost {
		if err := checkCSRF(r, token); err != nil {
			h.fail(w, r, caller, err)
			return
		}
	}
	ctx := context.WithValue(r.Context(), callerKey{}, session{caller: caller, csrf: csrfToken(token)})
	h.rt.serve(w, r.WithContext(ctx), h)
}

type callerKey struct{}

type session struct {
	caller identity.Identity
	csrf   string
}

func sessionOf(r *http.Request) session {
	s, _ := r.Context().Value(callerKey{}).(session)
	return s
}

// credentials returns r with the bearer token the console accepts put in
// its Authorization header (an explicit header wins; else the signin
// query's token on the signin route; else the session cookie), and that
// token ("" when there is none).
func credentials(r *http.Request, signin bool) (*http.Request, string) {
	if tok, ok := bearer(r.Header.Get("Authorization")); ok {
		return r, tok
	}
	var tok string
	if signin {
		tok = r.URL.Query().Get("token")
	} else if c, err := r.Cookie(CookieName); err == nil {
		tok = c.Value
	}
	if tok == "" {
		return r, ""
	}
	r2 := r.Clone(r.Context())
	r2.Header.Set("Authorization", "Bearer "+tok)
	return r2, tok
}

func bearer(h string) (string, bool) {
	scheme, tok, ok := strings.Cut(h, " ")
	tok = strings.TrimSpace(tok)
	return tok, ok && strings.EqualFold(scheme, "Bearer") && tok != ""
}

// csrfToken is HMAC-SHA256 keyed by the session's bearer token: only a page
// that was served to this session (and so holds the value) can send it.
func csrfToken(token string) string {
	m := hmac.New(sha256.New, []byte(token))
	m.Write([]byte("ordersaga console csrf v1"))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// checkCSRF refuses a change that is cross-site or lacks the session's token.
func checkCSRF(r *http.Request, token string) error {
	if s := r.Header.Get("Sec-Fetch-Site"); s != "" && s != "same-origin" && s != "none" {
		return apperr.New(apperr.Forbidden, "a change must come from a console page (Sec-Fetch-Site %s)", s)
	}
	r.Body = http.MaxBytesReader(nil, r.Body, maxFormBytes)
	if err := r.ParseForm(); err != nil {
		return apperr.Wrap(apperr.Invalid, err, "the form could not be read")
	}
	got := r.PostForm.Get("csrf")
	if token == "" || !hmac.Equal([]byte(got), []byte(csrfToken(token))) {
		return apperr.New(apperr.Forbidden, "the form's CSRF token is missing or wrong: reload the page and try again")
	}
	return nil
}

// maxFormBytes bounds a console form (a selection of up to 1000 ids).
const maxFormBytes = 128 << 10

// signIn stores the verified token in the session cookie and leaves the
// token's URL at once.
func (h *handler) signIn(w http.ResponseWriter, r *http.Request, token string) {
	http.SetCookie(w, h.cookie(r, token, 0))
	http.Redirect(w, r, Path, http.StatusSeeOther)
}

func (h *handler) cookie(r *http.Request, value string, maxAge int) *http.Cookie {
	return &http.Cookie{Name: CookieName, Value: value, Path: Path, MaxAge: maxAge, HttpOnly: true,
		SameSite: http.SameSiteStrictMode,
		Secure:   h.d.SecureCookie || r.TLS != nil || strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https")}
}

// refuse answers a request without an admin identity: the sign-in form (no
// data) with 401 or 403, and no session cookie left behind.
func (h *handler) refuse(w http.ResponseWriter, r *http.Request, err error) {
	status := http.StatusUnauthorized
	msg := "Sign in with an admin token."
	if apperr.Is(err, apperr.Forbidden) {
		status = http.StatusForbidden
		msg = "This console needs an admin identity."
	}
	if _, cerr := r.Cookie(CookieName); cerr == nil {
		http.SetCookie(w, h.cookie(r, "", -1))
	}
	if status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="ordersaga admin"`)
	}
	h.render(w, status, "signin", view{Title: "Sign in", Message: msg})
}
