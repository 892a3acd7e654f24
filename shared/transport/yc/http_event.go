package yc

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/kit/jsonstrict"
)

// HTTPRequest is the JSON event of an HTTP invocation: API Gateway
// cloud_functions integration with payload_format_version "1.0" (AWS API
// Gateway v1.0 compatible) or a direct HTTP call of the function (which has
// no path/resource). Platform-notes §1.8, §3.1.
type HTTPRequest struct {
	// Version is the payload format version ("1.0"); empty on direct calls.
	Version string `json:"version,omitempty"`
	// Resource is the OpenAPI path template that matched, e.g. "/orders/{id}".
	Resource string `json:"resource,omitempty"`
	// Path is the actual request path.
	Path string `json:"path,omitempty"`
	// HTTPMethod is the request method; required.
	HTTPMethod string `json:"httpMethod"`
	// Headers holds the last value of each header.
	Headers map[string]string `json:"headers,omitempty"`
	// MultiValueHeaders holds all values of each header; it wins over Headers.
	MultiValueHeaders map[string][]string `json:"multiValueHeaders,omitempty"`
	// QueryStringParameters holds the last value of each query parameter.
	QueryStringParameters map[string]string `json:"queryStringParameters,omitempty"`
	// MultiValueQueryStringParameters holds all values of each query
	// parameter; it wins over QueryStringParameters.
	MultiValueQueryStringParameters map[string][]string `json:"multiValueQueryStringParameters,omitempty"`
	// PathParameters are the values of the path template's parameters.
	PathParameters map[string]string `json:"pathParameters,omitempty"`
	// OperationID is the OpenAPI operationId that matched (Yandex extension).
	OperationID string `json:"operationId,omitempty"`
	// RequestContext describes the invocation.
	RequestContext HTTPRequestContext `json:"requestContext"`
	// Body is the request body, base64 when IsBase64Encoded.
	Body string `json:"body"`
	// IsBase64Encoded reports whether Body is base64 (the platform encodes
	// every body whose Content-Type is not application/json).
	IsBase64Encoded bool `json:"isBase64Encoded"`
}

// HTTPRequestContext is HTTPRequest.requestContext. Other documented fields
// (requestTime, apiGateway, websocket fields) are ignored.
type HTTPRequestContext struct {
	// RequestID is the router-generated request id.
	RequestID string `json:"requestId,omitempty"`
	// Identity describes the caller's connection.
	Identity HTTPIdentity `json:"identity"`
	// Authorizer is the context returned by the gateway's authorizer
	// (function authorizer "context", or "jwt": {claims, scopes}); nil when
	// the route has no authorizer. JSON numbers are decoded as json.Number.
	Authorizer map[string]any `json:"authorizer,omitempty"`
}

// HTTPIdentity is requestContext.identity.
type HTTPIdentity struct {
	// SourceIP is the client address.
	SourceIP string `json:"sourceIp,omitempty"`
	// UserAgent is the client's User-Agent header.
	UserAgent string `json:"userAgent,omitempty"`
}

const httpWhat = "http event"

// DecodeHTTPRequest decodes an HTTP invocation event and checks that
// httpMethod is a valid method token. JSON numbers inside the authorizer
// context are kept as json.Number. An event holding text the JSON decoder
// would rewrite to U+FFFD (bytes that are not UTF-8, say in a header, or
// the escape of a lone surrogate, say in a JSON body) is refused before any
// decoding: two different requests must not become one (jsonstrict.Rewritten).
// Errors are apperr.Invalid.
func DecodeHTTPRequest(raw []byte) (HTTPRequest, error) {
	if _, detail := jsonstrict.Rewritten(raw); detail != "" {
		return HTTPRequest{}, apperr.New(apperr.Invalid,
			"%s: the request %s of the event; text is refused, never rewritten", httpWhat, detail)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var ev HTTPRequest
	if err := dec.Decode(&ev); err != nil {
		if errors.Is(err, io.EOF) {
			return HTTPRequest{}, apperr.New(apperr.Invalid, "%s: empty input", httpWhat)
		}
		return HTTPRequest{}, decodeError(httpWhat, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return HTTPRequest{}, apperr.New(apperr.Invalid, "%s: trailing data after the JSON object", httpWhat)
	}
	if err := checkMethod(ev.HTTPMethod); err != nil {
		return HTTPRequest{}, err
	}
	return ev, nil
}

func checkMethod(m string) error {
	if m == "" {
		return invalidField(httpWhat, "/httpMethod", "required")
	}
	for i := 0; i < len(m); i++ {
		if !isTokenChar(m[i]) {
			return invalidField(httpWhat, "/httpMethod", "not a valid HTTP method")
		}
	}
	return nil
}

// isTokenChar reports whether c is an RFC 9110 tchar.
func isTokenChar(c byte) bool {
	return c < 0x80 && (c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0)
}

// ToHTTPRequest builds the server-side *http.Request that ev describes: method,
// path and query (multi-value forms win), headers (Host moves to r.Host),
// RemoteAddr from the source IP, and the body (base64-decoded when
// IsBase64Encoded). r's context is ctx carrying the event (EventFromContext)
// and the authorizer context (AuthorizerFromContext). Errors are
// apperr.Invalid (bad method, bad base64 body).
func ToHTTPRequest(ctx context.Context, ev HTTPRequest) (*http.Request, error) {
	if err := checkMethod(ev.HTTPMethod); err != nil {
		return nil, err
	}
	body := []byte(ev.Body)
	if ev.IsBase64Encoded {
		b, err := decodeBase64(ev.Body)
		if err != nil {
			return nil, apperr.Invalidf([]apperr.FieldError{{Pointer: "/body", Detail: "not valid base64"}},
				"%s: body: isBase64Encoded is true but body is not valid base64", httpWhat)
		}
		body = b
	}
	path := ev.Path
	if !strings.HasPrefix(path, "/") {
		path = "/" + path
	}
	query := url.Values(mergeMulti(ev.MultiValueQueryStringParameters, ev.QueryStringParameters, false))
	u := &url.URL{Path: path, RawQuery: query.Encode()}
	header := http.Header(mergeMulti(ev.MultiValueHeaders, ev.Headers, true))
	if header.Get("User-Agent") == "" && ev.RequestContext.Identity.UserAgent != "" {
		header.Set("User-Agent", ev.RequestContext.Identity.UserAgent)
	}
	host := header.Get("Host")
	header.Del("Host")

	ctx = context.WithValue(ctx, eventKey, ev)
	if ev.RequestContext.Authorizer != nil {
		ctx = WithAuthorizer(ctx, ev.RequestContext.Authorizer)
	}
	r := (&http.Request{
		Method:        ev.HTTPMethod,
		URL:           u,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        header,
		Body:          http.NoBody,
		ContentLength: int64(len(body)),
		Host:          host,
		RequestURI:    u.RequestURI(),
	}).WithContext(ctx)
	if len(body) > 0 {
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	}
	if ip := ev.RequestContext.Identity.SourceIP; ip != "" {
		r.RemoteAddr = net.JoinHostPort(ip, "0")
	}
	return r, nil
}

// mergeMulti merges a multi-value map with a single-value map; for a name in
// both, the multi-value entry wins. With canon, names are canonical header keys.
func mergeMulti(multi map[string][]string, single map[string]string, canon bool) map[string][]string {
	key := func(k string) string { return k }
	if canon {
		key = http.CanonicalHeaderKey
	}
	// Names are visited in sorted order, so one event always gives one
	// request: two spellings of a header ("idempotency-key" and
	// "Idempotency-Key") keep every value, in a fixed order, and the handler
	// sees (and refuses) the duplicate instead of a value chosen by map
	// iteration.
	out := make(map[string][]string, len(multi)+len(single))
	for _, k := range slices.Sorted(maps.Keys(multi)) {
		out[key(k)] = append(out[key(k)], multi[k]...)
	}
	fromMulti := make(map[string]bool, len(out))
	for k := range out {
		fromMulti[k] = true
	}
	for _, k := range slices.Sorted(maps.Keys(single)) {
		if !fromMulti[key(k)] { // multiValueHeaders wins over headers for the same name
			out[key(k)] = append(out[key(k)], single[k])
		}
	}
	return out
}

// decodeBase64 accepts padded and unpadded standard base64.
func decodeBase64(s string) ([]byte, error) {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		b, err = base64.RawStdEncoding.DecodeString(s)
	}
	return b, err
}

type ctxKey int

const (
	authorizerKey ctxKey = iota
	eventKey
)

// WithAuthorizer returns ctx carrying an authorizer context, as ToHTTPRequest
// attaches it; tests and the local runner use it to impersonate a caller.
func WithAuthorizer(ctx context.Context, authorizer map[string]any) context.Context {
	return context.WithValue(ctx, authorizerKey, authorizer)
}

// AuthorizerFromContext returns the API Gateway authorizer context attached by
// ToHTTPRequest or WithAuthorizer; ok is false when there is none.
func AuthorizerFromContext(ctx context.Context) (authorizer map[string]any, ok bool) {
	authorizer, ok = ctx.Value(authorizerKey).(map[string]any)
	return authorizer, ok && authorizer != nil
}

// EventFromContext returns the HTTP event a request was built from by
// ToHTTPRequest (e.g. for requestContext.requestId or pathParameters).
func EventFromContext(ctx context.Context) (HTTPRequest, bool) {
	ev, ok := ctx.Value(eventKey).(HTTPRequest)
	return ev, ok
}
