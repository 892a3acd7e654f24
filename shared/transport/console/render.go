package console

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode"

	"ordersaga/shared/app/orders"
	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/saga"
	"ordersaga/shared/transport/httpapi"
	"ordersaga/shared/transport/identity"
)

// routes maps console routes to page handlers.
type routes struct{ rt *httpapi.Router }

func (h *handler) routeTable() routes {
	rt := &httpapi.Router{}
	page := func(pattern string, f func(w http.ResponseWriter, r *http.Request)) { rt.HandleFunc(pattern, f) }
	page("GET "+Path, h.overview)
	page("GET "+Path+"/orders", h.orderSearch)
	page("GET "+Path+"/orders/{id}", h.orderPage)
	page("GET "+Path+"/dlq", h.deadLetters)
	page("POST "+Path+"/dlq/redrive", h.redrive)
	page("GET "+Path+"/dlq/progress", h.progress)
	page("GET "+Path+"/dlq/{id}", h.deadLetter)
	page("POST "+Path+"/dlq/{id}/discard", h.discard)
	page("GET "+Path+"/audit", h.audit)
	page("GET "+Path+"/stock", h.stock)
	page("POST "+Path+"/stock", h.setStock)
	page("POST "+Path+"/signout", h.signOut)
	page("GET "+Path+"/static/console.css", h.css)
	return routes{rt: rt}
}

func (rs routes) serve(w http.ResponseWriter, r *http.Request, h *handler) {
	target, _, allowed := rs.rt.Match(r)
	switch {
	case target != nil:
		target.ServeHTTP(w, r)
	case len(allowed) > 0:
		w.Header().Set("Allow", strings.Join(allowed, ", "))
		h.fail(w, r, sessionOf(r).caller, apperr.New(apperr.Invalid, "%s is not allowed here", r.Method))
	default:
		h.fail(w, r, sessionOf(r).caller, apperr.New(apperr.NotFound, "no console page at %s", r.URL.Path))
	}
}

func (h *handler) signOut(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, h.cookie(r, "", -1))
	h.render(w, http.StatusOK, "signin", view{Title: "Signed out", Message: "Signed out."})
}

func (h *handler) css(w http.ResponseWriter, _ *http.Request) {
	b, _ := assets.ReadFile("static/console.css")
	w.Header().Set("Content-Type", "text/css; charset=utf-8")
	w.Header().Set("Cache-Control", "private, max-age=300")
	_, _ = w.Write(b)
}

// view is what every page template gets.
type view struct {
	Title   string
	Message string
	Caller  identity.Identity
	CSRF    string
	Error   string
	// Refresh, when > 0, reloads the page every Refresh seconds (meta refresh).
	Refresh int
	Data    any
}

func (h *handler) page(r *http.Request, title string, data any) view {
	s := sessionOf(r)
	return view{Title: title, Caller: s.caller, CSRF: s.csrf, Data: data}
}

// fail renders err on the console's error page with its HTTP status.
func (h *handler) fail(w http.ResponseWriter, r *http.Request, caller identity.Identity, err error) {
	v := h.page(r, "Error", nil)
	v.Caller = caller
	v.Error = err.Error()
	for _, f := range apperr.Fields(err) {
		v.Error += "; " + f.Pointer + " " + f.Detail
	}
	h.render(w, httpapi.StatusOf(err), "error", v)
}

func (h *handler) render(w http.ResponseWriter, status int, name string, v view) {
	t := h.pages[name]
	var buf bytes.Buffer
	if err := t.ExecuteTemplate(&buf, "layout", v); err != nil {
		http.Error(w, "the page could not be rendered", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(buf.Len()))
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

var funcs = template.FuncMap{
	"vis":    visible,
	"when":   when,
	"ago":    ago,
	"q":      url.QueryEscape,
	"path":   url.PathEscape,
	"pretty": pretty,
	"ms":     func(n int64) string { return strconv.FormatInt(n, 10) + " ms" },
	"join":   strings.Join,
	"split":  strings.Fields,
	"states": func() []saga.State { return orders.SagaStates },
}

func parsePages() map[string]*template.Template {
	base := template.Must(template.New("layout").Funcs(funcs).ParseFS(assets, "templates/layout.html"))
	names, err := fs.Glob(assets, "templates/*.html")
	if err != nil {
		panic(err)
	}
	out := map[string]*template.Template{}
	for _, n := range names {
		name := strings.TrimSuffix(strings.TrimPrefix(n, "templates/"), ".html")
		if name == "layout" {
			continue
		}
		out[name] = template.Must(template.Must(base.Clone()).ParseFS(assets, n))
	}
	return out
}

// visible shows format and control characters (bidi overrides, zero-width
// joiners, C1 controls) as their code points, so stored text cannot
// reorder or hide what is around it; everything else is kept, and
// html/template escapes the result.
func visible(s string) string {
	if strings.IndexFunc(s, hidden) < 0 {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if hidden(r) {
			fmt.Fprintf(&b, "⟨U+%04X⟩", r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func hidden(r rune) bool {
	return unicode.Is(unicode.Cf, r) || (unicode.IsControl(r) && r != '\n' && r != '\t') || unicode.Is(unicode.Zl, r) || unicode.Is(unicode.Zp, r)
}

func when(t time.Time) string {
	if t.IsZero() {
		return "—"
	}
	return t.UTC().Format("2006-01-02 15:04:05Z")
}

func ago(d time.Duration) string {
	if d <= 0 {
		return "—"
	}
	return d.Round(time.Second).String()
}

// pretty indents JSON for a <pre> (the text is escaped by the template).
func pretty(raw json.RawMessage) string {
	var buf bytes.Buffer
	if json.Indent(&buf, raw, "", "  ") != nil {
		return string(raw)
	}
	return buf.String()
}
