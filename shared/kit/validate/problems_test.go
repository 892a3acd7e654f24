package validate

import (
	"strings"
	"testing"
	"time"

	"ordersaga/shared/domain/apperr"
)

func TestProblemsNameEveryField(t *testing.T) {
	var p Problems
	NotNegative(&p, "BatchSize", -1)
	NotNegative(&p, "Lease", time.Duration(0)) // zero is the default: fine
	NotNegative(&p, "Lease", -time.Second)
	AtMost(&p, "SendConcurrency", 101, 100)
	p.Require(false, "Store")
	err := p.Err("x.New")
	if !apperr.Is(err, apperr.Invalid) {
		t.Fatalf("err = %v, want Invalid", err)
	}
	for _, want := range []string{"x.New", "BatchSize must not be negative (got -1)", "Lease must not be negative (got -1s)",
		"SendConcurrency must be at most 100 (got 101)", "Store is required"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("err = %q, want it to contain %q", err, want)
		}
	}
	if got := len(apperr.Fields(err)); got != 4 {
		t.Errorf("fields = %d, want 4", got)
	}
	if err := (Problems{}).Err("x.New"); err != nil {
		t.Errorf("no problem: err = %v, want nil", err)
	}
}
