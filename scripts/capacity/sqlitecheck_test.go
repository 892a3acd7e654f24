package main

import (
	"bytes"
	"context"
	"testing"
)

// The local measurement reserves every unit it says it did, once: stock is
// conserved (available + reserved is what was seeded) and every
// reservation of the burst committed (SQLite queues writers; nothing
// aborts).
func TestSQLiteMeasurementConservesStock(t *testing.T) {
	m, err := measureSQLite(context.Background(), t.TempDir(), 200, 8, 1)
	if err != nil {
		t.Fatal(err)
	}
	if m.Left.Reserved != 400 || m.Left.Available+m.Left.Reserved != m.Seeded {
		t.Fatalf("after 2×200 reservations: available %d, reserved %d, seeded %d", m.Left.Available, m.Left.Reserved, m.Seeded)
	}
	if m.Window <= 0 || m.SerialPerSec <= 0 || m.BurstPerSec <= 0 {
		t.Fatalf("measurement %+v", m)
	}
	var out bytes.Buffer
	printSQLite(&out, m)
	if !bytes.Contains(out.Bytes(), []byte("serial-commit bound")) {
		t.Fatalf("output:\n%s", out.String())
	}
}

func TestSQLiteFlagsAreChecked(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"-sqlite", "-5"}, &out, &errb); code != 2 || out.Len() != 0 {
		t.Fatalf("-sqlite -5: exit %d, stdout %q", code, out.String())
	}
}
