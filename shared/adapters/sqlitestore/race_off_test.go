//go:build !race

package sqlitestore_test

const raceDetector = false
