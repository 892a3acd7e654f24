package yc

import (
	"context"
	"encoding/json"
	"io"
	"reflect"
	"testing"
)

func TestDecodeHTTPRequestSamples(t *testing.T) {
	ev, err := DecodeHTTPRequest(mustRead(t, "apigw_v1_authorizer_base64.json"))
	if err != nil {
		t.Fatal(err)
	}
	if ev.HTTPMethod != "POST" || ev.Path != "/orders" || ev.Resource != "/orders" || ev.OperationID != "createOrder" ||
		!ev.IsBase64Encoded || ev.RequestContext.RequestID != "0f4b8a3c-2d1e-4f5a-9b8c-7d6e5f4a3b2c" ||
		ev.RequestContext.Identity != (HTTPIdentity{SourceIP: "203.0.113.7", UserAgent: "curl/8.5.0"}) {
		t.Fatalf("decoded %+v", ev)
	}
	// Large integers in the authorizer context survive as json.Number.
	if got := ev.RequestContext.Authorizer["tier"]; got != json.Number("12345678901234567") {
		t.Fatalf("authorizer tier = %#v", got)
	}

	ev, err = DecodeHTTPRequest(mustRead(t, "apigw_v1_jwt_get.json"))
	if err != nil {
		t.Fatal(err)
	}
	if ev.PathParameters["id"] != "ord-7" || ev.Resource != "/orders/{id}" || ev.IsBase64Encoded {
		t.Fatalf("decoded %+v", ev)
	}
	jwt, _ := ev.RequestContext.Authorizer["jwt"].(map[string]any)
	claims, _ := jwt["claims"].(map[string]any)
	if claims["sub"] != "cust-42" {
		t.Fatalf("jwt claims = %#v", ev.RequestContext.Authorizer)
	}
}

func TestDecodeHTTPRequestMalformed(t *testing.T) {
	tests := []struct {
		name, raw, pointer string
	}{
		{"empty", ``, ""},
		{"not json", `<html>`, ""},
		{"trailing data", `{"httpMethod":"GET"} {}`, ""},
		{"array", `[1]`, "/"},
		{"null", `null`, "/httpMethod"},
		{"no method", `{"path":"/"}`, "/httpMethod"},
		{"method with space", `{"httpMethod":"GET /"}`, "/httpMethod"},
		{"method number", `{"httpMethod":1}`, "/httpMethod"},
		{"headers string", `{"httpMethod":"GET","headers":"a"}`, "/headers"},
		{"multi header not list", `{"httpMethod":"GET","multiValueHeaders":{"A":"b"}}`, "/multiValueHeaders"},
		{"query number", `{"httpMethod":"GET","queryStringParameters":{"a":1}}`, "/queryStringParameters"},
		{"base64 flag string", `{"httpMethod":"GET","isBase64Encoded":"true"}`, "/isBase64Encoded"},
		{"body object", `{"httpMethod":"POST","body":{"a":1}}`, "/body"},
		{"authorizer string", `{"httpMethod":"GET","requestContext":{"authorizer":"x"}}`, "/requestContext/authorizer"},
		{"identity array", `{"httpMethod":"GET","requestContext":{"identity":[]}}`, "/requestContext/identity"},
		// Text the decoder would rewrite to U+FFFD is refused, wherever it is.
		{"header not utf-8", "{\"httpMethod\":\"POST\",\"headers\":{\"Idempotency-Key\":\"k\xff\"}}", ""},
		{"header lone surrogate", `{"httpMethod":"POST","headers":{"Idempotency-Key":"k\ud800"}}`, ""},
		{"body not utf-8", "{\"httpMethod\":\"POST\",\"body\":\"{\xfe}\"}", ""},
		{"body lone surrogate", `{"httpMethod":"POST","body":"\udc00"}`, ""},
		{"query not utf-8", "{\"httpMethod\":\"GET\",\"queryStringParameters\":{\"a\":\"\xc3\"}}", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := DecodeHTTPRequest([]byte(tt.raw))
			wantInvalid(t, err, tt.pointer)
		})
	}
}

// TestDecodeHTTPRequestKeepsValidText: a surrogate pair, an escaped
// backslash before "u", and U+FFFD itself are text, read as sent.
func TestDecodeHTTPRequestKeepsValidText(t *testing.T) {
	raw := `{"httpMethod":"POST","headers":{"Idempotency-Key":"k\ud83d\ude00\uFFFD"},"body":"{\"a\":\"\\ud800\"}"}`
	ev, err := DecodeHTTPRequest([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := ev.Headers["Idempotency-Key"], "k\U0001F600\uFFFD"; got != want {
		t.Errorf("key %q, want %q", got, want)
	}
	if got, want := ev.Body, `{"a":"\ud800"}`; got != want {
		t.Errorf("body %q, want %q (the body's own escape is the body parser's to judge)", got, want)
	}
}

func TestToHTTPRequest(t *testing.T) {
	ev, err := DecodeHTTPRequest(mustRead(t, "apigw_v1_authorizer_base64.json"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := runtimeContext("req-1", "fn-1")
	r, err := ToHTTPRequest(ctx, ev)
	if err != nil {
		t.Fatal(err)
	}
	if r.Method != "POST" || r.URL.Path != "/orders" || r.RequestURI != "/orders?dry_run=false&tag=x&tag=y" {
		t.Fatalf("method %q url %q uri %q", r.Method, r.URL, r.RequestURI)
	}
	if got := r.URL.Query()["tag"]; !reflect.DeepEqual(got, []string{"x", "y"}) {
		t.Errorf("tag = %v, want multi-value form", got)
	}
	if got := r.Header.Values("X-Request-Tag"); !reflect.DeepEqual(got, []string{"a", "b"}) {
		t.Errorf("X-Request-Tag = %v", got)
	}
	if r.Header.Get("Idempotency-Key") != "5f0c2a9e-4f43-4c8e-9d61-0d6f0e2b7a11" {
		t.Errorf("headers %v", r.Header)
	}
	if r.Host != "d5dm1lba80md********.apigw.yandexcloud.net" || r.Header.Get("Host") != "" {
		t.Errorf("host %q, header Host %q", r.Host, r.Header.Get("Host"))
	}
	if r.RemoteAddr != "203.0.113.7:0" {
		t.Errorf("RemoteAddr %q", r.RemoteAddr)
	}
	body, _ := io.ReadAll(r.Body)
	if string(body) != `{"sku":"SKU-1","qty":2,"note":"fragile"}` || r.ContentLength != int64(len(body)) {
		t.Errorf("body %q length %d", body, r.ContentLength)
	}
	auth, ok := AuthorizerFromContext(r.Context())
	if !ok || auth["customer_id"] != "cust-42" {
		t.Errorf("authorizer %v %v", auth, ok)
	}
	if got, ok := EventFromContext(r.Context()); !ok || got.OperationID != "createOrder" {
		t.Errorf("EventFromContext = %v", ok)
	}
	if RequestID(r.Context()) != "req-1" {
		t.Errorf("runtime context values lost")
	}
}

func TestToHTTPRequestEdgeCases(t *testing.T) {
	tests := []struct {
		name     string
		ev       HTTPRequest
		wantURI  string
		wantBody string
		wantAuth bool
	}{
		{"direct call without path", HTTPRequest{HTTPMethod: "GET", QueryStringParameters: map[string]string{"a": "1"}}, "/?a=1", "", false},
		{"relative path", HTTPRequest{HTTPMethod: "GET", Path: "orders"}, "/orders", "", false},
		{"escaped path", HTTPRequest{HTTPMethod: "GET", Path: "/orders/a b"}, "/orders/a%20b", "", false},
		{"plain body", HTTPRequest{HTTPMethod: "POST", Path: "/", Body: `{"a":1}`}, "/", `{"a":1}`, false},
		{"unpadded base64", HTTPRequest{HTTPMethod: "POST", Path: "/", Body: "aGk", IsBase64Encoded: true}, "/", "hi", false},
		{"empty authorizer", HTTPRequest{HTTPMethod: "GET", Path: "/", RequestContext: HTTPRequestContext{Authorizer: map[string]any{}}}, "/", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := ToHTTPRequest(context.Background(), tt.ev)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(r.Body)
			if r.RequestURI != tt.wantURI || string(body) != tt.wantBody {
				t.Fatalf("uri %q body %q, want %q %q", r.RequestURI, body, tt.wantURI, tt.wantBody)
			}
			if _, ok := AuthorizerFromContext(r.Context()); ok != tt.wantAuth {
				t.Fatalf("authorizer present = %v, want %v", ok, tt.wantAuth)
			}
		})
	}
}

func TestToHTTPRequestInvalid(t *testing.T) {
	tests := []struct {
		name    string
		ev      HTTPRequest
		pointer string
	}{
		{"no method", HTTPRequest{Path: "/"}, "/httpMethod"},
		{"bad base64", HTTPRequest{HTTPMethod: "POST", Body: "!!!", IsBase64Encoded: true}, "/body"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ToHTTPRequest(context.Background(), tt.ev)
			wantInvalid(t, err, tt.pointer)
		})
	}
}

func TestAuthorizerFromContextAbsent(t *testing.T) {
	if _, ok := AuthorizerFromContext(context.Background()); ok {
		t.Fatal("ok without authorizer")
	}
	if _, ok := AuthorizerFromContext(WithAuthorizer(context.Background(), nil)); ok {
		t.Fatal("ok with nil authorizer")
	}
}
