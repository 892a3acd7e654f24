package yc

import (
	"encoding/base64"
	"errors"
	"io"
	"mime"
	"net"
	"net/http"
	"unicode/utf8"

	"ordersaga/shared/domain/apperr"
)

// NewHTTPRequestEvent builds the payload-1.0 event the platform would send
// for r, reading at most maxBody bytes of its body; the local runner uses it
// to call a function through the same event path as in the cloud. As on the
// platform, the body is base64-encoded unless the media type is
// application/json (parameters such as charset ignored) and it is valid UTF-8. Resource, PathParameters,
// OperationID, RequestID and Authorizer are left for the caller to fill.
// A path, query or header value that is not valid UTF-8 is refused before
// anything is converted: encoding the event as JSON would turn its bytes
// into U+FFFD, so two different requests ("k\xff", "k\xfe") would become
// one. Errors: apperr.Invalid for such text, apperr.TooLarge when the body
// exceeds maxBody, apperr.Transient when reading the body fails
// (httpapi.WriteError answers each in the API's problem+json shape).
func NewHTTPRequestEvent(r *http.Request, maxBody int64) (HTTPRequest, error) {
	if err := checkRequestText(r); err != nil {
		return HTTPRequest{}, err
	}
	var body []byte
	if r.Body != nil {
		b, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
		if err != nil {
			return HTTPRequest{}, apperr.Wrap(apperr.Transient, err, "read request body")
		}
		if int64(len(b)) > maxBody {
			return HTTPRequest{}, apperr.New(apperr.TooLarge, "request body exceeds %d bytes", maxBody)
		}
		body = b
	}
	ev := HTTPRequest{
		Version:    "1.0",
		Path:       r.URL.Path,
		HTTPMethod: r.Method,
	}
	header := r.Header.Clone()
	if r.Host != "" {
		header.Set("Host", r.Host)
	}
	ev.Headers, ev.MultiValueHeaders = splitMulti(header)
	ev.QueryStringParameters, ev.MultiValueQueryStringParameters = splitMulti(r.URL.Query())
	ev.RequestContext.Identity.UserAgent = r.UserAgent()
	if host, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		ev.RequestContext.Identity.SourceIP = host
	}
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if mt == "application/json" && utf8.Valid(body) {
		ev.Body = string(body)
	} else {
		ev.Body = base64.StdEncoding.EncodeToString(body)
		ev.IsBase64Encoded = true
	}
	return ev, nil
}

// checkRequestText reports the first path, query or header text of r that
// is not valid UTF-8 (naming where, never echoing it).
func checkRequestText(r *http.Request) error {
	refuse := func(where string) error {
		return apperr.New(apperr.Invalid, "the request's %s is not valid UTF-8; text is refused, never rewritten", where)
	}
	if !utf8.ValidString(r.URL.Path) {
		return refuse("path")
	}
	for k, vs := range r.URL.Query() {
		if !utf8.ValidString(k) {
			return refuse("query")
		}
		for _, v := range vs {
			if !utf8.ValidString(v) {
				return refuse("query parameter " + k)
			}
		}
	}
	for k, vs := range r.Header {
		for _, v := range vs {
			if !utf8.ValidString(v) {
				return refuse(k + " header")
			}
		}
	}
	return nil
}

// splitMulti returns the last-value and all-values forms of m (nil when empty).
func splitMulti(m map[string][]string) (map[string]string, map[string][]string) {
	if len(m) == 0 {
		return nil, nil
	}
	single := make(map[string]string, len(m))
	multi := make(map[string][]string, len(m))
	for k, vs := range m {
		if len(vs) == 0 {
			continue
		}
		single[k] = vs[len(vs)-1]
		multi[k] = append([]string(nil), vs...)
	}
	return single, multi
}

// WriteHTTPResponse writes a function's platform response to w as the
// platform would (MultiValueHeaders wins over Headers, base64 bodies are
// decoded, no body for 1xx/204/304). The error is apperr.Invalid for a response the platform would
// reject with 502 (status outside 100..599, bad base64) and apperr.Transient
// when writing to w fails.
func WriteHTTPResponse(w http.ResponseWriter, resp HTTPResponse) error {
	if resp.StatusCode < 100 || resp.StatusCode > 599 {
		return apperr.New(apperr.Invalid, "http response: invalid statusCode %d", resp.StatusCode)
	}
	body, err := resp.BodyBytes()
	if err != nil {
		return err
	}
	for k, vs := range resp.Header() {
		w.Header()[k] = vs
	}
	w.WriteHeader(resp.StatusCode)
	if !bodyAllowed(resp.StatusCode) {
		return nil
	}
	if _, err := w.Write(body); err != nil && !errors.Is(err, http.ErrBodyNotAllowed) {
		return apperr.Wrap(apperr.Transient, err, "write http response")
	}
	return nil
}

// bodyAllowed reports whether a response with status may carry a body.
func bodyAllowed(status int) bool {
	return status >= 200 && status != http.StatusNoContent && status != http.StatusNotModified
}
