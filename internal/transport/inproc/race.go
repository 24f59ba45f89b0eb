//go:build race

package inproc

// raceEnabled reports whether the race detector is on (see putLine).
const raceEnabled = true
