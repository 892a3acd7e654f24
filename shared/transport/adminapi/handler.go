// Package adminapi is the admin HTTP API over the dead-letter use cases of
// package redrive: list, show, retry, discard, bulk retry, soft delete and
// the audit log. Every route needs an admin identity (401 without identity,
// 403 for other callers); errors are RFC 9457 problem+json. The order API
// mounts it through httpapi.Config.Admin.
package adminapi

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"

	"ordersaga/shared/app/redrive"
	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/kit/text"
	"ordersaga/shared/kit/validate"
	"ordersaga/shared/transport/httpapi"
	"ordersaga/shared/transport/identity"
)

// Routes served (see terraform/api/openapi.yaml).
const (
	RouteList      = "GET /admin/dlq"
	RouteBulkRetry = "POST /admin/dlq/bulk-retry"
	RouteShow      = "GET /admin/dlq/{id}"
	RouteDelete    = "DELETE /admin/dlq/{id}"
	RouteRetry     = "POST /admin/dlq/{id}/retry"
	RouteDiscard   = "POST /admin/dlq/{id}/discard"
	RouteAudit     = "GET /admin/audit"
)

type handler struct {
	svc     *redrive.Service
	auth    identity.Authenticator
	rt      *httpapi.Router
	stock   StockAdmin
	console http.Handler
}

type callerKey struct{}

// Config configures the admin API (New).
type Config struct {
	// Redrive serves the dead-letter routes (required).
	Redrive *redrive.Service
	// Auth resolves the caller of every route (required).
	Auth identity.Authenticator
	// Stock, when set, adds the stock routes.
	Stock StockAdmin
	// Console, when set, serves the operator console at ConsolePath and
	// below. It must authorize each request with Authorize (the same rule as
	// every admin route) and change nothing through a cookie alone.
	Console http.Handler
}

// New returns the admin API. Identity is resolved by cfg.Auth before
// routing, so unauthenticated and non-admin callers learn nothing about the
// routes. The audit actor of every change is the caller's subject. It fails
// (apperr.Invalid, naming the fields) without Redrive or Auth.
func New(cfg Config) (http.Handler, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	h := &handler{svc: cfg.Redrive, auth: cfg.Auth, rt: &httpapi.Router{}, console: cfg.Console}
	h.rt.HandleFunc(RouteList, h.list)
	h.rt.HandleFunc(RouteBulkRetry, h.bulkRetry)
	h.rt.HandleFunc(RouteShow, h.show)
	h.rt.HandleFunc(RouteDelete, h.delete)
	h.rt.HandleFunc(RouteRetry, h.retry)
	h.rt.HandleFunc(RouteDiscard, h.discard)
	h.rt.HandleFunc(RouteAudit, h.audit)
	if cfg.Stock != nil {
		h.stock = cfg.Stock
		h.rt.HandleFunc(RouteStockList, h.stockList)
		h.rt.HandleFunc(RouteStockSet, h.stockSet)
		h.rt.HandleFunc(RouteStockShards, h.stockShards)
		h.rt.HandleFunc(RouteStockRebalance, h.stockRebalance)
	}
	return h, nil
}

// Validate reports what New would refuse: a Config without Redrive or
// Auth. Errors are apperr.Invalid and name the fields.
func (c Config) Validate() error {
	var p validate.Problems
	p.Require(c.Redrive != nil, "Redrive")
	p.Require(c.Auth != nil, "Auth")
	return p.Err("adminapi.New")
}

// Authorize is the admin API's rule for every route: the caller auth
// resolves, and an admin. Errors: Unauthenticated (no valid identity),
// Forbidden (not an admin).
func Authorize(auth identity.Authenticator, r *http.Request) (identity.Identity, error) {
	caller, err := auth.Authenticate(r)
	if err != nil {
		if apperr.KindOf(err) != apperr.Unauthenticated {
			err = apperr.Wrap(apperr.Unauthenticated, err, "no valid caller identity")
		}
		return identity.Identity{}, err
	}
	if !caller.IsAdmin() {
		return identity.Identity{}, apperr.New(apperr.Forbidden, "the admin API needs an admin identity")
	}
	return caller, nil
}

// ServeHTTP authenticates, authorizes and routes.
func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h.console != nil && (r.URL.Path == ConsolePath || strings.HasPrefix(r.URL.Path, ConsolePath+"/")) {
		// The console authorizes every request itself with Authorize, after
		// reading its session cookie (see WithConsole).
		h.console.ServeHTTP(w, r)
		return
	}
	caller, err := Authorize(h.auth, r)
	if err != nil {
		writeErr(w, r, err)
		return
	}
	target, _, allowed := h.rt.Match(r)
	switch {
	case target != nil:
		target.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), callerKey{}, caller)))
	case len(allowed) > 0:
		w.Header().Set("Allow", strings.Join(allowed, ", "))
		httpapi.WriteStatus(w, r, http.StatusMethodNotAllowed, r.Method+" is not allowed on "+r.URL.Path)
	default:
		writeErr(w, r, apperr.New(apperr.NotFound, "no admin route for %s %s", r.Method, r.URL.Path))
	}
}

func actor(r *http.Request) string {
	c, _ := r.Context().Value(callerKey{}).(identity.Identity)
	return c.Subject
}

// pathID returns the {id} path value; a malformed id names no entry (404).
func pathID(r *http.Request) (string, error) {
	id := r.PathValue("id")
	if !redrive.ValidID(id) {
		return "", apperr.New(apperr.NotFound, "dead letter %q not found", text.Cut(id, 64))
	}
	return id, nil
}

func (h *handler) list(w http.ResponseWriter, r *http.Request) {
	cmd, err := listCommand(r)
	if err == nil {
		var out any
		out, err = h.svc.Execute(r.Context(), cmd)
		if err == nil {
			httpapi.WriteJSON(w, http.StatusOK, out)
			return
		}
	}
	writeErr(w, r, queryErrors(err))
}

func (h *handler) show(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r)
	if err != nil {
		writeErr(w, r, err)
		return
	}
	d, err := h.svc.Show(r.Context(), id)
	if err != nil {
		writeErr(w, r, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, d)
}

// retry redrives one entry. 200 with the report when it was (or, dry run,
// would be) redriven; 409 when it is not eligible (not open, flagged without
// force, its saga or outbox row moved on) or the redrive failed for a
// lasting reason; 503 when it failed for a passing one.
func (h *handler) retry(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r)
	if err != nil {
		writeErr(w, r, err)
		return
	}
	body, err := readBody(r, false, "dry_run", "force")
	if err != nil {
		writeErr(w, r, err)
		return
	}
	body["action"], body["actor"], body["ids"] = jsonOf(redrive.ActionRedrive), jsonOf(actor(r)), jsonOf([]string{id})
	rep, err := h.run(r, body)
	if err != nil {
		writeErr(w, r, err)
		return
	}
	report := rep.(redrive.Report)
	if len(report.Items) == 1 {
		it := report.Items[0]
		switch it.Outcome {
		case redrive.OutcomeSkipped:
			writeErr(w, r, apperr.New(apperr.Conflict, "dead letter %s was not redriven: %s", id, it.Reason))
			return
		case redrive.OutcomeFailed:
			kind := apperr.Conflict
			if apperr.Retryable(it.Err()) {
				kind = apperr.Transient
			}
			writeErr(w, r, apperr.New(kind, "redrive of dead letter %s failed: %s", id, it.Reason))
			return
		}
	}
	httpapi.WriteJSON(w, http.StatusOK, report)
}

func (h *handler) bulkRetry(w http.ResponseWriter, r *http.Request) {
	body, err := readBody(r, true, "ids", "filter", "all", "source", "max", "rate_per_sec", "dry_run", "force", "reason")
	if err != nil {
		writeErr(w, r, err)
		return
	}
	body["action"], body["actor"] = jsonOf(redrive.ActionRedrive), jsonOf(actor(r))
	rep, err := h.run(r, body)
	if err != nil {
		writeErr(w, r, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, rep)
}

func (h *handler) discard(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r)
	if err != nil {
		writeErr(w, r, err)
		return
	}
	body, err := readBody(r, true, "reason")
	if err != nil {
		writeErr(w, r, err)
		return
	}
	body["action"], body["actor"], body["ids"] = jsonOf(redrive.ActionDiscard), jsonOf(actor(r)), jsonOf([]string{id})
	rep, err := h.run(r, body)
	if err != nil {
		writeErr(w, r, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, rep)
}

// delete is the soft delete: the entry is discarded and kept, and audited as deleted.
func (h *handler) delete(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r)
	if err != nil {
		writeErr(w, r, err)
		return
	}
	rep, err := h.svc.Delete(r.Context(), actor(r), id)
	if err != nil {
		writeErr(w, r, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, rep)
}

func (h *handler) audit(w http.ResponseWriter, r *http.Request) {
	limit, err := auditLimit(r)
	if err != nil {
		writeErr(w, r, err)
		return
	}
	recs, err := h.svc.RecentAudit(r.Context(), limit)
	if err != nil {
		writeErr(w, r, queryErrors(err))
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, map[string]any{"audit": recs})
}

// run decodes the assembled command with the service's rules and executes it.
func (h *handler) run(r *http.Request, body map[string]json.RawMessage) (any, error) {
	raw, err := json.Marshal(body)
	if err != nil {
		return nil, apperr.Wrap(apperr.Invalid, err, "the request body cannot be re-encoded")
	}
	cmd, err := h.svc.DecodeCommand(raw)
	if err != nil {
		return nil, err
	}
	return h.svc.Execute(r.Context(), cmd)
}

func jsonOf(v any) json.RawMessage {
	b, _ := json.Marshal(v) // strings and string slices always encode
	return b
}
