package yc

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"ordersaga/shared/domain/apperr"
)

func TestNewHTTPRequestEventRoundTrip(t *testing.T) {
	tests := []struct {
		name, contentType, body string
		wantBase64              bool
	}{
		{"json stays text", "application/json", `{"a":"b"}`, false},
		{"json with charset stays text", "application/json; charset=utf-8", `{"a":"b"}`, false},
		{"text is base64", "text/plain", "hello", true},
		{"binary", "application/octet-stream", "\xff\x00", true},
		{"json that is not utf-8", "application/json", "\xff", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := httptest.NewRequest("POST", "http://api.local/orders?tag=x&tag=y", strings.NewReader(tt.body))
			in.Header.Set("Content-Type", tt.contentType)
			in.Header.Add("X-Multi", "1")
			in.Header.Add("X-Multi", "2")
			ev, err := NewHTTPRequestEvent(in, 1<<20)
			if err != nil {
				t.Fatal(err)
			}
			if ev.IsBase64Encoded != tt.wantBase64 || ev.Version != "1.0" {
				t.Fatalf("base64=%v version=%q", ev.IsBase64Encoded, ev.Version)
			}
			// Through JSON, as the platform delivers it.
			raw, _ := json.Marshal(ev)
			ev, err = DecodeHTTPRequest(raw)
			if err != nil {
				t.Fatal(err)
			}
			out, err := ToHTTPRequest(context.Background(), ev)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(out.Body)
			if string(body) != tt.body || out.Method != "POST" || out.URL.Path != "/orders" || out.Host != "api.local" {
				t.Fatalf("got %s %s host %q body %q", out.Method, out.URL, out.Host, body)
			}
			if !reflect.DeepEqual(out.URL.Query()["tag"], []string{"x", "y"}) ||
				!reflect.DeepEqual(out.Header.Values("X-Multi"), []string{"1", "2"}) {
				t.Fatalf("lost multi values: %v %v", out.URL.Query(), out.Header)
			}
			if ev.Headers["X-Multi"] != "2" || ev.RequestContext.Identity.SourceIP != "192.0.2.1" {
				t.Fatalf("event %+v", ev)
			}
		})
	}
}

func TestNewHTTPRequestEventTooLarge(t *testing.T) {
	in := httptest.NewRequest("POST", "/", strings.NewReader("12345"))
	if _, err := NewHTTPRequestEvent(in, 4); !apperr.Is(err, apperr.TooLarge) {
		t.Fatalf("err = %v, want too_large", err)
	}
	if _, err := NewHTTPRequestEvent(in, 5); err != nil {
		t.Fatalf("body at the limit: %v", err)
	}
}

// TestNewHTTPRequestEventRefusesTextThatIsNotUTF8: a header, query value or
// path holding bytes that are not UTF-8 is refused (Invalid) before the
// event exists; a body is not text here (it is base64-encoded when not UTF-8).
func TestNewHTTPRequestEventRefusesTextThatIsNotUTF8(t *testing.T) {
	cases := map[string]func() (*http.Request, string){
		"header": func() (*http.Request, string) {
			r := httptest.NewRequest("POST", "/orders", nil)
			r.Header.Set("Idempotency-Key", "k\xff")
			return r, "Idempotency-Key header"
		},
		"query": func() (*http.Request, string) {
			return httptest.NewRequest("GET", "/orders?a=%FE", nil), "query parameter a"
		},
		"path": func() (*http.Request, string) { return httptest.NewRequest("GET", "/orders/%FF", nil), "path" },
	}
	for name, mk := range cases {
		t.Run(name, func(t *testing.T) {
			r, where := mk()
			_, err := NewHTTPRequestEvent(r, 100)
			if !apperr.Is(err, apperr.Invalid) || !strings.Contains(err.Error(), where) {
				t.Fatalf("err = %v, want invalid naming %q", err, where)
			}
		})
	}
	ok := httptest.NewRequest("POST", "/orders", strings.NewReader("\xff"))
	ok.Header.Set("Idempotency-Key", "k\uFFFD")
	if ev, err := NewHTTPRequestEvent(ok, 100); err != nil || !ev.IsBase64Encoded {
		t.Errorf("valid text with a binary body: %+v %v", ev, err)
	}
}

func TestWriteHTTPResponse(t *testing.T) {
	tests := []struct {
		name     string
		resp     HTTPResponse
		wantErr  apperr.Kind
		wantCode int
		wantBody string
	}{
		{"text", HTTPResponse{StatusCode: 201, Headers: map[string]string{"Content-Type": "text/plain"},
			MultiValueHeaders: map[string][]string{"Set-Cookie": {"a=1", "b=2"}}, Body: "hi"}, 0, 201, "hi"},
		{"base64", HTTPResponse{StatusCode: 200, Body: "aGk=", IsBase64Encoded: true}, 0, 200, "hi"},
		{"204 with body", HTTPResponse{StatusCode: 204, Body: "ignored"}, 0, 204, ""},
		{"bad status", HTTPResponse{StatusCode: 0}, apperr.Invalid, 0, ""},
		{"bad base64", HTTPResponse{StatusCode: 200, Body: "%", IsBase64Encoded: true}, apperr.Invalid, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			err := WriteHTTPResponse(rec, tt.resp)
			if tt.wantErr != 0 {
				if !apperr.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if rec.Code != tt.wantCode || rec.Body.String() != tt.wantBody {
				t.Fatalf("got %d %q", rec.Code, rec.Body.String())
			}
			if got := rec.Header().Values("Set-Cookie"); len(tt.resp.MultiValueHeaders) > 0 && len(got) != 2 {
				t.Fatalf("Set-Cookie = %v", got)
			}
		})
	}
}
