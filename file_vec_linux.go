package mpi

import (
	"os"

	"golang.org/x/sys/unix"
)

// iovMax is the most buffers one pwritev or preadv takes (IOV_MAX).
const iovMax = 1024

// writeVec writes bufs one after the other at offset off of fd with as
// few system calls as it can (pwritev), and reports whether it could: an
// aggregator whose pieces tile a run of the file writes them this way,
// without first copying them into one buffer.
func writeVec(fd *os.File, bufs [][]byte, off int64) (bool, error) {
	rc, err := fd.SyscallConn()
	if err != nil {
		return false, nil
	}
	own := false
	var werr error
	cerr := rc.Control(func(d uintptr) {
		for len(bufs) > 0 {
			n, err := unix.Pwritev(int(d), bufs[:min(len(bufs), iovMax)], off)
			if err == unix.EINTR {
				continue
			}
			if err != nil {
				werr = err
				return
			}
			off += int64(n)
			bufs = advance(bufs, n, &own)
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

// readVec reads into bufs, one after the other, from offset off of fd
// with as few system calls as it can (preadv), and reports whether it
// could and how many bytes it read: fewer than bufs hold only at the end
// of the file.
func readVec(fd *os.File, bufs [][]byte, off int64) (bool, int64, error) {
	rc, err := fd.SyscallConn()
	if err != nil {
		return false, 0, nil
	}
	own := false
	var got int64
	var rerr error
	cerr := rc.Control(func(d uintptr) {
		for len(bufs) > 0 {
			n, err := unix.Preadv(int(d), bufs[:min(len(bufs), iovMax)], off)
			if err == unix.EINTR {
				continue
			}
			if err != nil {
				rerr = err
				return
			}
			if n == 0 {
				return // the end of the file
			}
			off += int64(n)
			got += int64(n)
			bufs = advance(bufs, n, &own)
		}
	})
	if cerr != nil {
		return false, 0, nil
	}
	if rerr != nil {
		return true, got, &os.PathError{Op: "preadv", Path: fd.Name(), Err: rerr}
	}
	return true, got, nil
}

// advance drops the first n bytes of bufs, as dropBytes, on a copy of
// the caller's list (made once, *own then true) where a buffer is left
// partly done: the caller's list is never changed.
func advance(bufs [][]byte, n int, own *bool) [][]byte {
	k := 0
	for k < len(bufs) && n >= len(bufs[k]) {
		n -= len(bufs[k])
		k++
	}
	bufs = bufs[k:]
	if n == 0 {
		for len(bufs) > 0 && len(bufs[0]) == 0 {
			bufs = bufs[1:]
		}
		return bufs
	}
	if !*own {
		bufs = append([][]byte(nil), bufs...)
		*own = true
	}
	return dropBytes(bufs, n)
}

// dropBytes drops the first n bytes of bufs, partly done buffers
// included, and the empty buffers that follow.
func dropBytes(bufs [][]byte, n int) [][]byte {
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
	return bufs
}
