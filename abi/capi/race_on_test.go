//go:build cgo && race

package capi

// raceEnabled: the tests run under the race detector, which makes
// sync.Pool drop what it holds at random (allocation counts mean nothing).
const raceEnabled = true
