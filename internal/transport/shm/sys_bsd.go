//go:build darwin || freebsd

package shm

import (
	"errors"
	"fmt"
	"os"
	"runtime"

	"golang.org/x/sys/unix"
)

// defaultDir is where inboxes live unless Config.Dir says otherwise.
// There is no /dev/shm here: the inboxes are ordinary files of the
// temporary folder, mapped shared. Each is unlinked as soon as every peer
// has mapped it, so the kernel has no reason to write its pages back.
func defaultDir() string { return os.TempDir() }

// errNoCMA is Fetch's answer where the kernel offers no cross-memory
// attach.
var errNoCMA = fmt.Errorf("shm: no cross-memory attach on %s", runtime.GOOS)

// Fetch would copy len(dst) bytes at addr in process pid into dst; there
// is no process_vm_readv on this platform, so it always fails and large
// messages go through the rings.
func Fetch(pid, addr uint64, dst []byte) error { return errNoCMA }

// CMAStatus says whether single-copy transfers by cross-memory attach are
// possible between processes on this machine: never on this platform.
func CMAStatus() (bool, string) {
	return false, "no cross-memory attach on " + runtime.GOOS + "; large messages are copied through the rings"
}

// alive reports whether process pid still exists. A zombie counts as alive
// here (there is no /proc to tell): the launcher reaps its ranks at once,
// and a rank that is gone is also seen by its closed connections.
func alive(pid int) bool {
	if pid <= 0 || pid == os.Getpid() {
		return true
	}
	return !errors.Is(unix.Kill(pid, 0), unix.ESRCH)
}

// noReserve: MAP_NORESERVE is Linux's; here retire passes no such flag.
const noReserve = 0
