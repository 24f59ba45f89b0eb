package shm

import (
	"encoding/binary"
	"strconv"
	"unsafe"
)

// archLayout describes this machine's memory layout as the control page
// records it: a 32-bit word written in the machine's own byte order, then
// the size of a pointer. Processes of another byte order or word size
// read the atomic words of a ring differently, so two inboxes whose
// layouts differ are never attached to each other.
var archLayout = func() (l [5]byte) {
	binary.NativeEndian.PutUint32(l[:4], 0x01020304)
	l[4] = byte(unsafe.Sizeof(uintptr(0)))
	return l
}()

// describeLayout names a recorded layout for an error message.
func describeLayout(b []byte) string {
	order := "unknown byte order"
	switch binary.BigEndian.Uint32(b[:4]) {
	case 0x01020304:
		order = "big-endian"
	case 0x04030201:
		order = "little-endian"
	}
	return order + ", " + strconv.Itoa(8*int(b[4])) + "-bit words"
}
