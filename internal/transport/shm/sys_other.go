//go:build !linux && !darwin && !freebsd

package shm

import (
	"errors"
	"os"
	"runtime"
	"sync/atomic"
	"time"
)

// This platform has no shared-memory transport: Available says so, New
// fails, and processes of one node talk over tcp. The functions below only
// let the package compile.

// Available reports whether processes of one node can talk through shared
// memory on this platform, and how (or why not), for mpigo info.
func Available() (bool, string) {
	return false, "no shared-memory transport on " + runtime.GOOS + " (Linux, macOS and FreeBSD have one): processes of one node talk over tcp"
}

var errUnsupported = errors.New("shm: no shared memory on " + runtime.GOOS)

func defaultDir() string { return os.TempDir() }

func mapFile(f *os.File, size int) ([]byte, error) { return nil, errUnsupported }

func unmap(b []byte) {}

func retire(b []byte) error { return nil }

func ownedByMe(st os.FileInfo) bool { return false }

func futexWait(w *atomic.Uint32, val uint32, d time.Duration) { time.Sleep(d) }

func futexWake(w *atomic.Uint32) {}

func schedYield() {}

func alive(pid int) bool { return true }

// Fetch always fails: there is no cross-memory attach on this platform.
func Fetch(pid, addr uint64, dst []byte) error { return errUnsupported }

// CMAStatus says whether single-copy transfers by cross-memory attach are
// possible between processes on this machine: never on this platform.
func CMAStatus() (bool, string) {
	return false, "no cross-memory attach on " + runtime.GOOS
}

func mapAnon(size int) ([]byte, error) { return nil, errUnsupported }
