package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestSubRowsMoveTheHotRowWall: spreading the flash-sale SKU over 16
// sub-rows divides each row's load by 16, so the hot-row wall is reached at
// 16 times the rate, and the simulation on one sub-row under the bound
// gives nothing up where one row gave up orders.
func TestSubRowsMoveTheHotRowWall(t *testing.T) {
	d, err := loadDeployment(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	a := defaultAssumptions()
	flash := popularities(a.SKUs)[2]
	one := model(d, a, 1000, flash)
	a.SubRows = 16
	many := model(d, a, 1000, flash)
	if one.HotRowTPS != 1000 || many.HotRowTPS != 1000.0/16 || many.HotSKUTPS != 1000 {
		t.Fatalf("hot row %v → %v tx/s (SKU %v): want 1000 → 62.5, the SKU still 1000", one.HotRowTPS, many.HotRowTPS, many.HotSKUTPS)
	}
	wallAt := func(r row) float64 {
		for _, w := range r.Walls {
			if strings.HasPrefix(w.Name, "hot stock row") {
				return 1000 * w.Headroom()
			}
		}
		t.Fatal("no hot stock row wall")
		return 0
	}
	if got, want := wallAt(many), 16*wallAt(one); got != want {
		t.Errorf("hot-row wall at %v orders/s with 16 sub-rows, want %v", got, want)
	}
	if one.Sim.GivenUp == 0 || many.Sim.GivenUp != 0 {
		t.Errorf("given up per row: %v on one row (want > 0), %v on a sub-row (want 0)", one.Sim.GivenUp, many.Sim.GivenUp)
	}
	var out bytes.Buffer
	printSubRows(&out, d, a)
	for _, want := range []string{"Hot SKU on stock sub-rows", "\n  16 ", "\n  64 "} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("sub-rows table lacks %q:\n%s", want, out.String())
		}
	}
}

// The local measurement on 16 sub-rows reserves every unit it says it did,
// once, summed over the sub-rows.
func TestSQLiteMeasurementOnSubRowsConservesStock(t *testing.T) {
	m, err := measureSQLite(context.Background(), t.TempDir(), 200, 8, 16)
	if err != nil {
		t.Fatal(err)
	}
	if m.Left.Reserved != 400 || m.Left.Available+m.Left.Reserved != m.Seeded || m.Left.Shards != 16 {
		t.Fatalf("after 2×200 reservations on 16 sub-rows: %+v, seeded %d", m.Left, m.Seeded)
	}
	var out bytes.Buffer
	printSubRowsSpeedup(&out, m, m)
	if !strings.Contains(out.String(), "16 sub-rows") {
		t.Fatalf("output:\n%s", out.String())
	}
}

func TestSubRowsFlagIsChecked(t *testing.T) {
	for _, args := range [][]string{{"-subrows", "0"}, {"-subrows", "257"}, {"-sqlite", "10", "-subrows", "0"}} {
		var out, errb bytes.Buffer
		if code := run(append([]string{"-root", repoRoot}, args...), &out, &errb); code != 2 || out.Len() != 0 {
			t.Errorf("%v: exit %d, stdout %q", args, code, out.String())
		}
	}
}
