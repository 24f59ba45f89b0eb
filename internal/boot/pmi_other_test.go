//go:build !unix

package boot

import (
	"errors"
	"os"
	"testing"
)

// socketPair would give the client a descriptor for PMI_FD: a Unix socket
// pair, which this platform does not have.
func (f *fakePMI) socketPair(t *testing.T) int {
	t.Helper()
	t.Skip("PMI_FD needs a Unix socket pair")
	return -1
}

// dupFD would duplicate the descriptor of f; descriptors here are handles
// that Detect cannot take over.
func dupFD(f *os.File) (int, error) {
	return 0, errors.ErrUnsupported
}
