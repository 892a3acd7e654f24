// Package httpapi is the HTTP transport of ordersaga: routes, caller
// identity, Idempotency-Key handling and RFC 9457 problem+json errors. The
// same handler serves the API Gateway (through package yc) and the local runner.
package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"

	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/idempotency"
)

// Problem is an RFC 9457 problem details object.
type Problem struct {
	Type     string              `json:"type"`
	Title    string              `json:"title"`
	Status   int                 `json:"status"`
	Detail   string              `json:"detail,omitempty"`
	Instance string              `json:"instance,omitempty"`
	Errors   []apperr.FieldError `json:"errors,omitempty"`
}

// problemBase prefixes problem type URIs. They are URNs on purpose: stable
// identifiers that do not pretend to be dereferenceable documentation
// (RFC 9457 §3.1.1); the "Problem types" table of docs/api.md explains each.
const problemBase = "urn:ordersaga:problem:"

// StatusClientClosedRequest (499, nginx's "client closed request") answers a
// request whose client gave up before the answer: its context was canceled
// and the work failed because of it. It is a 4xx on purpose, counted apart
// from the server's failures: the 5xx rate and the alerts on it mean the
// server failed.
const StatusClientClosedRequest = 499

// StatusFor maps an error met while serving r to its HTTP status: 499 when
// the error comes from r's own context having been canceled (the client
// went away), otherwise StatusOf(err). A cancellation r did not see (a
// dependency's own) and a deadline stay the server's failures (503).
func StatusFor(r *http.Request, err error) int {
	if errors.Is(err, context.Canceled) && errors.Is(r.Context().Err(), context.Canceled) {
		return StatusClientClosedRequest
	}
	return StatusOf(err)
}

// StatusOf maps an error to its HTTP status: the one place that does so
// (StatusFor adds the request's own cancellation).
func StatusOf(err error) int {
	switch {
	case errors.Is(err, idempotency.ErrFingerprintMismatch):
		return http.StatusUnprocessableEntity
	case errors.Is(err, idempotency.ErrInProgress):
		return http.StatusConflict
	}
	switch apperr.KindOf(err) {
	case apperr.Invalid:
		return http.StatusBadRequest
	case apperr.NotFound:
		return http.StatusNotFound
	case apperr.Conflict:
		return http.StatusConflict
	case apperr.Transient:
		return http.StatusServiceUnavailable
	case apperr.Rejected:
		return http.StatusUnprocessableEntity
	case apperr.Unauthenticated:
		return http.StatusUnauthorized
	case apperr.Forbidden:
		return http.StatusForbidden
	case apperr.TooLarge:
		return http.StatusRequestEntityTooLarge
	default:
		return http.StatusInternalServerError
	}
}

func problemType(err error, status int) string {
	switch {
	case errors.Is(err, idempotency.ErrFingerprintMismatch):
		return problemBase + "idempotency-key-reused"
	case errors.Is(err, idempotency.ErrInProgress):
		return problemBase + "idempotency-key-in-progress"
	}
	switch status {
	case 400:
		return problemBase + "invalid-request"
	case 401:
		return problemBase + "unauthenticated"
	case 403:
		return problemBase + "forbidden"
	case 404:
		return problemBase + "not-found"
	case 405:
		return problemBase + "method-not-allowed"
	case 413:
		return problemBase + "too-large"
	case 415:
		return problemBase + "unsupported-media-type"
	case 503:
		return problemBase + "unavailable"
	case StatusClientClosedRequest:
		return problemBase + "client-closed-request"
	}
	return "about:blank"
}

// WriteError writes err as problem+json. Internal errors never leak their text.
func WriteError(w http.ResponseWriter, r *http.Request, err error) {
	status := StatusFor(r, err)
	switch status {
	case http.StatusConflict:
		if errors.Is(err, idempotency.ErrInProgress) {
			w.Header().Set("Retry-After", "1")
		}
	case http.StatusServiceUnavailable:
		w.Header().Set("Retry-After", "1")
	case http.StatusUnauthorized:
		w.Header().Set("WWW-Authenticate", `Bearer realm="ordersaga"`)
	}
	writeProblem(w, problemFor(err, status, r.URL.Path))
}

// ProblemBody returns the status and the problem+json body WriteError
// writes for err at path instance, for answers built without a
// ResponseWriter (an API Gateway response). Retry-After and
// WWW-Authenticate are the caller's to add.
func ProblemBody(err error, instance string) (int, []byte) {
	p := problemFor(err, StatusOf(err), instance)
	return p.Status, encodeProblem(p)
}

// WriteStatus writes a problem+json for a status no error kind maps to
// (405, 415), in the shape WriteError uses.
func WriteStatus(w http.ResponseWriter, r *http.Request, status int, detail string) {
	writeProblem(w, Problem{Type: problemType(nil, status), Title: http.StatusText(status), Status: status,
		Detail: detail, Instance: r.URL.Path})
}

func problemFor(err error, status int, instance string) Problem {
	title := http.StatusText(status)
	if status == StatusClientClosedRequest {
		title = "Client Closed Request"
	}
	return Problem{
		Type:     problemType(err, status),
		Title:    title,
		Status:   status,
		Detail:   apperr.Message(err),
		Instance: instance,
		Errors:   apperr.Fields(err),
	}
}

// encodeProblem encodes p, ending in a newline like every JSON body here.
func encodeProblem(p Problem) []byte {
	body, _ := json.Marshal(p) // strings, ints and FieldErrors always encode
	return append(body, '\n')
}

func writeProblem(w http.ResponseWriter, p Problem) {
	body := encodeProblem(p)
	w.Header().Set("Content-Type", "application/problem+json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(p.Status)
	_, _ = w.Write(body)
}

// WriteJSON writes v as application/json with status, ending the body in a
// newline (so a terminal shows the prompt on its own line).
func WriteJSON(w http.ResponseWriter, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		status, body = 500, []byte(`{"type":"about:blank","title":"Internal Server Error","status":500}`)
	}
	writeRaw(w, status, append(body, '\n'))
}

func writeRaw(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}
