package memtest

import (
	"encoding/binary"
	"slices"
	"sync"
	"testing"
	"unsafe"

	"github.com/mpigo/mpi/internal/transport"
)

// ExerciseAtomics has owner expose 64 bytes and each of origins (which
// reach owner as rank peer; owner among them reaches itself) apply
// integer operations to them through transport.Atomics: every operation
// on 8- and 4-byte integers, with the value before; a compare-and-swap
// that fails; several integers in one call; misaligned or outside
// integers refused before the transport sees them; and fetch-and-adds
// from every origin at once, four goroutines each, which must hand out
// every ticket once and leave the exact sum.
func ExerciseAtomics(t *testing.T, owner transport.RemoteMemory, origins []transport.RemoteMemory, peer int) {
	t.Helper()
	mem := make([]uint64, 8) // 8-byte aligned
	b := unsafe.Slice((*byte)(unsafe.Pointer(&mem[0])), 64)
	e, err := owner.ExposeMemory(b)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	var as []transport.Atomics
	for i, o := range origins {
		r, err := o.OpenRemote(peer, e.Key())
		if err != nil {
			t.Fatalf("origin %d: %v", i, err)
		}
		defer r.Close()
		a, ok := r.(transport.Atomics)
		if !ok {
			t.Fatalf("origin %d: the remote memory has no atomics", i)
		}
		as = append(as, a)
	}
	a := as[0]
	for _, c := range []struct {
		off, size int
		ok        bool
	}{{0, 8, true}, {56, 8, true}, {60, 4, true}, {4, 4, true}, {4, 8, false}, {2, 4, false}, {64, 4, false}, {-8, 8, false}, {0, 2, false}} {
		if got := a.AtomicOK(c.off, c.size); got != c.ok {
			t.Errorf("AtomicOK(%d, %d) = %v, want %v", c.off, c.size, got, c.ok)
		}
	}
	if err := a.Atomics(transport.AtomicAdd, 8, []transport.Atomic{{Off: 4, V: 1}}); err == nil {
		t.Error("a misaligned 8-byte add was not refused")
	}
	ne := binary.NativeEndian
	type opCase struct {
		op             transport.AtomicOp
		size           int
		init, v, cmp   uint64
		after, wantOld uint64
	}
	cases := []opCase{
		{transport.AtomicAdd, 8, 40, 2, 0, 42, 40},
		{transport.AtomicAdd, 8, 1, 1<<64 - 1, 0, 0, 1}, // -1: two's complement
		{transport.AtomicAnd, 8, 0xff0f, 0x0ff0, 0, 0x0f00, 0xff0f},
		{transport.AtomicOr, 8, 0xf0, 0x0f, 0, 0xff, 0xf0},
		{transport.AtomicXor, 8, 0xff, 0x0f, 0, 0xf0, 0xff},
		{transport.AtomicSwap, 8, 7, 1 << 40, 0, 1 << 40, 7},
		{transport.AtomicCswap, 8, 7, 9, 7, 9, 7},
		{transport.AtomicCswap, 8, 7, 9, 8, 7, 7},               // compare fails: left
		{transport.AtomicAdd, 4, 1<<32 - 1, 1, 0, 0, 1<<32 - 1}, // wraps in 4 bytes
		{transport.AtomicXor, 4, 0xf0f0, 0xffff, 0, 0x0f0f, 0xf0f0},
		{transport.AtomicSwap, 4, 3, 4, 0, 4, 3},
		{transport.AtomicCswap, 4, 3, 4, 3, 4, 3},
		{transport.AtomicAnd, 4, 0xf0, 0x3c, 0, 0x30, 0xf0},
		{transport.AtomicOr, 4, 0xf0, 0x3c, 0, 0xfc, 0xf0},
	}
	for o, c := range func(yield func(int, opCase) bool) {
		for o := range as { // every origin, the owner's own endpoint too
			for _, c := range cases {
				if !yield(o, c) {
					return
				}
			}
		}
	} {
		a := as[o]
		off := 8 // the integer's neighbours must not change
		clear(b)
		if c.size == 8 {
			ne.PutUint64(b[off:], c.init)
		} else {
			ne.PutUint32(b[off:], uint32(c.init))
		}
		x := []transport.Atomic{{Off: off, V: c.v, Cmp: c.cmp}}
		if err := a.Atomics(c.op, c.size, x); err != nil {
			t.Fatalf("origin %d: op %d of %d bytes: %v", o, c.op, c.size, err)
		}
		var got uint64
		if c.size == 8 {
			got = ne.Uint64(b[off:])
		} else {
			got = uint64(ne.Uint32(b[off:]))
		}
		if got != c.after || x[0].Old != c.wantOld {
			t.Errorf("origin %d: op %d of %d bytes on %#x with %#x (%#x): %#x, old %#x; want %#x, old %#x", o, c.op, c.size, c.init, c.v, c.cmp, got, x[0].Old, c.after, c.wantOld)
		}
		if slices.ContainsFunc(b[:off], func(v byte) bool { return v != 0 }) || slices.ContainsFunc(b[off+c.size:], func(v byte) bool { return v != 0 }) {
			t.Errorf("origin %d: op %d of %d bytes changed bytes beside the integer: % x", o, c.op, c.size, b)
		}
	}
	// Several integers in one call, from every origin: each one's value
	// before comes back.
	for o, a := range as {
		many := make([]transport.Atomic, 16)
		for i := range many {
			ne.PutUint32(b[4*i:], uint32(100+i))
			many[i] = transport.Atomic{Off: 4 * i, V: uint64(i + 1)}
		}
		if err := a.Atomics(transport.AtomicAdd, 4, many); err != nil {
			t.Fatal(err)
		}
		for i := range many {
			if v := ne.Uint32(b[4*i:]); v != uint32(100+2*i+1) || many[i].Old != uint64(100+i) {
				t.Errorf("origin %d: integer %d of one call: %d (old %d), want %d (old %d)", o, i, v, many[i].Old, 100+2*i+1, 100+i)
			}
		}
		x := []transport.Atomic{{Off: 0, V: 1}, {Off: 8, V: 2}}
		o0, o1 := ne.Uint64(b), ne.Uint64(b[8:]) // the adds' results
		if err := a.Atomics(transport.AtomicOr, 8, x); err != nil || ne.Uint64(b) != o0|1 || ne.Uint64(b[8:]) != o1|2 || x[0].Old != o0 || x[1].Old != o1 {
			t.Errorf("origin %d: an or of two 8-byte integers: %v, old %#x, %#x", o, err, x[0].Old, x[1].Old)
		}
	}
	// Fetch-and-adds from every origin at once: every ticket once.
	clear(b)
	const per, gs = 200, 4
	tickets := make(chan uint64, len(as)*gs*per)
	var wg sync.WaitGroup
	for _, o := range as {
		for range gs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range per {
					x := []transport.Atomic{{Off: 16, V: 1}, {Off: 44, V: 3}}
					if err := o.Atomics(transport.AtomicAdd, 8, x[:1]); err != nil {
						t.Error(err)
						return
					}
					if err := o.Atomics(transport.AtomicAdd, 4, x[1:]); err != nil {
						t.Error(err)
						return
					}
					tickets <- x[0].Old
				}
			}()
		}
	}
	wg.Wait()
	close(tickets)
	seen := make([]bool, len(as)*gs*per)
	for v := range tickets {
		if v >= uint64(len(seen)) || seen[v] {
			t.Fatalf("ticket %d handed out twice or out of range", v)
		}
		seen[v] = true
	}
	n := uint64(len(as) * gs * per)
	if got := ne.Uint64(b[16:]); got != n {
		t.Errorf("after %d fetch-and-adds of 1: %d", n, got)
	}
	if got := ne.Uint32(b[44:]); got != uint32(3*n) {
		t.Errorf("after %d adds of 3 to a 4-byte integer: %d", n, got)
	}
}
