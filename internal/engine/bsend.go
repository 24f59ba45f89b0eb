package engine

import (
	"errors"
	"sort"
	"sync"
)

// BsendOverhead is the bookkeeping space each buffered send takes in the
// attached buffer on top of its data (MPI_BSEND_OVERHEAD).
const BsendOverhead = 64

// ErrBufferFull reports that a buffered send does not fit in the attached buffer.
var ErrBufferFull = errors.New("attached buffer too small for buffered send")

// ErrNoBuffer reports a buffered send with no buffer attached.
var ErrNoBuffer = errors.New("no buffer attached for buffered send")

// BsendBuffer is the buffer a rank attaches for buffered sends (Bsend). It
// carves one block per send out of the user's memory, first fit, and takes
// the block back when the send that reads from it completes. An automatic
// buffer (MPI-4.1's MPI_BUFFER_AUTOMATIC) has no memory of its own: each
// send gets a block of its size from the Go heap.
type BsendBuffer struct {
	mu     sync.Mutex
	mem    []byte
	auto   bool
	blocks []block // in use, sorted by offset
	active sync.WaitGroup
}

type block struct{ off, n int }

// Attach makes mem the buffer. It fails if one is attached already.
func (b *BsendBuffer) Attach(mem []byte) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.mem != nil || b.auto {
		return errors.New("a buffer is already attached")
	}
	if len(mem) == 0 {
		return errors.New("cannot attach an empty buffer")
	}
	b.mem = mem
	return nil
}

// AttachAuto makes the buffer automatic: every buffered send gets room of
// its own size, so none fails for lack of it. It fails if a buffer is
// attached already.
func (b *BsendBuffer) AttachAuto() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.mem != nil || b.auto {
		return errors.New("a buffer is already attached")
	}
	b.auto = true
	return nil
}

// Detach waits until every buffered send from the buffer has completed,
// then detaches it and returns it; an automatic buffer returns nil.
func (b *BsendBuffer) Detach() ([]byte, error) {
	b.active.Wait()
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.auto {
		b.auto = false
		return nil, nil
	}
	if b.mem == nil {
		return nil, errors.New("no buffer is attached")
	}
	mem := b.mem
	b.mem = nil
	return mem, nil
}

// Attached reports whether a buffer (automatic or not) is attached.
func (b *BsendBuffer) Attached() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.mem != nil || b.auto
}

// Flush waits until every buffered send from the buffer has completed
// (MPI-4.1's MPI_Buffer_flush); the buffer stays attached.
func (b *BsendBuffer) Flush() { b.active.Wait() }

// Alloc reserves room for n bytes of data and returns it together with a
// release function that gives the room back.
func (b *BsendBuffer) Alloc(n int) ([]byte, func(), error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.auto {
		b.active.Add(1)
		var once sync.Once
		return make([]byte, n), func() { once.Do(b.active.Done) }, nil
	}
	if b.mem == nil {
		return nil, nil, ErrNoBuffer
	}
	need := n + BsendOverhead
	off := 0
	at := len(b.blocks)
	for i, bl := range b.blocks {
		if bl.off-off >= need {
			at = i
			break
		}
		off = bl.off + bl.n
	}
	if at == len(b.blocks) && len(b.mem)-off < need {
		return nil, nil, ErrBufferFull
	}
	b.blocks = append(b.blocks, block{})
	copy(b.blocks[at+1:], b.blocks[at:])
	b.blocks[at] = block{off, need}
	b.active.Add(1)
	data := b.mem[off+BsendOverhead : off+need : off+need]
	var once sync.Once
	release := func() {
		once.Do(func() {
			b.mu.Lock()
			i := sort.Search(len(b.blocks), func(i int) bool { return b.blocks[i].off >= off })
			if i < len(b.blocks) && b.blocks[i].off == off {
				b.blocks = append(b.blocks[:i], b.blocks[i+1:]...)
			}
			b.mu.Unlock()
			b.active.Done()
		})
	}
	return data, release, nil
}
