//go:build !race

package orchestrator_test

const raceEnabled = false
