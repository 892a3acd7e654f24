package main

import (
	"strings"
	"testing"
	"time"
)

func TestColdBuildCheck(t *testing.T) {
	under := coldBuild{Wall: 60 * time.Second, MaxRSS: 200 << 20, ModBytes: 100 << 20, GoCache: 100 << 20}
	if v, err := under.check(0.8, true); err != nil || len(v) != 4 || strings.Contains(strings.Join(v, "\n"), "missed") {
		t.Errorf("within targets: %q, %v", v, err)
	}
	// Today's shape: past the targets, under the safety margin.
	today := coldBuild{Wall: 200 * time.Second, MaxRSS: 640 << 20, ModBytes: 400 << 20, GoCache: 100 << 20}
	v, err := today.check(0.8, false)
	if err != nil || strings.Count(strings.Join(v, "\n"), "target missed") != 3 {
		t.Errorf("past targets, not strict: %q, %v", v, err)
	}
	if _, err := today.check(0.8, true); err == nil || !strings.Contains(err.Error(), "misses the target") {
		t.Errorf("strict: %v", err)
	}
	over := coldBuild{Wall: 250 * time.Second, MaxRSS: 900 << 20, ModBytes: 660 << 20, GoCache: 10 << 20}
	_, err = over.check(0.8, false)
	bigCache := coldBuild{Wall: time.Second, MaxRSS: 1 << 20, ModBytes: 250 << 20, GoCache: 500 << 20}
	if _, err := bigCache.check(0.8, true); err != nil {
		t.Errorf("the build cache alone failed a check: %v", err)
	}
	for _, want := range []string{"build time", "largest proc", "modules"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("past the margin: %q not reported in %v", want, err)
		}
	}
}
