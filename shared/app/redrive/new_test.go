package redrive

import (
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/kit/config"
)

// A Service built with zero fields gets config.Default()'s values.
func TestNewTakesConfigDefaults(t *testing.T) {
	f := newFixture(t)
	s, err := New(Config{Store: f.store})
	if err != nil {
		t.Fatal(err)
	}
	d := config.Default()
	if s.cfg.MaxPerCall != d.Redrive.MaxPerCall || s.cfg.MaxRate != float64(d.Redrive.MaxRate) ||
		s.cfg.LoopLimit != d.Redrive.LoopLimit || s.cfg.Shards != d.Relay.Shards {
		t.Errorf("defaults max %d rate %v loop %d shards %d; want %d %d %d %d", s.cfg.MaxPerCall, s.cfg.MaxRate,
			s.cfg.LoopLimit, s.cfg.Shards, d.Redrive.MaxPerCall, d.Redrive.MaxRate, d.Redrive.LoopLimit, d.Relay.Shards)
	}
	if s.lim.maxPerCall != s.cfg.MaxPerCall || s.lim.maxRate != s.cfg.MaxRate {
		t.Errorf("command limits %+v differ from the configured bounds", s.lim)
	}
	if _, err := uuid.Parse(s.cfg.NewID()); err != nil {
		t.Errorf("default id: %v", err)
	}
}

// Zero means the default (above); a negative setting or a missing store is
// refused with an error naming the field.
func TestNewRefusesBadConfig(t *testing.T) {
	f := newFixture(t)
	cases := []struct {
		name string
		cfg  Config
		want string
	}{
		{"no store", Config{}, "Store is required"},
		{"negative shards", Config{Store: f.store, Shards: -1}, "Shards must not be negative (got -1)"},
		{"negative loop limit", Config{Store: f.store, LoopLimit: -1}, "LoopLimit must not be negative (got -1)"},
		{"negative max per call", Config{Store: f.store, MaxPerCall: -1}, "MaxPerCall must not be negative (got -1)"},
		{"negative max rate", Config{Store: f.store, MaxRate: -1}, "MaxRate must not be negative (got -1)"},
		{"negative receive wait", Config{Store: f.store, ReceiveWait: -time.Second}, "ReceiveWait must not be negative (got -1s)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := New(tc.cfg)
			if s != nil || !apperr.Is(err, apperr.Invalid) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("New = %v, %v; want Invalid containing %q", s, err, tc.want)
			}
		})
	}
}
