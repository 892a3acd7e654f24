package httpapi

import (
	"context"
	"log/slog"
	"mime"
	"net/http"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"

	"ordersaga/shared/app/orders"
	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/idempotency"
	"ordersaga/shared/domain/order"
	"ordersaga/shared/kit/text"
	"ordersaga/shared/kit/validate"
	"ordersaga/shared/transport/identity"
)

// Orders is what the HTTP transport needs from the order use cases.
type Orders interface {
	Create(ctx context.Context, cmd orders.CreateCommand) (orders.Response, error)
	Get(ctx context.Context, caller identity.Identity, id string) (orders.View, error)
}

var _ Orders = (*orders.Service)(nil)

// Config configures the HTTP API (New): its collaborators and hooks.
type Config struct {
	// Orders serves the /orders routes (required to serve them).
	Orders Orders
	// Auth resolves the caller of every route (required).
	Auth identity.Authenticator
	// Log receives request failures (default slog.Default()).
	Log *slog.Logger
	// Admin mounts the /admin routes when set.
	Admin http.Handler
	// OnRequest observes every request: route pattern, status and duration.
	OnRequest func(route string, status int, took time.Duration)
	// RequestID returns the platform request id for correlation ("" if none).
	RequestID func(r *http.Request) string
}

// New returns the HTTP API. Routes are those of terraform/api/openapi.yaml.
// It fails (apperr.Invalid, naming the field) without an Authenticator.
func New(cfg Config) (http.Handler, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg.setDefaults()
	h := &handler{d: cfg}
	rt := &Router{}
	rt.HandleFunc("POST /orders", h.createOrder)
	rt.HandleFunc("GET /orders/{id}", h.getOrder)
	if cfg.Admin != nil {
		for _, m := range []string{"GET", "POST", "PUT", "DELETE"} {
			rt.Handle(m+" /admin/{rest...}", cfg.Admin)
		}
	}
	return h.wrap(rt), nil
}

// Validate reports what New would refuse: a Config without Auth. Errors
// are apperr.Invalid and name the field.
func (c Config) Validate() error {
	var p validate.Problems
	p.Require(c.Auth != nil, "Auth")
	return p.Err("httpapi.New")
}

// setDefaults gives each zero field of c its documented default.
func (c *Config) setDefaults() {
	if c.Log == nil {
		c.Log = slog.Default()
	}
}

type handler struct{ d Config }

// statusRecorder remembers the status for metrics and logs.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (s *statusRecorder) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	return s.ResponseWriter.Write(b)
}

// wrap adds routing, panic recovery, 404/405 problems and request observation.
func (h *handler) wrap(rt *Router) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &statusRecorder{ResponseWriter: w}
		start := time.Now()
		target, pattern, allowed := rt.Match(r)
		defer func() {
			if p := recover(); p != nil {
				h.d.Log.Error("panic in HTTP handler", "panic", p, "stack", string(debug.Stack()))
				if rec.status == 0 {
					WriteError(rec, r, apperr.New(apperr.Internal, "internal error"))
				}
			}
			if h.d.OnRequest != nil {
				route := pattern
				if route == "" {
					route = "unmatched"
				}
				h.d.OnRequest(route, rec.status, time.Since(start))
			}
		}()
		switch {
		case target != nil:
			target.ServeHTTP(rec, r)
		case len(allowed) > 0:
			rec.Header().Set("Allow", strings.Join(allowed, ", "))
			WriteStatus(rec, r, http.StatusMethodNotAllowed, r.Method+" is not allowed on "+r.URL.Path)
		default:
			WriteError(rec, r, apperr.New(apperr.NotFound, "no route for %s %s", r.Method, r.URL.Path))
		}
	})
}

func (h *handler) caller(r *http.Request) (identity.Identity, error) {
	return h.d.Auth.Authenticate(r)
}

func (h *handler) createOrder(w http.ResponseWriter, r *http.Request) {
	caller, err := h.caller(r)
	if err != nil {
		WriteError(w, r, err)
		return
	}
	if ct := r.Header.Get("Content-Type"); ct != "" {
		mt, _, perr := mime.ParseMediaType(ct)
		if perr != nil || (mt != "application/json" && !strings.HasSuffix(mt, "+json")) {
			WriteStatus(w, r, http.StatusUnsupportedMediaType, "send the order as application/json")
			return
		}
	}
	key, err := idempotencyKey(r)
	if err != nil {
		WriteError(w, r, err)
		return
	}
	if r.ContentLength > order.MaxBodyBytes {
		WriteError(w, r, apperr.New(apperr.TooLarge, "request body exceeds %d bytes", order.MaxBodyBytes))
		return
	}
	req, err := order.DecodeRequest(r.Body)
	if err != nil {
		WriteError(w, r, err)
		return
	}
	reqID := ""
	if h.d.RequestID != nil {
		reqID = h.d.RequestID(r)
	}
	// The request id becomes the correlation_id attribute of the order's
	// messages; one the queue would refuse is dropped (the key stands in).
	if len(reqID) > maxRequestID || !text.Printable(reqID) {
		reqID = ""
	}
	resp, err := h.d.Orders.Create(r.Context(), orders.CreateCommand{Caller: caller, Key: key, Request: req, RequestID: reqID})
	if err != nil {
		switch status := StatusFor(r, err); {
		case status == StatusClientClosedRequest:
			// The client is gone, not the server broken: a retry with the
			// same Idempotency-Key gets whatever was committed.
			h.d.Log.Info("create order: client closed the request", "idempotency_key", key, "error", err)
		case status >= 500:
			h.d.Log.Error("create order failed", "idempotency_key", key, "error", err)
		}
		WriteError(w, r, err)
		return
	}
	if resp.Location != "" {
		w.Header().Set("Location", resp.Location)
	}
	if resp.Replayed {
		w.Header().Set("Idempotent-Replayed", "true")
	}
	h.d.Log.Info("order accepted", "idempotency_key", key, "order_id", resp.OrderID, "saga_id", resp.SagaID,
		"replayed", resp.Replayed, "request_id", reqID, "caller", caller.Subject)
	// The stored body (replayed byte for byte) ends in a newline on the
	// wire, as every JSON body here does; the copy leaves it untouched.
	writeRaw(w, resp.Status, append(slices.Clip(resp.Body), '\n'))
}

// maxRequestID bounds the platform request id copied into message attributes.
const maxRequestID = 128

// idempotencyKey reads the Idempotency-Key header. The draft defines it as a
// structured-field string ("..."); a bare token is accepted too.
func idempotencyKey(r *http.Request) (string, error) {
	vals := r.Header.Values("Idempotency-Key")
	if len(vals) > 1 {
		return "", apperr.New(apperr.Invalid, "send exactly one Idempotency-Key header")
	}
	key := ""
	if len(vals) == 1 {
		key = vals[0]
	}
	if len(key) >= 2 && key[0] == '"' && key[len(key)-1] == '"' {
		key = key[1 : len(key)-1]
	}
	if err := idempotency.ValidateKey(key); err != nil {
		return "", err
	}
	return key, nil
}

func (h *handler) getOrder(w http.ResponseWriter, r *http.Request) {
	caller, err := h.caller(r)
	if err != nil {
		WriteError(w, r, err)
		return
	}
	id := r.PathValue("id")
	if id == "" || len(id) > 64 {
		WriteError(w, r, apperr.New(apperr.NotFound, "order %q not found", id))
		return
	}
	v, err := h.d.Orders.Get(r.Context(), caller, id)
	if err != nil {
		WriteError(w, r, err)
		return
	}
	w.Header().Set("ETag", `"`+strconv.FormatInt(v.Version, 10)+`"`)
	WriteJSON(w, http.StatusOK, v)
}
