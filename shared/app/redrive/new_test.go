package redrive

import (
	"testing"

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
	if s, err := New(Config{Store: f.store, MaxRate: -1}); s != nil || !apperr.Is(err, apperr.Invalid) {
		t.Errorf("negative MaxRate: New = %v, %v; want Invalid", s, err)
	}
	if s, err := New(Config{}); s != nil || !apperr.Is(err, apperr.Invalid) {
		t.Errorf("no store: New = %v, %v; want Invalid", s, err)
	}
}
