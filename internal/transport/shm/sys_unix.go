//go:build linux || darwin || freebsd

package shm

import (
	"os"
	"syscall"
	"unsafe"

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

// retire maps private zeroed pages over b with MAP_FIXED: the shared
// pages are released (the file is unlinked, so they go when the last
// process lets them go) and the addresses stay valid. noReserve asks,
// where the system has it, that the pages take no swap or commit charge:
// they are only ever touched by a program that used a slice after Free.
func retire(b []byte) error {
	if len(b) == 0 {
		return nil
	}
	_, err := unix.MmapPtr(-1, 0, unsafe.Pointer(&b[0]), uintptr(len(b)),
		unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON|unix.MAP_FIXED|noReserve)
	return err
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

// mapAnon maps size bytes of zeroed private memory, outside Go's heap.
func mapAnon(size int) ([]byte, error) {
	return unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON)
}
