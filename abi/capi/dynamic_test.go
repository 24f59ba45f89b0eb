//go:build cgo

package capi

import (
	"strings"
	"testing"
	"unsafe"
)

// A port name that does not fit in the program's MPI_MAX_PORT_NAME
// buffer is MPI_ERR_PORT, and nothing is written; one that fits is
// copied with its terminator. (mpigo's port names are about 60 bytes:
// only a host name of nearly a kilobyte makes one too long, which a C
// test cannot arrange.)
func TestPutPortName(t *testing.T) {
	buf := make([]byte, MPI_MAX_PORT_NAME)
	for i := range buf {
		buf[i] = 'x'
	}
	long := "mpigo-port:" + strings.Repeat("a", MPI_MAX_PORT_NAME)
	err := putPortName(unsafe.Pointer(&buf[0]), long)
	if err == nil || classOf(err) != MPI_ERR_PORT {
		t.Fatalf("a name of %d bytes: %v, want MPI_ERR_PORT", len(long), err)
	}
	if buf[0] != 'x' {
		t.Errorf("the buffer was written")
	}
	exact := strings.Repeat("p", MPI_MAX_PORT_NAME-1)
	if err := putPortName(unsafe.Pointer(&buf[0]), exact); err != nil {
		t.Fatalf("a name of MPI_MAX_PORT_NAME-1 bytes: %v", err)
	}
	if string(buf[:len(exact)]) != exact || buf[len(exact)] != 0 {
		t.Errorf("the name was not copied with its terminator")
	}
}

// argvArg reads a C argument vector up to its NULL; MPI_ARGV_NULL is no
// arguments.
func TestArgvArg(t *testing.T) {
	if args, err := argvArg(nil); err != nil || args != nil {
		t.Errorf("MPI_ARGV_NULL: %q, %v", args, err)
	}
	a, b := []byte("one\x00"), []byte("two words\x00")
	argv := []unsafe.Pointer{unsafe.Pointer(&a[0]), unsafe.Pointer(&b[0]), nil}
	args, err := argvArg(unsafe.Pointer(&argv[0]))
	if err != nil || len(args) != 2 || args[0] != "one" || args[1] != "two words" {
		t.Errorf("argv: %q, %v", args, err)
	}
}
