package yc

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"ordersaga/shared/domain/apperr"
)

// mustRead returns the contents of testdata/name.
func mustRead(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// testdataFiles returns the names of all testdata/*.json files.
func testdataFiles(t testing.TB) []string {
	t.Helper()
	names, err := filepath.Glob(filepath.Join("testdata", "*.json"))
	if err != nil || len(names) == 0 {
		t.Fatalf("no testdata: %v", err)
	}
	for i, n := range names {
		names[i] = filepath.Base(n)
	}
	return names
}

// wantInvalid fails unless err is apperr.Invalid and, when pointer is not
// empty, names pointer among its field errors.
func wantInvalid(t *testing.T, err error, pointer string) {
	t.Helper()
	if !apperr.Is(err, apperr.Invalid) {
		t.Fatalf("err = %v (kind %v), want kind invalid", err, apperr.KindOf(err))
	}
	if pointer == "" {
		return
	}
	for _, f := range apperr.Fields(err) {
		if f.Pointer == pointer {
			return
		}
	}
	t.Fatalf("err = %v, fields %+v: want field %q", err, apperr.Fields(err), pointer)
}

// runtimeContext returns ctx with the values the Cloud Functions Go runtime
// sets, through the exported helper so tests use no string keys directly.
func runtimeContext(requestID, functionID string) context.Context {
	return WithInvocation(context.Background(), requestID, functionID)
}
