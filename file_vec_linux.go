package mpi

import (
	"os"

	"golang.org/x/sys/unix"
)

// writeVec writes bufs one after the other at offset off of fd with as
// few system calls as it can (pwritev), and reports whether it could: an
// aggregator whose pieces tile a run of the file writes them this way,
// without first copying them into one buffer.
func writeVec(fd *os.File, bufs [][]byte, off int64) (bool, error) {
	rc, err := fd.SyscallConn()
	if err != nil {
		return false, nil
	}
	var werr error
	cerr := rc.Control(func(d uintptr) {
		for len(bufs) > 0 {
			batch := bufs[:min(len(bufs), 1024)] // IOV_MAX
			n, err := unix.Pwritev(int(d), batch, off)
			if err == unix.EINTR {
				continue
			}
			if err != nil {
				werr = err
				return
			}
			off += int64(n)
			// Drop what was written, partly written buffers included.
			for n > 0 && len(bufs) > 0 {
				if n >= len(bufs[0]) {
					n -= len(bufs[0])
					bufs = bufs[1:]
				} else {
					bufs[0] = bufs[0][n:]
					n = 0
				}
			}
			for len(bufs) > 0 && len(bufs[0]) == 0 {
				bufs = bufs[1:]
			}
		}
	})
	if cerr != nil {
		return false, nil
	}
	if werr != nil {
		return true, &os.PathError{Op: "pwritev", Path: fd.Name(), Err: werr}
	}
	return true, nil
}
