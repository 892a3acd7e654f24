//go:build race

package chaos

// raceEnabled: the race detector slows a run about fifteen times.
const raceEnabled = true
