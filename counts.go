package mpi

import (
	"math"

	"github.com/mpigo/mpi/internal/checked"
)

// This file holds the arithmetic of sizes that users control: a count
// times an element size, a sum of counts, a displacement times an extent.
// Every such product goes through internal/checked, and one that does not
// fit in an int is an ErrCount error instead of a wrapped, small number.

// countBytes returns the bytes of count elements of size bytes, and false
// if count is negative or the product does not fit in an int.
func countBytes(count, size int) (int, bool) {
	if count < 0 {
		return 0, false
	}
	return checked.Mul(count, size)
}

// maxAlloc is the most bytes one allocation a user's count asks for may
// take: 2^47, the address space of a 64-bit process on today's machines
// (x86-64 and arm64 with 4-level page tables), or the largest int on a
// 32-bit one. A request beyond it can never succeed, and Go's make would
// answer it with a panic (len out of range) or a fatal out-of-memory
// error, neither of which a program can handle: calls refuse it up front
// with ErrCount. A request below it may still exceed the machine's
// memory; that is then the runtime's fatal error, as for any allocation.
const maxAlloc = min(1<<47, math.MaxInt)

// userAlloc is countBytes for memory the call allocates: count elements
// of size bytes, plus extra bytes of header, refused (false) beyond
// maxAlloc as well as on overflow.
func userAlloc(count, size, extra int) (int, bool) {
	n, ok := countBytes(count, size)
	if !ok || n > maxAlloc-extra {
		return 0, false
	}
	return n + extra, true
}

// elemBytes is countBytes for call op on c with datatype dt: a negative
// count or one whose bytes overflow is an ErrCount *Error.
func (c *Comm) elemBytes(op string, l loc, count int, dt *Datatype) (int, error) {
	if count < 0 {
		return 0, c.fail(op, ErrCount, l, "negative count %d", count)
	}
	n, ok := countBytes(count, dt.size)
	if !ok {
		return 0, c.fail(op, ErrCount, l, "%d elements of %s (%d bytes each) overflow an int", count, dt.name, dt.size)
	}
	return n, nil
}

// mulCount returns a*b for counts (a number of ranks times a count per
// rank), with an ErrCount *Error if b is negative or the product overflows.
func (c *Comm) mulCount(op string, a, b int) (int, error) {
	if b < 0 {
		return 0, c.argErr(op, ErrCount, "negative count %d", b)
	}
	n, ok := checked.Mul(a, b)
	if !ok {
		return 0, c.argErr(op, ErrCount, "%d × %d elements overflow an int", a, b)
	}
	return n, nil
}

// sumCounts returns the sum of counts, refusing a negative one and a sum
// that overflows.
func sumCounts(counts []int) (total int, bad int, ok bool) {
	for i, k := range counts {
		if k < 0 {
			return 0, i, false
		}
		if total, ok = checked.Add(total, k); !ok {
			return 0, i, false
		}
	}
	return total, -1, true
}

// blockSpan returns the byte range [lo, hi) of count elements of size
// bytes at displacement displ (in elements of size bytes if elems, in
// bytes otherwise), and false if any of it overflows an int. Neither
// count nor displ may be negative.
func blockSpan(displ, count, size int, elems bool) (lo, hi int, ok bool) {
	lo, ok = displ, displ >= 0
	if elems && ok {
		lo, ok = countBytes(displ, size)
	}
	n, ok2 := countBytes(count, size)
	if !ok || !ok2 {
		return 0, 0, false
	}
	hi, ok = checked.Add(lo, n)
	return lo, hi, ok
}

// displOverflow stands for a displacement whose bytes overflow an int:
// calls that take displacements refuse it with ErrCount.
const displOverflow = math.MinInt

// scaleDispl returns the displacement d times ext (an extent, or a count
// per block), or displOverflow if the product overflows.
func scaleDispl(d, ext int) int {
	if d == displOverflow {
		return displOverflow
	}
	v, ok := checked.Mul(d, ext)
	if !ok || v == displOverflow {
		return displOverflow
	}
	return v
}
