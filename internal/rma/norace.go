//go:build !race

package rma

const raceEnabled = false
