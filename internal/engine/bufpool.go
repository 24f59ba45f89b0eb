package engine

import (
	"math/bits"
	"sync"
)

// Unexpected eager payloads are copied into pooled buffers in power-of-two
// size classes, so that a steady stream of early messages does not allocate.
const maxPooledClass = 24 // 16 MiB

var bufPools [maxPooledClass + 1]sync.Pool

func class(n int) int {
	if n <= 1 {
		return 0
	}
	return bits.Len(uint(n - 1))
}

func getBuf(n int) []byte {
	c := class(n)
	if c > maxPooledClass {
		return make([]byte, n)
	}
	if p, _ := bufPools[c].Get().(*[]byte); p != nil {
		return (*p)[:n]
	}
	return make([]byte, n, 1<<c)
}

func putBuf(b []byte) {
	if b == nil {
		return
	}
	c := class(cap(b))
	if c > maxPooledClass || cap(b) != 1<<c {
		return
	}
	b = b[:cap(b)]
	bufPools[c].Put(&b)
}
