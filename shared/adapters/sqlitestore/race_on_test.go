//go:build race

package sqlitestore_test

// raceDetector is true under -race, which runs the 10 000-aggregate tests
// too slowly for scripts/test.sh's race step; the plain test run covers them.
const raceDetector = true
