package shm

import (
	"os"

	"golang.org/x/sys/unix"
)

// A sleeping poller waits on a wake-up pipe (a FIFO beside the inbox)
// through Go's network poller, not in a futex: a goroutine blocked in a
// system call keeps its processor until the runtime's monitor takes it
// back, and the monitor naps up to 10 ms when the process is idle. A rank
// process has one processor when the node has no more cores than ranks
// (device.ShareCores), so while its poller slept in the futex no timer
// of the rank fired: a worker's time.Sleep(1ms) lasted 2 ms on average and
// up to 20 (docs/internals.md, "Waking a sleeping poller"). Parked on the
// pipe, the poller holds nothing.

// makeWakePipe creates the FIFO name and opens it for reading, without
// blocking: the file is in the network poller, so reads with a deadline
// park the goroutine. It is opened for writing too (Linux allows both on a
// FIFO), so that it never reads as closed while no peer has it open.
func makeWakePipe(name string) (*os.File, error) {
	if err := unix.Mkfifo(name, 0o600); err != nil {
		return nil, err
	}
	fd, err := unix.Open(name, unix.O_RDWR|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		os.Remove(name)
		return nil, err
	}
	return os.NewFile(uintptr(fd), name), nil
}

// openWakePipe opens a peer's FIFO to wake it. Read-write as well: with a
// reader always present (this descriptor), a write never raises SIGPIPE,
// even to a peer that died; a pipe that fills because nobody drains it
// makes the write fail with EAGAIN, which wakePipe ignores.
func openWakePipe(name string) (int, error) {
	return unix.Open(name, unix.O_RDWR|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
}

// wakePipe writes one byte to a peer's FIFO: its poller wakes.
func wakePipe(fd int) {
	b := [1]byte{1}
	unix.Write(fd, b[:])
}

// closeWakePipe closes what openWakePipe opened.
func closeWakePipe(fd int) { unix.Close(fd) }
