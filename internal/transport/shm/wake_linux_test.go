package shm

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/mpigo/mpi/internal/wire"
)

// TestSleepingPollerHoldsNoProcessor: a poller with nothing to do sleeps
// parked on its wake-up pipe ("IO wait"), not in a system call. Asleep in
// the futex it kept its processor, and in a rank process with one (the
// usual share of a node with a core per rank) no timer fired until Go's
// monitor took the processor back: a worker's 1 ms sleeps lasted 2 ms on
// average, up to 20. Senders still wake it: the frames of a second round,
// sent after both pollers slept, all arrive.
func TestSleepingPollerHoldsNoProcessor(t *testing.T) {
	needShm(t)
	got := make(chan int, 8)
	ts := endpoints(t, 2, Config{Spin: -1}, func(rank int, f wire.Frame) { got <- rank })
	asleep := func() bool {
		return ts[0].sleeping.Load() == 1 && ts[1].sleeping.Load() == 1
	}
	deadline := time.Now().Add(10 * time.Second)
	for !asleep() {
		if time.Now().After(deadline) {
			t.Fatal("the pollers never slept")
		}
		time.Sleep(time.Millisecond)
	}
	time.Sleep(20 * time.Millisecond) // into the sleep, past the check before it
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	pollers := 0
	for _, g := range strings.Split(string(buf), "\n\n") {
		if !strings.Contains(g, "shm.(*Transport).poll(") {
			continue
		}
		pollers++
		head, _, _ := strings.Cut(g, "\n")
		if !strings.Contains(head, "[IO wait") {
			t.Errorf("a sleeping poller is not parked on its pipe: %s\n%s", head, g)
		}
	}
	if pollers != 2 {
		t.Fatalf("found %d pollers among the goroutines, want 2", pollers)
	}
	for round := 0; round < 3; round++ {
		for from := 0; from < 2; from++ {
			f := wire.Frame{Header: wire.Header{Kind: wire.Eager, Tag: int32(round)}, From: from, To: 1 - from}
			if err := ts[from].Send(f); err != nil {
				t.Fatal(err)
			}
		}
		for range 2 {
			select {
			case <-got:
			case <-time.After(10 * time.Second):
				t.Fatal("a sleeping poller was not woken by a frame")
			}
		}
		for !asleep() {
			if time.Now().After(deadline.Add(10 * time.Second)) {
				t.Fatal("the pollers never slept again")
			}
			time.Sleep(time.Millisecond)
		}
	}
}

// RemoveStale removes the wake-up pipe of an inbox it removes, or of one
// that is gone, and keeps a live job's and what is not a pipe.
func TestRemoveStaleWakePipes(t *testing.T) {
	dir := t.TempDir()
	old := time.Now().Add(-time.Hour)
	file := func(name string, pid int, fifo bool) string {
		p := filepath.Join(dir, name)
		if fifo {
			if err := unix.Mkfifo(p, 0o600); err != nil {
				t.Fatal(err)
			}
		} else {
			b := make([]byte, ctlSize)
			copy(b, magic)
			binary.LittleEndian.PutUint64(b[offPid:], uint64(pid))
			if err := os.WriteFile(p, b, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		os.Chtimes(p, old, old)
		return p
	}
	dead := 1 << 30
	gone := []string{
		file("mpigo-21-0", dead, false), file("mpigo-21-0.wake", 0, true), // a dead job's pair
		file("mpigo-22-3.wake", 0, true), // its inbox is gone
	}
	kept := []string{
		file("mpigo-23-0", os.Getpid(), false), file("mpigo-23-0.wake", 0, true), // a live job's
		file("mpigo-24-0.wake", dead, false), // not a pipe
	}
	if n := RemoveStale(dir, time.Minute); n != len(gone) {
		t.Errorf("removed %d, want %d", n, len(gone))
	}
	for _, p := range gone {
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("%s is still there", p)
		}
	}
	for _, p := range kept {
		if _, err := os.Lstat(p); err != nil {
			t.Errorf("%s was removed", p)
		}
	}
}
