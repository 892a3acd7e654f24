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
		{"no store", func(c *Config) { c.Store = nil }, "Store is required"},
		{"no queue", func(c *Config) { c.Queue = nil }, "Queue is required"},
		{"negative shards", func(c *Config) { c.Shards = -1 }, "Shards must not be negative (got -1)"},
		{"negative batch size", func(c *Config) { c.BatchSize = -1 }, "BatchSize must not be negative (got -1)"},
		{"negative max attempts", func(c *Config) { c.MaxAttempts = -1 }, "MaxAttempts must not be negative (got -1)"},
		{"negative lease", func(c *Config) { c.Lease = -time.Second }, "Lease must not be negative (got -1s)"},
		{"negative loop limit", func(c *Config) { c.LoopLimit = -1 }, "LoopLimit must not be negative (got -1)"},
		{"negative backoff base", func(c *Config) { c.Backoff.Base = -time.Second }, "Backoff.Base must not be negative"},
		{"negative backoff cap", func(c *Config) { c.Backoff.Cap = -time.Second }, "Backoff.Cap must not be negative"},
		{"batch too large", func(c *Config) { c.BatchSize = MaxBatchSize + 1 }, "BatchSize must be at most 1000"},
		{"negative send concurrency", func(c *Config) { c.SendConcurrency = -1 }, "SendConcurrency must not be negative (got -1)"},
		{"send concurrency too large", func(c *Config) { c.SendConcurrency = MaxSendConcurrency + 1 }, "SendConcurrency must be at most 100"},
		{"cap below base", func(c *Config) { c.Backoff.Base, c.Backoff.Cap = time.Minute, time.Second }, "Backoff.Cap must be at least the backoff base 1m0s (got 1s)"},
		{"default cap below base", func(c *Config) { c.Backoff.Base = time.Hour }, "Backoff.Cap must be at least the backoff base 1h0m0s (got 5m0s)"},
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
