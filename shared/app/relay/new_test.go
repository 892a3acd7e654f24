package relay

import (
	"strings"
	"testing"
	"time"

	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/kit/config"
)

// A Relay built with zero fields gets config.Default()'s values: the
// defaults live once, in config (an empty backoff used to retry at once).
func TestNewTakesConfigDefaults(t *testing.T) {
	f := newFixture(t)
	r, err := New(Config{Store: f.store, Queue: f.queue})
	if err != nil {
		t.Fatal(err)
	}
	d, got := config.Default(), r.cfg
	checks := []struct {
		name      string
		got, want any
	}{
		{"BatchSize", got.BatchSize, d.Relay.BatchSize},
		{"SendConcurrency", got.SendConcurrency, d.Relay.SendConcurrency},
		{"MaxAttempts", got.MaxAttempts, d.Relay.MaxAttempts},
		{"Lease", got.Lease, d.Relay.Lease},
		{"Backoff.Base", got.Backoff.Base, d.Relay.BackoffBase},
		{"Backoff.Cap", got.Backoff.Cap, d.Relay.BackoffCap},
		{"Shards", got.Shards, d.Relay.Shards},
		{"LoopLimit", got.LoopLimit, d.Redrive.LoopLimit},
		{"Owner", got.Owner, DefaultOwner},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if id1, id2 := got.NewID(), got.NewID(); id1 == id2 || len(id1) != 36 {
		t.Errorf("default ids %q, %q: want distinct random UUIDs", id1, id2)
	}
	if now := got.Now(); now.Location() != time.UTC {
		t.Errorf("default clock reads %v, want UTC", now.Location())
	}
	if got.Log == nil || got.Hooks.OnPublished == nil || got.Hooks.OnFailed == nil || got.Hooks.OnDead == nil {
		t.Error("a nil logger or hook was left unset")
	}
}

func TestNewRefusesBadConfig(t *testing.T) {
	f := newFixture(t)
	ok := Config{Store: f.store, Queue: f.queue}
	cases := []struct {
		name   string
		change func(*Config)
		want   string
	}{
		{"no store", func(c *Config) { c.Store = nil }, "a store and a queue are required"},
		{"no queue", func(c *Config) { c.Queue = nil }, "a store and a queue are required"},
		{"negative lease", func(c *Config) { c.Lease = -time.Second }, "must not be negative"},
		{"batch too large", func(c *Config) { c.BatchSize = MaxBatchSize + 1 }, "BatchSize must be at most 1000"},
		{"negative send concurrency", func(c *Config) { c.SendConcurrency = -1 }, "must not be negative"},
		{"send concurrency too large", func(c *Config) { c.SendConcurrency = MaxSendConcurrency + 1 }, "SendConcurrency must be at most 100"},
		{"cap below base", func(c *Config) { c.Backoff.Base, c.Backoff.Cap = time.Minute, time.Second }, "cap (1s) must be at least its base (1m0s)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := ok
			tc.change(&cfg)
			r, err := New(cfg)
			if err == nil || r != nil {
				t.Fatalf("New = %v, %v; want an error", r, err)
			}
			if !apperr.Is(err, apperr.Invalid) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q (kind %v), want Invalid containing %q", err, apperr.KindOf(err), tc.want)
			}
		})
	}
}
