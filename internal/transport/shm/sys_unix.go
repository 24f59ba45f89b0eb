//go:build linux || darwin || freebsd

package shm

import (
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// mapFile maps size bytes of the file f shared, read-write.
func mapFile(f *os.File, size int) ([]byte, error) {
	return unix.Mmap(int(f.Fd()), 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
}

// unmap releases a mapping made by mapFile.
func unmap(b []byte) {
	if b != nil {
		unix.Munmap(b)
	}
}

// ownedByMe reports whether the file st describes belongs to this
// process's user.
func ownedByMe(st os.FileInfo) bool {
	s, ok := st.Sys().(*syscall.Stat_t)
	return ok && int(s.Uid) == os.Getuid()
}

// Available reports whether processes of one node can talk through shared
// memory on this platform, and how (or why not), for mpigo info.
func Available() (bool, string) {
	return true, platform
}
