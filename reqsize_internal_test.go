package mpi

import (
	"testing"
	"unsafe"
)

// TestRequestBlock: a Request stays small (every non-blocking call
// allocates one, and the garbage collector's work grows with their
// bytes), and a block of reqBlock Requests fills the allocator's 8 KiB
// size class without spilling into the next.
func TestRequestBlock(t *testing.T) {
	size := int(unsafe.Sizeof(Request{}))
	if size > 160 {
		t.Errorf("Request is %d bytes, want at most 160: move what few requests use into reqMore", size)
	}
	if reqBlock*size > 8192 || (reqBlock+1)*size <= 8192 {
		t.Errorf("reqBlock is %d, want %d: 8 KiB of %d-byte Requests", reqBlock, 8192/size, size)
	}
}
