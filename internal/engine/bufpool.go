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

// freeInbound returns m and its payload buffer to their pools.
func freeInbound(m *inbound) {
	putBuf(m.box)
	*m = inbound{}
	inboundPool.Put(m)
}
