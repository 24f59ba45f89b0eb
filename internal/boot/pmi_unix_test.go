//go:build unix

package boot

import (
	"net"
	"os"
	"syscall"
	"testing"
)

// socketPair returns the client's descriptor (for PMI_FD) and serves the
// other end.
func (f *fakePMI) socketPair(t *testing.T) int {
	t.Helper()
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	sf := os.NewFile(uintptr(fds[1]), "server")
	c, err := net.FileConn(sf)
	sf.Close()
	if err != nil {
		t.Fatal(err)
	}
	go f.serve(c)
	t.Cleanup(func() { syscall.Close(fds[0]); c.Close() })
	return fds[0]
}

// dupFD duplicates the descriptor of f.
func dupFD(f *os.File) (int, error) { return syscall.Dup(int(f.Fd())) }
