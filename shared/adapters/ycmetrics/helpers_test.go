package ycmetrics

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// captured is one request the fake Monitoring received.
type captured struct {
	Method, Path string
	Query        map[string][]string
	Header       http.Header
	Body         map[string]any
}

// fakeMonitoring records requests and answers with respond.
type fakeMonitoring struct {
	srv     *httptest.Server
	mu      sync.Mutex
	reqs    []captured
	respond func(w http.ResponseWriter, r *http.Request)
}

func newFake(t *testing.T, respond func(w http.ResponseWriter, r *http.Request)) *fakeMonitoring {
	t.Helper()
	f := &fakeMonitoring{respond: respond}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		data, _ := io.ReadAll(r.Body)
		var body map[string]any
		if err := json.Unmarshal(data, &body); err != nil {
			t.Errorf("request body is not JSON: %v: %s", err, data)
		}
		f.mu.Lock()
		f.reqs = append(f.reqs, captured{Method: r.Method, Path: r.URL.Path, Query: r.URL.Query(), Header: r.Header.Clone(), Body: body})
		f.mu.Unlock()
		if f.respond != nil {
			f.respond(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"writtenMetricsCount":"1"}`)
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeMonitoring) requests() []captured {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]captured(nil), f.reqs...)
}

func (f *fakeMonitoring) endpoint() string { return f.srv.URL + "/monitoring/v2/data/write" }

var fixedNow = time.Date(2025, 1, 2, 3, 4, 5, 123456789, time.UTC)

func staticToken(tok string) TokenSource {
	return TokenFunc(func(context.Context) (string, error) { return tok, nil })
}

// newRecorder builds a Recorder against f with a fixed clock and a captured log.
func newRecorder(t *testing.T, f *fakeMonitoring, mod func(*Config)) (*Recorder, *bytes.Buffer) {
	t.Helper()
	var logs bytes.Buffer
	cfg := Config{
		FolderID: "b1gfolder", Function: "saga-advancer", Tokens: staticToken("t0k3n"),
		Endpoint: f.endpoint(), Now: func() time.Time { return fixedNow },
		Log: slog.New(slog.NewJSONHandler(&lockedWriter{w: &logs}, nil)),
	}
	if mod != nil {
		mod(&cfg)
	}
	r, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return r, &logs
}

type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// pointsByKey indexes a captured body's metrics by name and sorted labels.
func points(t *testing.T, body map[string]any) []map[string]any {
	t.Helper()
	raw, ok := body["metrics"].([]any)
	if !ok {
		t.Fatalf("body has no metrics array: %v", body)
	}
	out := make([]map[string]any, len(raw))
	for i, p := range raw {
		out[i] = p.(map[string]any)
	}
	return out
}
