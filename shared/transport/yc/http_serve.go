package yc

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"unicode/utf8"

	"ordersaga/shared/domain/apperr"
)

// HTTPResponse is the JSON a function returns for an HTTP invocation
// (platform-notes §1.8). For a header present in both maps the platform uses
// MultiValueHeaders. A malformed response becomes a 502 at the platform.
type HTTPResponse struct {
	// StatusCode is the HTTP status.
	StatusCode int `json:"statusCode"`
	// Headers holds single-valued headers.
	Headers map[string]string `json:"headers,omitempty"`
	// MultiValueHeaders holds headers with several values (e.g. Set-Cookie).
	MultiValueHeaders map[string][]string `json:"multiValueHeaders,omitempty"`
	// Body is the response body, base64 when IsBase64Encoded.
	Body string `json:"body"`
	// IsBase64Encoded reports whether Body is base64.
	IsBase64Encoded bool `json:"isBase64Encoded"`
}

// Header returns the response headers as the platform applies them:
// MultiValueHeaders wins over Headers for the same (canonical) name.
func (r HTTPResponse) Header() http.Header {
	return http.Header(mergeMulti(r.MultiValueHeaders, r.Headers, true))
}

// BodyBytes returns the decoded body. The error is apperr.Invalid when
// IsBase64Encoded is set and Body is not base64.
func (r HTTPResponse) BodyBytes() ([]byte, error) {
	if !r.IsBase64Encoded {
		return []byte(r.Body), nil
	}
	b, err := decodeBase64(r.Body)
	if err != nil {
		return nil, apperr.Wrap(apperr.Invalid, err, "http response: body is not valid base64")
	}
	return b, nil
}

// ServeEvent decodes the HTTP invocation event raw, runs h against it in
// memory and returns the platform response. Mirroring net/http's server,
// headers are captured when the status is written, Content-Type is sniffed
// when unset, HEAD responses and 1xx/204/304 carry no body, and a handler
// that writes nothing yields 200. The body is returned as text when it is
// valid UTF-8 and base64-encoded otherwise; multi-value headers are kept.
// A malformed event is apperr.Invalid; panics in h propagate.
func ServeEvent(h http.Handler, ctx context.Context, raw []byte) (HTTPResponse, error) {
	ev, err := DecodeHTTPRequest(raw)
	if err != nil {
		return HTTPResponse{}, err
	}
	r, err := ToHTTPRequest(ctx, ev)
	if err != nil {
		return HTTPResponse{}, err
	}
	w := &recorder{header: make(http.Header), head: r.Method == http.MethodHead}
	h.ServeHTTP(w, r)
	return w.result(), nil
}

// recorder is a minimal in-memory http.ResponseWriter.
type recorder struct {
	header http.Header
	sent   http.Header // snapshot of header taken when the status is written
	status int
	body   bytes.Buffer
	head   bool
}

var (
	_ http.ResponseWriter = (*recorder)(nil)
	_ http.Flusher        = (*recorder)(nil)
)

// Header implements http.ResponseWriter.
func (w *recorder) Header() http.Header { return w.header }

// WriteHeader implements http.ResponseWriter. Informational (1xx) statuses
// are not forwarded by the platform and are ignored; later calls are no-ops.
func (w *recorder) WriteHeader(code int) {
	if code < 100 || code > 999 {
		// Same contract as net/http's server.
		panic(fmt.Sprintf("invalid WriteHeader code %v", code))
	}
	if w.status != 0 || code < 200 {
		return
	}
	w.status = code
	w.sent = w.header.Clone()
}

// Write implements http.ResponseWriter.
func (w *recorder) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.WriteHeader(http.StatusOK)
	}
	if !bodyAllowed(w.status) {
		return 0, http.ErrBodyNotAllowed
	}
	if w.head {
		return len(p), nil
	}
	return w.body.Write(p)
}

// Flush implements http.Flusher; the body is buffered in full anyway.
func (w *recorder) Flush() {
	if w.status == 0 {
		w.WriteHeader(http.StatusOK)
	}
}

func (w *recorder) result() HTTPResponse {
	if w.status == 0 {
		w.WriteHeader(http.StatusOK)
	}
	body := w.body.Bytes()
	sent := w.sent
	if _, ok := sent["Content-Type"]; !ok && len(body) > 0 {
		sent.Set("Content-Type", http.DetectContentType(body))
	}
	resp := HTTPResponse{StatusCode: w.status}
	for k, vs := range sent {
		switch len(vs) {
		case 0:
		case 1:
			if resp.Headers == nil {
				resp.Headers = make(map[string]string)
			}
			resp.Headers[k] = vs[0]
		default:
			if resp.MultiValueHeaders == nil {
				resp.MultiValueHeaders = make(map[string][]string)
			}
			resp.MultiValueHeaders[k] = append([]string(nil), vs...)
		}
	}
	if utf8.Valid(body) {
		resp.Body = string(body)
	} else {
		resp.Body = base64.StdEncoding.EncodeToString(body)
		resp.IsBase64Encoded = true
	}
	return resp
}
