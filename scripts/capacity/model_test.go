package main

import (
	"bytes"
	"math"
	"strings"
	"testing"
)

const repoRoot = "../.."

func TestPopularities(t *testing.T) {
	p := popularities(1000)
	if p[0].Top != 1.0/1000 || p[2].Top != 0.5 {
		t.Fatalf("uniform %v, flash %v: want 0.001 and 0.5", p[0].Top, p[2].Top)
	}
	// Zipf s = 1.1 over 1000: 1 / Σ k^−1.1, with Σ ≈ ζ(1.1) − 1000^−0.1/0.1
	// ≈ 10.584 − 5.012 = 5.572.
	if math.Abs(p[1].Top-1/5.572) > 0.002 {
		t.Fatalf("zipf top share %.4f, want about %.4f", p[1].Top, 1/5.572)
	}
}

func TestRequestUnitsFollowThePublishedRates(t *testing.T) {
	if got := (ruOp{Reads: 3, Writes: 4}).RU(); got != 11 {
		t.Fatalf("3 reads + 4 writes = %d RU, want 11 (1 per read, 2 per write)", got)
	}
	sum := 0
	for _, o := range ruPerOperation {
		if o.Reads <= 0 || o.Writes <= 0 || o.How == "" {
			t.Errorf("%s: reads %d, writes %d, no derivation %q", o.Name, o.Reads, o.Writes, o.How)
		}
		sum += o.RU()
	}
	if ruConfirmedOrder() != sum || ruNewOrder() != ruPerOperation[0].RU() {
		t.Fatalf("per confirmed order %d, want the sum %d", ruConfirmedOrder(), sum)
	}
}

func TestModelScalesWithTheRateAndNamesTheWalls(t *testing.T) {
	d, err := loadDeployment(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	a := defaultAssumptions()
	pops := popularities(a.SKUs)
	lo, hi := model(d, a, 100, pops[0]), model(d, a, 1000, pops[0])
	if hi.RUps != 10*lo.RUps || hi.MQ["order-events"] != 10*lo.MQ["order-events"] {
		t.Fatalf("RU/s %v → %v, events %v → %v: linear loads must scale with the rate", lo.RUps, hi.RUps, lo.MQ["order-events"], hi.MQ["order-events"])
	}
	flash := model(d, a, 200, pops[2])
	if flash.HotRowTPS != 200 || flash.Sim.GivenUp == 0 {
		t.Fatalf("flash sale at 200 orders/s: hot row %v tx/s (want 200), given up %v/s (want > 0 past the bound %v)", flash.HotRowTPS, flash.Sim.GivenUp, flash.Bound)
	}
	// The throughput limit Terraform sets is the first wall as long as it
	// is below the cloud's quota.
	if d.YDBThrottleRU > 0 && d.YDBThrottleRU < YDBCloudQuotaRU {
		if fw := lo.firstWall(); !strings.Contains(fw.Name, "ydb_throttling_rcu_limit") {
			t.Fatalf("first wall at 100 orders/s: %s, want the YDB throughput limit", fw.Name)
		}
	}
}

func TestBadFlagsAreRefused(t *testing.T) {
	for _, args := range [][]string{{"-rtt", "0s"}, {"-skus", "1"}, {"extra"}, {"-root", "/nonexistent"}} {
		var out, errb bytes.Buffer
		if code := run(append([]string{"-root", repoRoot}, args...), &out, &errb); code != 2 || errb.Len() == 0 || out.Len() != 0 {
			t.Errorf("%v: exit %d, stdout %q, stderr %q: want 2, nothing printed, an error", args, code, out.String(), errb.String())
		}
	}
}
