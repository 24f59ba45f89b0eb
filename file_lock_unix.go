//go:build unix

package mpi

import (
	"fmt"
	"os"
	"syscall"
)

// fileID names the file itself (device and inode), so that ranks of one
// process that opened it under different names share its locks.
func fileID(fd *os.File, name string) string {
	if st, err := fd.Stat(); err == nil {
		if s, ok := st.Sys().(*syscall.Stat_t); ok {
			return fmt.Sprintf("%d:%d", s.Dev, s.Ino)
		}
	}
	return name
}

// lockRange takes a write lock on bytes [lo, hi) of fd for other
// processes (fcntl byte-range locks); ranks of this process are excluded
// by the in-process lock that lockFile takes first.
func lockRange(fd *os.File, lo, hi int64, lock bool) error {
	lk := syscall.Flock_t{Type: syscall.F_WRLCK, Whence: 0, Start: lo, Len: hi - lo}
	if !lock {
		lk.Type = syscall.F_UNLCK
	}
	for {
		err := syscall.FcntlFlock(fd.Fd(), syscall.F_SETLKW, &lk)
		if err != syscall.EINTR {
			return err
		}
	}
}
