//go:build !linux

package shm

import (
	"errors"
	"os"
)

// Outside Linux a sleeping poller waits in the platform's futex (or naps,
// on macOS); see wake_linux.go for why Linux uses a pipe.

var errNoWakePipe = errors.New("shm: no wake-up pipe on this platform")

func makeWakePipe(name string) (*os.File, error) { return nil, errNoWakePipe }

func openWakePipe(name string) (int, error) { return -1, errNoWakePipe }

func wakePipe(fd int) {}

func closeWakePipe(fd int) {}
