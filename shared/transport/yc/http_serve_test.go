package yc

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"testing"
)

// testMux is a small app routed like the order API behind API Gateway.
func testMux() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /orders", func(w http.ResponseWriter, r *http.Request) {
		auth, _ := AuthorizerFromContext(r.Context())
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Add("Set-Cookie", "a=1")
		w.Header().Add("Set-Cookie", "b=2")
		w.WriteHeader(http.StatusCreated)
		w.Header().Set("X-Too-Late", "ignored")
		fmt.Fprintf(w, `{"customer":%q,"got":%s,"tags":%q}`, auth["customer_id"], body, r.URL.Query()["tag"])
	})
	mux.HandleFunc("GET /orders/{id}", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "order %s", r.PathValue("id"))
	})
	mux.HandleFunc("GET /blob", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Write([]byte{0xff, 0x00, 0xfe})
	})
	mux.HandleFunc("DELETE /orders/{id}", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNoContent)
		if _, err := w.Write([]byte("x")); err != http.ErrBodyNotAllowed {
			panic("write after 204 must fail")
		}
	})
	mux.HandleFunc("GET /empty", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusProcessing) // 1xx is not the final status
	})
	return mux
}

func TestServeEventSample(t *testing.T) {
	resp, err := ServeEvent(testMux(), context.Background(), mustRead(t, "apigw_v1_authorizer_base64.json"))
	if err != nil {
		t.Fatal(err)
	}
	want := HTTPResponse{
		StatusCode:        http.StatusCreated,
		Headers:           map[string]string{"Content-Type": "application/json"},
		MultiValueHeaders: map[string][]string{"Set-Cookie": {"a=1", "b=2"}},
		Body:              `{"customer":"cust-42","got":{"sku":"SKU-1","qty":2,"note":"fragile"},"tags":["x" "y"]}`,
	}
	if !reflect.DeepEqual(resp, want) {
		t.Fatalf("got  %+v\nwant %+v", resp, want)
	}
	// The platform JSON uses the documented names.
	raw, _ := json.Marshal(resp)
	var generic map[string]any
	json.Unmarshal(raw, &generic)
	for _, k := range []string{"statusCode", "headers", "multiValueHeaders", "body", "isBase64Encoded"} {
		if _, ok := generic[k]; !ok {
			t.Errorf("response JSON lacks %q: %s", k, raw)
		}
	}
}

func httpEvent(method, path string) []byte {
	b, _ := json.Marshal(HTTPRequest{HTTPMethod: method, Path: path})
	return b
}

func TestServeEventCases(t *testing.T) {
	tests := []struct {
		name        string
		raw         []byte
		wantStatus  int
		wantBody    string
		wantBase64  bool
		wantCType   string
		wantHeaders bool
	}{
		{"path param, sniffed type", mustRead(t, "apigw_v1_jwt_get.json"), 200, "order ord-7", false, "text/plain; charset=utf-8", true},
		{"binary body", httpEvent("GET", "/blob"), 200, base64.StdEncoding.EncodeToString([]byte{0xff, 0, 0xfe}), true, "application/octet-stream", true},
		{"HEAD has no body", httpEvent("HEAD", "/orders/1"), 200, "", false, "", false},
		{"204", httpEvent("DELETE", "/orders/1"), 204, "", false, "", false},
		{"1xx then nothing", httpEvent("GET", "/empty"), 200, "", false, "", false},
		{"not found", httpEvent("GET", "/nope"), 404, "404 page not found\n", false, "text/plain; charset=utf-8", true},
		{"method not allowed", httpEvent("PUT", "/blob"), 405, "Method Not Allowed\n", false, "text/plain; charset=utf-8", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := ServeEvent(testMux(), context.Background(), tt.raw)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != tt.wantStatus || resp.Body != tt.wantBody || resp.IsBase64Encoded != tt.wantBase64 {
				t.Fatalf("got %d %q base64=%v, want %d %q %v", resp.StatusCode, resp.Body, resp.IsBase64Encoded,
					tt.wantStatus, tt.wantBody, tt.wantBase64)
			}
			if got := resp.Header().Get("Content-Type"); got != tt.wantCType {
				t.Errorf("Content-Type %q, want %q", got, tt.wantCType)
			}
			if (len(resp.Headers) > 0) != tt.wantHeaders {
				t.Errorf("headers %v", resp.Headers)
			}
			if resp.Header().Get("X-Too-Late") != "" {
				t.Errorf("header set after WriteHeader leaked")
			}
		})
	}
}

func TestServeEventInvalid(t *testing.T) {
	called := false
	h := http.HandlerFunc(func(http.ResponseWriter, *http.Request) { called = true })
	for _, raw := range []string{`nope`, `{}`, `{"httpMethod":"POST","body":"%%%","isBase64Encoded":true}`} {
		_, err := ServeEvent(h, context.Background(), []byte(raw))
		wantInvalid(t, err, "")
	}
	if called {
		t.Fatal("handler ran on a malformed event")
	}
}

func TestHTTPResponseHelpers(t *testing.T) {
	r := HTTPResponse{
		Headers:           map[string]string{"x-a": "single", "X-B": "only"},
		MultiValueHeaders: map[string][]string{"X-A": {"m1", "m2"}},
		Body:              base64.StdEncoding.EncodeToString([]byte{1, 2}),
		IsBase64Encoded:   true,
	}
	h := r.Header()
	if !reflect.DeepEqual(h.Values("X-A"), []string{"m1", "m2"}) || h.Get("X-B") != "only" {
		t.Fatalf("Header() = %v: multiValueHeaders must win", h)
	}
	if b, err := r.BodyBytes(); err != nil || !reflect.DeepEqual(b, []byte{1, 2}) {
		t.Fatalf("BodyBytes = %v %v", b, err)
	}
	r.Body = "%%%"
	_, err := r.BodyBytes()
	wantInvalid(t, err, "")
}
