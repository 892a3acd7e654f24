package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/metadata"

	"ordersaga/shared/adapters/sqlitestore"
)

// The offline rehearsal passes on the embedded queue and a scratch SQLite
// file, and says what it skipped.
func TestLocalPreflightPasses(t *testing.T) {
	t.Setenv("ORDERSAGA_SQS_ENDPOINT", "")
	var out bytes.Buffer
	root, _ := moduleRoot()
	err := preflight(context.Background(), options{local: true, root: root}, &out)
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	for _, want := range []string{"PASS  queue.create", "PASS  queue.dead-letter", "PASS  store.read", "SKIP  selfcheck", "preflight: PASS"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

// queryOnlyServer answers every request as a Query-protocol-only SQS would
// answer a JSON request: 400 with an XML error.
func queryOnlyServer(t *testing.T) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/xml")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(`<?xml version="1.0"?><ErrorResponse><Error><Type>Sender</Type><Code>InvalidAction</Code>` +
			`<Message>The action or operation requested is invalid.</Message></Error><RequestId>x</RequestId></ErrorResponse>`))
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// An endpoint that refuses the JSON protocol fails the first queue line,
// saying so plainly with the fallback, and the preflight fails.
func TestRefusedJSONProtocolIsSaidPlainly(t *testing.T) {
	var out bytes.Buffer
	root, _ := moduleRoot()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := preflight(ctx, options{root: root, endpoint: queryOnlyServer(t), keyID: "k", secret: "s"}, &out)
	if err == nil {
		t.Fatalf("preflight passed:\n%s", out.String())
	}
	for _, want := range []string{"FAIL  queue.create", "JSON protocol was refused", "Fallback: pin service/sqs", "preflight: FAIL"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

// Without a static key the cloud preflight fails at once, naming the
// variables, and dials nothing.
func TestMissingKeyFails(t *testing.T) {
	var out bytes.Buffer
	err := preflight(context.Background(), options{root: "."}, &out)
	if err == nil || !strings.Contains(out.String(), "YMQ_ACCESS_KEY_ID") || !strings.Contains(out.String(), "SKIP  ydb.connect") {
		t.Errorf("err %v, output:\n%s", err, out.String())
	}
}

// The SQS emulator, when scripts/test.sh runs one, gets the ymq adapter's
// calls and the FIFO calls, and every temporary queue is deleted.
func TestLocalPreflightAgainstTheEmulator(t *testing.T) {
	if os.Getenv("ORDERSAGA_SQS_ENDPOINT") == "" {
		t.Skip("ORDERSAGA_SQS_ENDPOINT is not set (scripts/test.sh starts the emulator)")
	}
	var out bytes.Buffer
	root, _ := moduleRoot()
	if err := preflight(context.Background(), options{local: true, root: root}, &out); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	for _, want := range []string{"PASS  queue.fifo-send-batch", "PASS  queue.fifo-delete", "PASS  queue.delete "} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

// An unreachable database fails its line with the fix and stops the YDB
// lines there; the scratch database is never the production one.
func TestYDBLines(t *testing.T) {
	root, _ := moduleRoot()
	var out bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	r := newReport(&out)
	probeYDB(ctx, r, options{root: root, dsn: "grpc://127.0.0.1:1/local", ydbAuth: "anonymous", connectTimeout: 2 * time.Second})
	if bad := r.failed(); len(bad) != 1 || bad[0] != "ydb.connect" || !strings.Contains(out.String(), "fix: check the endpoint") {
		t.Errorf("failed %v:\n%s", bad, out.String())
	}
	if strings.Contains(out.String(), "ydb.schema") || strings.Contains(out.String(), "ydb.conformance") {
		t.Errorf("lines after a failed connect:\n%s", out.String())
	}
	out.Reset()
	r = newReport(&out)
	probeYDB(ctx, r, options{root: root})
	if len(r.failed()) != 0 || !strings.Contains(out.String(), "SKIP  ydb.connect") || !strings.Contains(out.String(), "SKIP  ydb.conformance") {
		t.Errorf("no database yet:\n%s", out.String())
	}
}

// The units counter sums the trailer YDB sends; the measurement's store
// operations run on any store (SQLite reports no units, so the line says
// they were not measured rather than printing zeros).
func TestRequestUnits(t *testing.T) {
	var u unitsCounter
	u.add(metadata.Pairs("x-ydb-consumed-units", "3"))
	u.add(metadata.Pairs("x-ydb-consumed-units", "2", "other", "9"))
	if got := u.take(); got != 5 {
		t.Errorf("counted %d RU, want 5", got)
	}
	if got := u.take(); got != 0 {
		t.Errorf("take did not reset: %d", got)
	}
	st, err := sqlitestore.Open(context.Background(), filepath.Join(t.TempDir(), "ru.db"), sqlitestore.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	l := measureUnits(context.Background(), st)
	if l.Verdict != skip || !strings.Contains(l.Detail, "not measured") {
		t.Errorf("line %+v", l)
	}
}
