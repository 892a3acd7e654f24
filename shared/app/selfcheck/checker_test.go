package selfcheck_test

import (
	"testing"
	"time"

	"ordersaga/shared/app/selfcheck"
	"ordersaga/shared/domain/apperr"
)

func TestNewRefusesANegativeCheckTimeout(t *testing.T) {
	if _, err := selfcheck.New(selfcheck.Config{CheckTimeout: -time.Second}); !apperr.Is(err, apperr.Invalid) {
		t.Errorf("negative timeout: err = %v, want Invalid", err)
	}
	if _, err := selfcheck.New(selfcheck.Config{}); err != nil {
		t.Errorf("zero timeout (the default): %v", err)
	}
}
