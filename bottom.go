package mpi

import (
	"sort"
	"strconv"
	"sync"
	"unsafe"
	"weak"
)

// This file holds addresses (MPI_Get_address) and MPI_BOTTOM: datatypes
// whose displacements are absolute addresses, used with the buffer Bottom.
//
// Go cannot turn an address back into memory: a uintptr is not a pointer,
// the garbage collector does not see it, and the memory may be gone. So
// GetAddress remembers, beside each address it hands out, a weak pointer
// to the value it came from. A call with Bottom finds, for every byte the
// datatype reaches, a remembered value that is still alive and covers it,
// and reads or writes the memory through that value's own pointer. An
// address that GetAddress did not hand out, or whose value has been
// collected, is refused with ErrBuffer: Bottom never touches memory that
// is not a live Go value.

// Bottom, passed as the buffer of a point-to-point call (Send, Recv,
// Isend, Irecv, SendInit, ..., Sendrecv) or of Pack and Unpack, makes the
// datatype's displacements absolute addresses (MPI_BOTTOM): build it with
// NewStruct (or NewHindexed, ...) from addresses of GetAddress, to send
// fields of separate variables in one message. Every byte the datatype
// reaches must lie in a value whose address (or a part of it) was taken
// with GetAddress and that is still reachable; other addresses give
// ErrBuffer. Collectives do not take Bottom. Only the identity of Bottom
// counts: do not modify or reslice it.
var Bottom = make([]byte, 0, 1)

func isBottom(b []byte) bool {
	return cap(b) == cap(Bottom) && len(b) == 0 && unsafe.SliceData(b) == unsafe.SliceData(Bottom)
}

// GetAddress returns the address of *p (MPI_Get_address). The difference
// of two addresses within one value is a displacement for a derived
// datatype used with that value's memory as the buffer (BytesOf(&v), or
// AsBytes of a slice): the displacement of field f of v is
// GetAddress(&v.f) - GetAddress(&v), which AintDiff also computes. The
// addresses themselves are displacements for the buffer Bottom, as long
// as the value stays reachable. A nil p gives 0.
func GetAddress[T any](p *T) int {
	if p == nil {
		return 0
	}
	a := uintptr(unsafe.Pointer(p))
	if n := unsafe.Sizeof(*p); n > 0 {
		w := weak.Make(p)
		remember(a, n, func() unsafe.Pointer { return unsafe.Pointer(w.Value()) })
	}
	return int(a)
}

// A known is a Go value GetAddress saw: its address range and a weak
// pointer to it.
type known struct {
	lo, hi uintptr
	get    func() unsafe.Pointer // nil once the value has been collected
}

var knowns struct {
	sync.Mutex
	list  []known // sorted by lo
	prune int     // prune dead entries when the list reaches this length
}

// remember records the value [a, a+n) behind get.
func remember(a, n uintptr, get func() unsafe.Pointer) {
	knowns.Lock()
	defer knowns.Unlock()
	l := knowns.list
	i := sort.Search(len(l), func(i int) bool { return l[i].lo >= a })
	for j := i; j < len(l) && l[j].lo == a; j++ {
		if l[j].hi == a+n && l[j].get() != nil {
			return // known and alive
		}
	}
	if len(l) >= knowns.prune {
		live := l[:0]
		for _, k := range l {
			if k.get() != nil {
				live = append(live, k)
			}
		}
		clear(l[len(live):])
		l = live
		knowns.prune = 2*len(l) + 64
		i = sort.Search(len(l), func(i int) bool { return l[i].lo >= a })
	}
	l = append(l, known{})
	copy(l[i+1:], l[i:])
	l[i] = known{lo: a, hi: a + n, get: get}
	knowns.list = l
}

// memoryAt returns the memory of a live known value from address a on:
// the one that reaches furthest past a. ok is false if no live value
// GetAddress saw holds a. knowns is locked.
func memoryAt(a uintptr) (mem []byte, ok bool) {
	l := knowns.list
	i := sort.Search(len(l), func(i int) bool { return l[i].lo > a })
	var best known
	var bestPtr unsafe.Pointer
	for j := i - 1; j >= 0; j-- {
		k := l[j]
		if k.hi <= a || k.hi <= best.hi {
			continue
		}
		if p := k.get(); p != nil {
			best, bestPtr = k, p
		}
	}
	if bestPtr == nil {
		return nil, false
	}
	whole := unsafe.Slice((*byte)(bestPtr), best.hi-best.lo)
	return whole[a-best.lo:], true
}

// maxBottomParts bounds the pieces of memory one Bottom call may touch.
const maxBottomParts = 1 << 22

// bottomLayout is count elements of a datatype with absolute addresses,
// resolved into pieces of live Go memory in packed order.
type bottomLayout struct {
	parts []bottomPart
	n     int
}

type bottomPart struct {
	off int    // packed offset of mem[0]
	mem []byte // the value's own memory
}

// resolveBottom resolves count elements of dt at absolute addresses. It
// returns a description of the problem if some byte is not known memory.
func resolveBottom(dt *Datatype, count int) (*bottomLayout, string) {
	t := dt.t
	l := &bottomLayout{n: count * dt.size}
	if l.n == 0 {
		return l, ""
	}
	if count > maxBottomParts || count*len(t.Segs) > maxBottomParts {
		return nil, "too many pieces for Bottom (" + strconv.Itoa(count) + " elements of " + dt.name + ")"
	}
	knowns.Lock()
	defer knowns.Unlock()
	off := 0
	for e := range count {
		base := int64(e) * t.Extent()
		for _, s := range t.Segs {
			a := base + s.Off
			if a <= 0 {
				return nil, "address " + strconv.Itoa(int(a)) + " of " + dt.name + " is not a Go value's (use GetAddress)"
			}
			for left := s.Len; left > 0; {
				mem, ok := memoryAt(uintptr(a))
				if !ok {
					return nil, "no live value of GetAddress holds address " + hexAddr(uintptr(a)) + " that " + dt.name + " reaches"
				}
				k := min(int64(len(mem)), left)
				if len(l.parts) >= maxBottomParts {
					return nil, "too many pieces for Bottom"
				}
				l.parts = append(l.parts, bottomPart{off: off, mem: mem[:k]})
				off += int(k)
				a += k
				left -= k
			}
		}
	}
	return l, ""
}

func hexAddr(a uintptr) string {
	const digits = "0123456789abcdef"
	var b [2 + 16]byte
	i := len(b)
	for {
		i--
		b[i] = digits[a&15]
		a >>= 4
		if a == 0 {
			break
		}
	}
	i -= 2
	b[i], b[i+1] = '0', 'x'
	return string(b[i:])
}

func (l *bottomLayout) Len() int                   { return l.n }
func (l *bottomLayout) Pack(dst []byte, off int)   { l.copy(dst, off, true) }
func (l *bottomLayout) Unpack(src []byte, off int) { l.copy(src, off, false) }

func (l *bottomLayout) copy(p []byte, off int, pack bool) {
	i := sort.Search(len(l.parts), func(i int) bool { return l.parts[i].off+len(l.parts[i].mem) > off })
	for ; len(p) > 0 && i < len(l.parts); i++ {
		pt := l.parts[i]
		in := off - pt.off
		k := min(len(pt.mem)-in, len(p))
		if pack {
			copy(p[:k], pt.mem[in:in+k])
		} else {
			copy(pt.mem[in:in+k], p[:k])
		}
		p, off = p[k:], off+k
	}
}
