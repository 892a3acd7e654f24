//go:build race

package orchestrator_test

// raceEnabled: the race detector slows SQLite about tenfold, so the
// randomized run uses one seed under it.
const raceEnabled = true
