package app

import (
	"context"
	"os"
	"sync"

	"ordersaga/shared/config"
)

var (
	instanceOnce sync.Once
	instance     *App
	instanceErr  error
)

// Instance returns the App of this function instance, built once from the
// environment at cold start and reused by every invocation (connections
// survive between calls). A configuration error is returned on every call.
func Instance() (*App, error) {
	instanceOnce.Do(func() {
		cfg, err := config.Load(os.Getenv)
		if err != nil {
			instanceErr = err
			return
		}
		instance, instanceErr = New(context.Background(), cfg, Options{})
	})
	return instance, instanceErr
}
