package app

import (
	"context"
	"os"
	"sync"
	"time"

	"ordersaga/shared/app/orchestrator"
	"ordersaga/shared/kit/config"
)

var (
	instanceMu sync.Mutex
	instance   *App
)

// coldStartTimeout bounds building the App (opening the YDB driver, its
// discovery) so a network blip fails fast instead of hanging the invocation.
const coldStartTimeout = 20 * time.Second

// Instance returns the App of this function instance, built from the
// environment with open (the target's adapters: cloudwiring.Open in the
// cloud functions) at cold start and reused by every invocation
// (connections survive between calls). Only success is cached: a failure (a
// misconfiguration, or YDB unreachable for a moment) is returned to this
// invocation and the next one tries again.
func Instance(open Opener) (*App, error) {
	instanceMu.Lock()
	defer instanceMu.Unlock()
	if instance != nil {
		return instance, nil
	}
	cfg, err := LoadConfig(os.Getenv)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), coldStartTimeout)
	defer cancel()
	a, err := New(ctx, cfg, open, Options{})
	if err != nil {
		return nil, err
	}
	instance = a
	return a, nil
}

// LoadConfig is config.Load plus the checks that need the step table:
// SAGA_LEASE must exceed the longest step timeout (orchestrator.CheckLease).
func LoadConfig(getenv config.Getenv) (config.Config, error) {
	cfg, err := config.Load(getenv)
	if err != nil {
		return config.Config{}, err
	}
	if err := orchestrator.CheckLease(cfg.Saga.Lease, orchestrator.CreateOrderSaga); err != nil {
		return config.Config{}, err
	}
	return cfg, nil
}
