package adminapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"ordersaga/shared/app/redrive"
	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/kit/jsonstrict"
	"ordersaga/shared/transport/httpapi"
)

// readBody reads a JSON object body whose keys must be in allowed (each at
// most once). An empty body is an empty object unless required. Errors:
// Invalid (with field pointers), TooLarge, and 415 for a non-JSON content type.
func readBody(r *http.Request, required bool, allowed ...string) (map[string]json.RawMessage, error) {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || (mt != "application/json" && !strings.HasSuffix(mt, "+json")) {
			return nil, errUnsupportedMedia
		}
	}
	data, err := io.ReadAll(io.LimitReader(r.Body, redrive.MaxCommandBytes+1))
	if err != nil {
		return nil, apperr.Wrap(apperr.Invalid, err, "the request body could not be read")
	}
	if len(data) > redrive.MaxCommandBytes {
		return nil, apperr.New(apperr.TooLarge, "the request body exceeds %d bytes", redrive.MaxCommandBytes)
	}
	// Strict JSON at every depth (package jsonstrict): valid UTF-8 and no
	// member named twice, so no two parsers can read different values.
	if len(bytes.TrimSpace(data)) > 0 {
		if fe := jsonstrict.Check(data); fe != nil {
			return nil, apperr.Invalidf([]apperr.FieldError{*fe}, "%s", fe.Describe("the request body"))
		}
	}
	out := map[string]json.RawMessage{}
	if len(bytes.TrimSpace(data)) == 0 {
		if required {
			return nil, invalid("", "a JSON object body is required")
		}
		return out, nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, invalid("", "the body must be one JSON object")
	}
	var fields []apperr.FieldError
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, invalid("", "the body is not valid JSON")
		}
		key, _ := tok.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, invalid("", "the body is not valid JSON")
		}
		switch _, dup := out[key]; {
		case dup:
			fields = append(fields, apperr.FieldError{Pointer: "/" + key, Detail: "appears more than once"})
		case !slices.Contains(allowed, key):
			fields = append(fields, apperr.FieldError{Pointer: "/" + key,
				Detail: "unknown field (this route takes: " + strings.Join(allowed, ", ") + ")"})
		}
		out[key] = raw
	}
	if _, err := dec.Token(); err != nil {
		return nil, invalid("", "the body is not valid JSON")
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, invalid("", "the body must be exactly one JSON object, with nothing after it")
	}
	if len(fields) > 0 {
		return nil, apperr.Invalidf(fields, "invalid request body: %s", fields[0].Pointer+" "+fields[0].Detail)
	}
	return out, nil
}

func invalid(ptr, detail string) error {
	return apperr.Invalidf([]apperr.FieldError{{Pointer: ptr, Detail: detail}}, "%s", detail)
}

// errUnsupportedMedia marks a non-JSON body; writeErr answers it with 415.
var errUnsupportedMedia = errors.New("send the body as application/json")

// listParams are the query parameters of GET /admin/dlq.
var listParams = []string{"source", "status", "error_type", "order_id", "saga_id", "from", "to", "flagged", "cursor", "limit"}

// listCommand builds the list command from the query string. Field errors
// name the query parameter ("/status").
func listCommand(r *http.Request) (redrive.Command, error) {
	q := r.URL.Query()
	var fields []apperr.FieldError
	for k, vs := range q {
		switch {
		case !slices.Contains(listParams, k):
			fields = append(fields, apperr.FieldError{Pointer: "/" + k,
				Detail: "unknown query parameter (known: " + strings.Join(listParams, ", ") + ")"})
		case len(vs) > 1:
			fields = append(fields, apperr.FieldError{Pointer: "/" + k, Detail: "give it once"})
		}
	}
	cmd := redrive.Command{Action: redrive.ActionList, Source: q.Get("source"), Cursor: q.Get("cursor")}
	f := &redrive.CommandFilter{Status: q.Get("status"), ErrorType: q.Get("error_type"), OrderID: q.Get("order_id"),
		SagaID: q.Get("saga_id"), From: q.Get("from"), To: q.Get("to")}
	if v := q.Get("flagged"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			fields = append(fields, apperr.FieldError{Pointer: "/flagged", Detail: "must be true or false"})
		}
		f.Flagged = &b
	}
	if *f != (redrive.CommandFilter{}) {
		cmd.Filter = f
	}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > redrive.MaxPageLimit {
			fields = append(fields, apperr.FieldError{Pointer: "/limit", Detail: fmt.Sprintf("must be an integer between 1 and %d", redrive.MaxPageLimit)})
		}
		cmd.Limit = n
	}
	if len(fields) > 0 {
		slices.SortFunc(fields, func(a, b apperr.FieldError) int { return strings.Compare(a.Pointer, b.Pointer) })
		return redrive.Command{}, apperr.Invalidf(fields, "invalid query: %s %s", fields[0].Pointer, fields[0].Detail)
	}
	return cmd, nil
}

// auditLimit reads GET /admin/audit?limit=N.
func auditLimit(r *http.Request) (int, error) {
	q := r.URL.Query()
	for k := range q {
		if k != "limit" {
			return 0, invalid("/"+k, "unknown query parameter (known: limit)")
		}
	}
	v := q.Get("limit")
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > redrive.MaxAuditLimit {
		return 0, invalid("/limit", fmt.Sprintf("must be an integer between 1 and %d", redrive.MaxAuditLimit))
	}
	return n, nil
}

// queryErrors renames the command pointers of a list error to the query
// parameters they came from ("/filter/status" → "/status").
func queryErrors(err error) error {
	fields := apperr.Fields(err)
	if len(fields) == 0 || apperr.KindOf(err) != apperr.Invalid {
		return err
	}
	out := make([]apperr.FieldError, len(fields))
	for i, f := range fields {
		f.Pointer = "/" + strings.TrimPrefix(strings.TrimPrefix(f.Pointer, "/filter"), "/")
		out[i] = f
	}
	return apperr.Invalidf(out, "invalid query: %s %s", out[0].Pointer, out[0].Detail)
}

// writeErr writes err as problem+json (httpapi.WriteError, plus 415).
func writeErr(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, errUnsupportedMedia) {
		httpapi.WriteStatus(w, r, http.StatusUnsupportedMediaType, err.Error())
		return
	}
	httpapi.WriteError(w, r, err)
}
