// Package wiringtest holds the test that each target carries only its own
// adapters (docs/wiring.md): the cloud functions none of the local ones, the
// local runner none of the cloud ones. It has no code of its own.
package wiringtest
