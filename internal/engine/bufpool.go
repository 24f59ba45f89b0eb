package engine

import (
	"math/bits"
	"sync"
)

// Unexpected eager payloads are copied into pooled buffers in power-of-two
// size classes, and the queue entries that hold them are pooled too, so a
// steady stream of early messages does not allocate.
const maxPooledClass = 24 // 16 MiB

var bufPools [maxPooledClass + 1]sync.Pool

func class(n int) int {
	if n <= 1 {
		return 0
	}
	return bits.Len(uint(n - 1))
}

// getBuf returns a buffer of n bytes, and the box to give back to putBuf.
func getBuf(n int) (*[]byte, []byte) {
	c := class(n)
	if c > maxPooledClass {
		b := make([]byte, n)
		return nil, b
	}
	if p, _ := bufPools[c].Get().(*[]byte); p != nil {
		return p, (*p)[:n]
	}
	b := make([]byte, 1<<c)
	return &b, b[:n]
}

func putBuf(p *[]byte) {
	if p != nil {
		bufPools[class(cap(*p))].Put(p)
	}
}

var inboundPool = sync.Pool{New: func() any { return new(inbound) }}

func newInbound() *inbound { return inboundPool.Get().(*inbound) }

// Each engine also keeps a few free queue entries and small payload
// buffers of its own, guarded by its mutex (every get and put happens under
// it). A sync.Pool alone misses whenever the goroutine that frees an entry
// runs on another P than the one that takes the next (the freeing P keeps
// it in its private slot, which no other P can reach): between goroutine
// ranks that is nearly every unexpected message.
const (
	localClasses  = 17 // up to 64 KiB, the default eager limit
	localPerClass = 4
	localInbound  = 16
)

type localPools struct {
	inbound  *inbound
	nInbound int
	bufs     [localClasses][localPerClass]*[]byte
	nBufs    [localClasses]int
}

// newInbound returns a free queue entry. e.mu is held.
func (e *Engine) newInbound() *inbound {
	if m := e.local.inbound; m != nil {
		e.local.inbound = m.next
		e.local.nInbound--
		m.next = nil
		return m
	}
	return newInbound()
}

// getBuf is getBuf with e's own buffers first. e.mu is held.
func (e *Engine) getBuf(n int) (*[]byte, []byte) {
	if c := class(n); c < localClasses {
		if k := e.local.nBufs[c]; k > 0 {
			p := e.local.bufs[c][k-1]
			e.local.bufs[c][k-1] = nil
			e.local.nBufs[c] = k - 1
			return p, (*p)[:n]
		}
	}
	return getBuf(n)
}

// putBuf gives a buffer from e.getBuf back. e.mu is held.
func (e *Engine) putBuf(p *[]byte) {
	if p == nil {
		return
	}
	if c := class(cap(*p)); c < localClasses && e.local.nBufs[c] < localPerClass && cap(*p) == 1<<c {
		e.local.bufs[c][e.local.nBufs[c]] = p
		e.local.nBufs[c]++
		return
	}
	putBuf(p)
}

// freeInbound returns m and its buffer to e's own pools, or to the shared
// ones when those are full. e.mu is held.
func (e *Engine) freeInbound(m *inbound) {
	e.putBuf(m.box)
	if e.local.nInbound >= localInbound {
		*m = inbound{}
		inboundPool.Put(m)
		return
	}
	*m = inbound{next: e.local.inbound}
	e.local.inbound = m
	e.local.nInbound++
}
