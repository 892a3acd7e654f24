package ycmetrics

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/metrics"
)

func TestNewValidates(t *testing.T) {
	tok := staticToken("x")
	many := map[string]string{}
	for i := 0; i < 9; i++ {
		many["l"+strconv.Itoa(i)] = "v"
	}
	tests := []struct {
		name string
		cfg  Config
		ok   bool
		want string // the field the error names
	}{
		{"minimal", Config{FolderID: "f", Tokens: tok}, true, ""},
		{"no folder", Config{Tokens: tok}, false, "FolderID is required"},
		{"no tokens", Config{FolderID: "f"}, false, "Tokens is required"},
		{"bad endpoint", Config{FolderID: "f", Tokens: tok, Endpoint: "::nope"}, false, "Endpoint is not an http(s) URL"},
		{"non-http endpoint", Config{FolderID: "f", Tokens: tok, Endpoint: "ftp://x/y"}, false, "Endpoint is not an http(s) URL"},
		{"too many common labels", Config{FolderID: "f", Tokens: tok, Function: "fn", Labels: many}, false, "Labels hold 10 common labels"},
		{"negative timeout", Config{FolderID: "f", Tokens: tok, Timeout: -1}, false, "Timeout must not be negative"},
		{"negative max points", Config{FolderID: "f", Tokens: tok, MaxPoints: -1}, false, "MaxPoints must not be negative (got -1)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := New(tt.cfg)
			if tt.ok {
				if err != nil {
					t.Fatalf("New: %v", err)
				}
				if r.cfg.Timeout != DefaultTimeout || r.cfg.MaxPoints != DefaultMaxPoints ||
					r.endpoint != DefaultEndpoint+"?folderId=f&service=custom" {
					t.Errorf("defaults not applied: %+v, endpoint %q", r.cfg, r.endpoint)
				}
				return
			}
			if !apperr.Is(err, apperr.Invalid) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want Invalid containing %q", err, tt.want)
			}
		})
	}
}

func TestBucketIndex(t *testing.T) {
	bounds := []float64{1, 5, 10}
	for _, tt := range []struct {
		v    float64
		want int
	}{{0, 0}, {1, 0}, {1.01, 1}, {5, 1}, {10, 2}, {10.5, 3}, {-3, 0}} {
		if got := bucketIndex(bounds, tt.v); got != tt.want {
			t.Errorf("bucketIndex(%v) = %d, want %d", tt.v, got, tt.want)
		}
	}
}

// Concurrent recording and flushing loses and duplicates nothing.
func TestConcurrentRecordAndFlush(t *testing.T) {
	var total atomic.Int64
	f := newFake(t, nil)
	r, _ := newRecorder(t, f, nil)
	const workers, each = 8, 250
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				r.Add(metrics.QueueReceives, 1, "queue", "q")
				if i%50 == 0 {
					_ = r.Flush(context.Background())
				}
			}
		}()
	}
	wg.Wait()
	if err := r.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, req := range f.requests() {
		for _, p := range points(t, req.Body) {
			if p["name"] != metrics.QueueReceives {
				t.Errorf("unexpected point %v", p)
			}
			total.Add(int64(p["value"].(float64)))
		}
	}
	if got := total.Load(); got != workers*each {
		t.Errorf("pushed %d increments, want %d", got, workers*each)
	}
}

// InstanceServiceAccount goes through ydb-go-yc-metadata's credentials
// (the metadata service's token endpoint with Metadata-Flavor: Google),
// faked on loopback, and creates nothing until the first token is needed.
func TestInstanceServiceAccount(t *testing.T) {
	var calls atomic.Int32
	meta := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		if r.URL.Path != "/computeMetadata/v1/instance/service-accounts/default/token" || r.Header.Get("Metadata-Flavor") != "Google" {
			http.NotFound(w, r)
			return
		}
		_, _ = io.WriteString(w, `{"access_token":"meta-token","expires_in":3600,"token_type":"Bearer"}`)
	}))
	defer meta.Close()
	// The platform's token URL is http://169.254.169.254 + that path; the
	// fake serves the same path on loopback.
	src := &lazySource{url: meta.URL + "/computeMetadata/v1/instance/service-accounts/default/token"}
	if calls.Load() != 0 {
		t.Fatalf("creating the source called the metadata service")
	}
	f := newFake(t, nil)
	r, _ := newRecorder(t, f, func(c *Config) { c.Tokens = src })
	r.Add(metrics.Reconciled, 1)
	if err := r.Flush(context.Background()); err != nil {
		t.Fatalf("Flush: %v", err)
	}
	if a := f.requests()[0].Header.Get("Authorization"); a != "Bearer meta-token" {
		t.Errorf("Authorization = %q", a)
	}
}
