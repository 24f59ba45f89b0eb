package datatype

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"unsafe"

	"github.com/mpigo/mpi/internal/checked"
)

// This file holds MPI's derived datatypes (MPI-3.1 chapter 4) as type maps.
//
// A Type is kept flattened: Blocks lists the basic elements of one value in
// type-map order, as runs of consecutive elements of one basic kind, and
// Segs merges those into byte segments (offset, length), also in type-map
// order. Packing walks Segs; external32 and GetElements walk Blocks. The
// constructors build the flattened form of the new type from the flattened
// forms of their inputs, so a type costs memory in proportion to the number
// of runs in one value (a vector of a million blocks keeps a million
// segments; MPICH's dataloops would keep one loop).

// Basic is the kind of a basic (predefined) element.
type Basic uint8

// The basic kinds. Go's int and uint are Int64 and Uint64 on 64-bit
// machines (Int32 and Uint32 on 32-bit ones).
const (
	BasicByte Basic = iota + 1 // opaque bytes (MPI_BYTE, MPI_PACKED)
	BasicBool
	BasicInt8
	BasicInt16
	BasicInt32
	BasicInt64
	BasicUint8
	BasicUint16
	BasicUint32
	BasicUint64
	BasicFloat32
	BasicFloat64
	BasicComplex64
	BasicComplex128
	// BasicLongDouble is C's long double where it takes 16 bytes (x87
	// extended precision on amd64 and 386, IEEE binary128 on arm64 and
	// others): opaque data aligned to 16 bytes, which this package moves
	// but neither swaps nor computes on (the standard ABI's MPI_LONG_DOUBLE;
	// its arithmetic is done in C there).
	BasicLongDouble
	// BasicFloat16, BasicFloat128 and BasicInt128 are IEEE binary16,
	// IEEE binary128 and 128-bit two's complement integers (Fortran's
	// REAL*2, REAL*16 and INTEGER*16 through the standard ABI): numbers
	// of a known format, so external32 and mixed byte orders reverse
	// their bytes, but Go computes nothing on them.
	BasicFloat16
	BasicFloat128
	BasicInt128
	// BasicCLong and BasicCUlong are C's long and unsigned long where
	// they take 8 bytes (LP64 machines: MPI_LONG and MPI_UNSIGNED_LONG
	// through the standard ABI). In memory they are 64-bit integers, and
	// type signatures and type matching take them for BasicInt64 and
	// BasicUint64 (Basic.Canon); only external32 differs, where MPI's
	// table gives them 4 bytes (Basic.ExternalSize): packing a value that
	// does not fit 32 bits fails with ErrRange, and unpacking
	// sign-extends (zero-extends the unsigned one).
	BasicCLong
	BasicCUlong
	basicEnd
)

// BasicLast is the last basic kind: the kinds are BasicByte..BasicLast.
const BasicLast = basicEnd - 1

var basicNames = [...]string{"", "byte", "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
	"float32", "float64", "complex64", "complex128", "longdouble", "float16", "float128", "int128", "clong", "culong"}

var basicSizes = [...]int{0, 1, 1, 1, 2, 4, 8, 1, 2, 4, 8, 4, 8, 8, 16, 16, 2, 16, 16, 8, 8}

// String returns the Go name of the kind, as "float64".
func (b Basic) String() string {
	if b == 0 || b >= basicEnd {
		return fmt.Sprintf("Basic(%d)", b)
	}
	return basicNames[b]
}

// Size returns the size in bytes of one element in memory.
func (b Basic) Size() int { return basicSizes[b] }

// ExternalSize returns the size in bytes of one element in external32:
// its size in memory, except 4 for BasicCLong and BasicCUlong (MPI-4.1
// section 14.5.2, Table 14.2: MPI_LONG and MPI_UNSIGNED_LONG take 4).
func (b Basic) ExternalSize() int {
	if b == BasicCLong || b == BasicCUlong {
		return 4
	}
	return basicSizes[b]
}

// Canon returns the kind b is in type signatures and type matching: the
// 64-bit integer of the same signedness for BasicCLong and BasicCUlong
// (a C long sent by one rank matches a Go int64 received by another, as
// it always did), b itself for every other kind.
func (b Basic) Canon() Basic {
	switch b {
	case BasicCLong:
		return BasicInt64
	case BasicCUlong:
		return BasicUint64
	}
	return b
}

// word is the unit whose byte order external32 reverses: the size of one
// number, or of one component of a complex number.
func (b Basic) word() int {
	switch b {
	case BasicLongDouble:
		return 1 // its format differs between machines: no byte order to fix
	case BasicComplex64:
		return 4
	case BasicComplex128:
		return 8
	}
	return basicSizes[b]
}

// align is the alignment of an element in memory: its word, and 16 bytes
// for a long double.
func (b Basic) align() int {
	if b == BasicLongDouble {
		return 16
	}
	return b.word()
}

// Block is a run of N consecutive basic elements of one kind at byte
// offset Off of a value.
type Block struct {
	Off   int64
	Basic Basic
	N     int64
}

// Seg is a run of bytes at offset Off of a value.
type Seg struct {
	Off, Len int64
}

// Type is a committed type map: immutable once built, safe for concurrent use.
type Type struct {
	Blocks []Block // basic elements of one value, in type-map order
	Segs   []Seg   // the same as bytes, adjacent runs merged
	start  []int64 // start[i]: packed offset of Segs[i] within a value

	Size           int64 // bytes of data in one value (MPI_Type_size)
	LB, UB         int64 // bounds: the extent is UB-LB (MPI_Type_get_extent)
	TrueLB, TrueUB int64 // bounds of the data itself (MPI_Type_get_true_extent)
	ExplicitLB     bool  // LB was set by Resized (and sticks in types built from this one)
	ExplicitUB     bool
	NBasic         int64 // basic elements in one value
	Align          int64 // largest alignment of a basic element (at least 1)

	// A regular type's segments all have length segLen and start segStep
	// bytes apart (a vector): packing one value needs no table.
	regular         bool
	segLen, segStep int64
}

// Extent returns UB-LB.
func (t *Type) Extent() int64 { return t.UB - t.LB }

// Contiguous reports whether count values of t at extent spacing are one
// run of bytes starting at offset 0: then packing is a plain copy.
func (t *Type) Contiguous() bool {
	return t.Size == 0 || (len(t.Segs) == 1 && t.Segs[0].Off == 0 && t.Segs[0].Len == t.Extent())
}

// Uniform returns the basic kind of every element of t, or 0 if t mixes kinds or is empty.
func (t *Type) Uniform() Basic {
	if len(t.Blocks) == 0 {
		return 0
	}
	k := t.Blocks[0].Basic
	for _, b := range t.Blocks[1:] {
		if b.Basic != k {
			return 0
		}
	}
	return k
}

// ErrType is wrapped by the errors of the type constructors.
var ErrType = errors.New("datatype: invalid datatype")

func errf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrType, fmt.Sprintf(format, args...))
}

// maxBlocks bounds the flattened size of one type, so that a mistaken
// count fails instead of exhausting memory.
const maxBlocks = 1 << 22

// NewBasic returns the type of one basic element.
func NewBasic(k Basic) *Type {
	s := int64(k.Size())
	t := &Type{Blocks: []Block{{0, k, 1}}, Segs: []Seg{{0, s}}, start: []int64{0},
		Size: s, UB: s, TrueUB: s, NBasic: 1, Align: int64(k.align())}
	return t
}

// builder accumulates the type map of a new type, copy by copy.
type builder struct {
	t                 Type
	any               bool // some data or marker seen
	natLB, natUB      int64
	natSeen           bool
	expLB, expUB      int64
	hasExpLB, hasExpU bool
	err               error
}

// errOverflow is the error of a type whose size, bounds or displacements
// do not fit in an int64.
func errOverflow() error { return errf("the type's size, bounds or displacements overflow") }

// sum and prod are checked arithmetic for the builder: an overflow
// records errOverflow, and the type fails in finish.
func (b *builder) sum(x, y int64) int64 {
	v, ok := checked.Add64(x, y)
	if !ok && b.err == nil {
		b.err = errOverflow()
	}
	return v
}

func (b *builder) prod(x, y int64) int64 {
	v, ok := checked.Mul64(x, y)
	if !ok && b.err == nil {
		b.err = errOverflow()
	}
	return v
}

// add appends n copies of child, the first at byte displacement disp and
// each next one an extent further.
func (b *builder) add(child *Type, disp int64, n int64) {
	if n <= 0 || b.err != nil {
		return
	}
	ext := child.Extent()
	if child.Align > b.t.Align {
		b.t.Align = child.Align
	}
	// Bounds: the copies span from the first to the last. Every bound
	// the copies reach is checked here, so the offsets of their blocks
	// (which lie within those bounds) cannot overflow below.
	lo, hi := disp, b.sum(disp, b.prod(n-1, ext))
	if lo > hi {
		lo, hi = hi, lo
	}
	lbLo, ubHi := b.sum(lo, child.LB), b.sum(hi, child.UB)
	tlo, thi := b.sum(lo, child.TrueLB), b.sum(hi, child.TrueUB)
	size, nbasic := b.sum(b.t.Size, b.prod(n, child.Size)), b.sum(b.t.NBasic, b.prod(n, child.NBasic))
	if b.err != nil {
		return
	}
	if child.ExplicitLB {
		b.expLB = minSeen(b.expLB, lbLo, b.hasExpLB)
		b.hasExpLB = true
	}
	if child.ExplicitUB {
		b.expUB = maxSeen(b.expUB, ubHi, b.hasExpU)
		b.hasExpU = true
	}
	if child.Size > 0 {
		if !child.ExplicitLB {
			b.natLB = minSeen(b.natLB, lbLo, b.natSeen)
		}
		if !child.ExplicitUB {
			b.natUB = maxSeen(b.natUB, ubHi, b.natSeen)
		}
		if child.ExplicitLB {
			b.natLB = minSeen(b.natLB, tlo, b.natSeen)
		}
		if child.ExplicitUB {
			b.natUB = maxSeen(b.natUB, thi, b.natSeen)
		}
		b.natSeen = true
		if !b.any || tlo < b.t.TrueLB {
			b.t.TrueLB = tlo
		}
		if !b.any || thi > b.t.TrueUB {
			b.t.TrueUB = thi
		}
		b.any = true
	}
	if child.Size == 0 {
		return
	}
	b.t.Size, b.t.NBasic = size, nbasic
	// A dense child of one run (a basic type, a contiguous run of one kind)
	// replicated at its extent is one longer run.
	if len(child.Blocks) == 1 && child.Blocks[0].Off == 0 && ext == child.Size && child.Blocks[0].Basic.Size()*int(child.Blocks[0].N) == int(ext) {
		bl := child.Blocks[0]
		b.block(Block{disp, bl.Basic, bl.N * n})
		if len(b.t.Blocks) > maxBlocks {
			b.err = errf("the type map would have more than %d runs", maxBlocks)
		}
		return
	}
	if int64(len(b.t.Blocks))+n*int64(len(child.Blocks)) > maxBlocks {
		b.err = errf("the type map would have more than %d runs", maxBlocks)
		return
	}
	for i := int64(0); i < n; i++ {
		d := disp + i*ext
		for _, bl := range child.Blocks {
			b.block(Block{d + bl.Off, bl.Basic, bl.N})
		}
	}
}

func minSeen(a, b int64, seen bool) int64 {
	if !seen || b < a {
		return b
	}
	return a
}

func maxSeen(a, b int64, seen bool) int64 {
	if !seen || b > a {
		return b
	}
	return a
}

// block appends one run, merging it into the previous one when it continues it.
func (b *builder) block(bl Block) {
	if bl.N == 0 {
		return
	}
	sz := int64(bl.Basic.Size())
	if n := len(b.t.Blocks); n > 0 {
		last := &b.t.Blocks[n-1]
		if last.Basic == bl.Basic && last.Off+last.N*sz == bl.Off {
			last.N += bl.N
			goto seg
		}
	}
	b.t.Blocks = append(b.t.Blocks, bl)
seg:
	if n := len(b.t.Segs); n > 0 {
		last := &b.t.Segs[n-1]
		if last.Off+last.Len == bl.Off {
			last.Len += bl.N * sz
			return
		}
	}
	b.t.Segs = append(b.t.Segs, Seg{bl.Off, bl.N * sz})
}

// finish computes the bounds and the packed offsets. pad rounds the
// natural extent up to the alignment (as a C struct is padded).
func (b *builder) finish(pad bool) (*Type, error) {
	if b.err != nil {
		return nil, b.err
	}
	t := &b.t
	if t.Align == 0 {
		t.Align = 1
	}
	if !b.any {
		t.TrueLB, t.TrueUB = 0, 0
	}
	lb, ub := b.natLB, b.natUB
	if !b.natSeen {
		lb, ub = 0, 0
	}
	if pad && !b.hasExpU && b.natSeen {
		if r := (ub - lb) % t.Align; r != 0 {
			ub += t.Align - r
		}
	}
	if b.hasExpLB {
		lb, t.ExplicitLB = b.expLB, true
	}
	if b.hasExpU {
		ub, t.ExplicitUB = b.expUB, true
	}
	if !b.natSeen && !b.hasExpLB && b.hasExpU {
		lb = 0
	}
	if !b.natSeen && b.hasExpLB && !b.hasExpU {
		ub = lb
	}
	t.LB, t.UB = lb, ub
	if err := checkBounds(t); err != nil {
		return nil, err
	}
	t.index()
	return t, nil
}

// checkBounds checks that t's extent and true extent fit in an int64 (its
// bounds do: the builder checked them).
func checkBounds(t *Type) error {
	if _, ok := checked.Add64(t.UB, -t.LB); !ok || t.LB == -1<<63 {
		return errOverflow()
	}
	if _, ok := checked.Add64(t.TrueUB, -t.TrueLB); !ok || t.TrueLB == -1<<63 {
		return errOverflow()
	}
	return nil
}

// index computes the packed offsets of the segments and whether t is regular.
func (t *Type) index() {
	t.start = make([]int64, len(t.Segs))
	var off int64
	for i, s := range t.Segs {
		t.start[i] = off
		off += s.Len
	}
	t.regular = false
	if len(t.Segs) == 0 {
		return
	}
	l := t.Segs[0].Len
	step := l
	if len(t.Segs) > 1 {
		step = t.Segs[1].Off - t.Segs[0].Off
	}
	for i := 1; i < len(t.Segs); i++ {
		if t.Segs[i].Len != l || t.Segs[i].Off-t.Segs[i-1].Off != step {
			return
		}
	}
	t.regular, t.segLen, t.segStep = l > 0, l, step
}

func checkCount(what string, n int) error {
	if n < 0 {
		return errf("negative %s %d", what, n)
	}
	return nil
}

func mul(a, b int64) (int64, bool) { return checked.Mul64(a, b) }

// NewContiguous returns count copies of old, one after another (MPI_Type_contiguous).
func NewContiguous(count int, old *Type) (*Type, error) {
	if err := checkCount("count", count); err != nil {
		return nil, err
	}
	var b builder
	b.add(old, 0, int64(count))
	return b.finish(false)
}

// NewHvector returns count blocks of blocklen copies of old, the blocks
// stride bytes apart (MPI_Type_create_hvector).
func NewHvector(count, blocklen int, stride int64, old *Type) (*Type, error) {
	if err := checkCount("count", count); err != nil {
		return nil, err
	}
	if err := checkCount("block length", blocklen); err != nil {
		return nil, err
	}
	if count > maxBlocks {
		// Too many blocks to add one by one. Blocks that abut are one
		// contiguous run; blocks without data only move the bounds,
		// which the first and the last block decide; otherwise the type
		// map would have too many runs.
		if n, ok := checked.Mul64(int64(blocklen), old.Extent()); ok && n == stride {
			total, ok := checked.Mul(count, blocklen)
			if !ok {
				return nil, errOverflow()
			}
			return NewContiguous(total, old)
		}
		if blocklen > 0 && old.Size > 0 {
			return nil, errf("the type map would have more than %d runs", maxBlocks)
		}
		var b builder
		d, ok := mul(int64(count-1), stride)
		if !ok {
			return nil, errf("displacement overflows")
		}
		b.add(old, 0, int64(blocklen))
		b.add(old, d, int64(blocklen))
		return b.finish(false)
	}
	var b builder
	for i := int64(0); i < int64(count) && b.err == nil; i++ {
		d, ok := mul(i, stride)
		if !ok {
			return nil, errf("displacement overflows")
		}
		b.add(old, d, int64(blocklen))
	}
	return b.finish(false)
}

// NewVector is NewHvector with the stride in extents of old (MPI_Type_vector).
func NewVector(count, blocklen, stride int, old *Type) (*Type, error) {
	s, ok := mul(int64(stride), old.Extent())
	if !ok {
		return nil, errf("stride overflows")
	}
	return NewHvector(count, blocklen, s, old)
}

// NewHindexed returns blocks of blocklens[i] copies of old at byte
// displacements displs[i] (MPI_Type_create_hindexed).
func NewHindexed(blocklens []int, displs []int64, old *Type) (*Type, error) {
	if len(blocklens) != len(displs) {
		return nil, errf("%d block lengths but %d displacements", len(blocklens), len(displs))
	}
	var b builder
	for i, n := range blocklens {
		if err := checkCount("block length", n); err != nil {
			return nil, err
		}
		b.add(old, displs[i], int64(n))
	}
	return b.finish(false)
}

// NewIndexed is NewHindexed with displacements in extents of old (MPI_Type_indexed).
func NewIndexed(blocklens, displs []int, old *Type) (*Type, error) {
	d, err := scale(displs, old.Extent())
	if err != nil {
		return nil, err
	}
	return NewHindexed(blocklens, d, old)
}

func scale(displs []int, ext int64) ([]int64, error) {
	d := make([]int64, len(displs))
	for i, x := range displs {
		v, ok := mul(int64(x), ext)
		if !ok {
			return nil, errf("displacement %d overflows", x)
		}
		d[i] = v
	}
	return d, nil
}

// NewHindexedBlock returns blocks of blocklen copies of old at byte
// displacements displs (MPI_Type_create_hindexed_block).
func NewHindexedBlock(blocklen int, displs []int64, old *Type) (*Type, error) {
	if err := checkCount("block length", blocklen); err != nil {
		return nil, err
	}
	var b builder
	for _, d := range displs {
		b.add(old, d, int64(blocklen))
	}
	return b.finish(false)
}

// NewIndexedBlock is NewHindexedBlock with displacements in extents of old
// (MPI_Type_create_indexed_block).
func NewIndexedBlock(blocklen int, displs []int, old *Type) (*Type, error) {
	d, err := scale(displs, old.Extent())
	if err != nil {
		return nil, err
	}
	return NewHindexedBlock(blocklen, d, old)
}

// NewStruct returns blocks of blocklens[i] copies of types[i] at byte
// displacements displs[i] (MPI_Type_create_struct). Its extent is rounded
// up to the largest alignment of its basic elements, as a Go or C struct's
// size is, unless an upper bound was set with Resized.
func NewStruct(blocklens []int, displs []int64, types []*Type) (*Type, error) {
	if len(blocklens) != len(displs) || len(blocklens) != len(types) {
		return nil, errf("%d block lengths, %d displacements and %d types", len(blocklens), len(displs), len(types))
	}
	var b builder
	for i, n := range blocklens {
		if err := checkCount("block length", n); err != nil {
			return nil, err
		}
		if types[i] == nil {
			return nil, errf("type %d is nil", i)
		}
		b.add(types[i], displs[i], int64(n))
	}
	return b.finish(true)
}

// NewResized returns old with lower bound lb and extent ext (MPI_Type_create_resized).
func NewResized(old *Type, lb, ext int64) (*Type, error) {
	ub, ok := checked.Add64(lb, ext)
	if !ok {
		return nil, errOverflow()
	}
	t := *old
	t.LB, t.UB = lb, ub
	t.ExplicitLB, t.ExplicitUB = true, true
	if err := checkBounds(&t); err != nil {
		return nil, err
	}
	t.index()
	return &t, nil
}

// Order is the storage order of a multi-dimensional array.
type Order uint8

// Storage orders.
const (
	OrderC       Order = iota // row-major: the last index varies fastest
	OrderFortran              // column-major: the first index varies fastest
)

// dimsFastFirst returns the dimension indices from the fastest-varying to the slowest.
func dimsFastFirst(n int, order Order) []int {
	d := make([]int, n)
	for i := range d {
		if order == OrderC {
			d[i] = n - 1 - i
		} else {
			d[i] = i
		}
	}
	return d
}

// NewSubarray returns the subarray of subsizes starting at starts of an
// array of sizes elements of old stored in order (MPI_Type_create_subarray).
// Its lower bound is 0 and its extent that of the whole array.
func NewSubarray(sizes, subsizes, starts []int, order Order, old *Type) (*Type, error) {
	n := len(sizes)
	if n == 0 || len(subsizes) != n || len(starts) != n {
		return nil, errf("subarray needs equal numbers (at least 1) of sizes, subsizes and starts")
	}
	if order != OrderC && order != OrderFortran {
		return nil, errf("unknown order %d", order)
	}
	for i := range n {
		if sizes[i] <= 0 || subsizes[i] < 0 || starts[i] < 0 || subsizes[i] > sizes[i]-starts[i] {
			return nil, errf("dimension %d: size %d, subsize %d, start %d", i, sizes[i], subsizes[i], starts[i])
		}
	}
	ext := old.Extent()
	stride := ext
	var disp int64
	t := old
	for k, d := range dimsFastFirst(n, order) {
		var err error
		if k == 0 {
			t, err = NewContiguous(subsizes[d], t)
		} else {
			t, err = NewHvector(subsizes[d], 1, stride, t)
		}
		if err != nil {
			return nil, err
		}
		s, ok := mul(int64(starts[d]), stride)
		if !ok {
			return nil, errf("subarray too large")
		}
		if disp, ok = checked.Add64(disp, s); !ok {
			return nil, errf("subarray too large")
		}
		if stride, ok = mul(stride, int64(sizes[d])); !ok {
			return nil, errf("subarray too large")
		}
	}
	t, err := NewHindexed([]int{1}, []int64{disp}, t)
	if err != nil {
		return nil, err
	}
	return NewResized(t, 0, stride)
}

// Distribution of one dimension of a Darray.
type Distribution uint8

// Distributions.
const (
	DistributeNone   Distribution = iota // the dimension is not distributed
	DistributeBlock                      // contiguous blocks
	DistributeCyclic                     // blocks dealt round-robin
)

// DistributeDfltDarg asks for the default distribution argument.
const DistributeDfltDarg = -1

// NewDarray returns the part of a global array of gsizes elements of old
// (stored in order) that process rank of a size-process grid psizes
// holds, for the distributions distribs with arguments dargs
// (MPI_Type_create_darray). The process grid is row-major, as the standard
// says, whatever the array's order. The lower bound is 0 and the extent
// that of the whole array.
func NewDarray(size, rank int, gsizes []int, distribs []Distribution, dargs, psizes []int, order Order, old *Type) (*Type, error) {
	n := len(gsizes)
	if n == 0 || len(distribs) != n || len(dargs) != n || len(psizes) != n {
		return nil, errf("darray needs equal numbers (at least 1) of gsizes, distribs, dargs and psizes")
	}
	if order != OrderC && order != OrderFortran {
		return nil, errf("unknown order %d", order)
	}
	procs := 1
	for i, p := range psizes {
		if p <= 0 || gsizes[i] <= 0 {
			return nil, errf("dimension %d: gsize %d, psize %d", i, gsizes[i], p)
		}
		var ok bool
		if procs, ok = checked.Mul(procs, p); !ok {
			return nil, errf("process grid of more than %d processes", math.MaxInt)
		}
	}
	if procs != size || rank < 0 || rank >= size {
		return nil, errf("process grid of %d for %d processes (rank %d)", procs, size, rank)
	}
	// Row-major coordinates of rank in the process grid.
	coords := make([]int, n)
	r := rank
	for i := n - 1; i >= 0; i-- {
		coords[i] = r % psizes[i]
		r /= psizes[i]
	}
	// The indices this rank holds in each dimension, as runs of
	// consecutive indices: their number, not the array's size, bounds
	// the work.
	idx := make([][]idxRun, n)
	for i := range n {
		g, p, c := gsizes[i], psizes[i], coords[i]
		switch distribs[i] {
		case DistributeNone:
			if p != 1 {
				return nil, errf("dimension %d is not distributed but has %d processes", i, p)
			}
			idx[i] = []idxRun{{0, g}}
		case DistributeBlock:
			b := dargs[i]
			if b == DistributeDfltDarg {
				b = (g-1)/p + 1
			}
			if bp, ok := checked.Mul(b, p); b <= 0 || ok && bp < g {
				return nil, errf("dimension %d: block size %d cannot hold %d elements on %d processes", i, b, g, p)
			}
			// c*b < b*p: no overflow once b*p >= g is known (or b*p
			// overflows, and then c*b is what we compare with g).
			if lo, ok := checked.Mul(c, b); ok && lo < g {
				idx[i] = []idxRun{{lo, min(b, g-lo)}}
			}
		case DistributeCyclic:
			b := dargs[i]
			if b == DistributeDfltDarg {
				b = 1
			}
			if b <= 0 {
				return nil, errf("dimension %d: cyclic block size %d", i, b)
			}
			if p == 1 {
				idx[i] = []idxRun{{0, g}}
				break
			}
			step, ok := checked.Mul(b, p)
			if !ok {
				step = g // one round covers the dimension
			}
			lo, ok := checked.Mul(c, b)
			if ok && lo < g && (g-lo-1)/step >= maxBlocks {
				return nil, errf("the type map would have more than %d runs", maxBlocks)
			}
			for ; ok && lo < g; lo, ok = checked.Add(lo, step) {
				if k := len(idx[i]) - 1; k >= 0 && idx[i][k].lo+idx[i][k].n == lo {
					idx[i][k].n += min(b, g-lo) // one process: the runs abut
					continue
				}
				idx[i] = append(idx[i], idxRun{lo, min(b, g-lo)})
			}
		default:
			return nil, errf("dimension %d: unknown distribution %d", i, distribs[i])
		}
	}
	stride := old.Extent()
	t := old
	for _, d := range dimsFastFirst(n, order) {
		lens, displs, err := runs(idx[d], stride, t == old)
		if err != nil {
			return nil, err
		}
		if t, err = NewHindexed(lens, displs, t); err != nil {
			return nil, err
		}
		var ok bool
		if stride, ok = mul(stride, int64(gsizes[d])); !ok {
			return nil, errf("darray too large")
		}
	}
	return NewResized(t, 0, stride)
}

// idxRun is a run of n consecutive indices from lo.
type idxRun struct{ lo, n int }

// runs turns runs of indices into Hindexed blocks at stride bytes per
// index: a run becomes one block when merge is set (blocks of the
// innermost dimension, where a block of n copies is n consecutive
// elements); otherwise each index is its own block.
func runs(idx []idxRun, stride int64, merge bool) ([]int, []int64, error) {
	var lens []int
	var displs []int64
	for _, s := range idx {
		k := 1
		if merge {
			k = s.n
		} else if len(lens)+s.n > maxBlocks {
			return nil, nil, errf("the type map would have more than %d runs", maxBlocks)
		}
		for j := 0; j < s.n; j += k {
			d, ok := mul(int64(s.lo+j), stride)
			if !ok {
				return nil, nil, errf("darray too large")
			}
			lens = append(lens, k)
			displs = append(displs, d)
		}
	}
	return lens, displs, nil
}

// Span returns the byte range [lo, hi) that count values of t, the first
// at offset 0, touch; (0, 0) if they hold no data.
func (t *Type) Span(count int) (lo, hi int64) {
	lo, hi, _ = t.SpanChecked(count)
	return lo, hi
}

// SpanChecked is Span that also reports whether the range fits in an
// int64: a count that users control may make it overflow.
func (t *Type) SpanChecked(count int) (lo, hi int64, ok bool) {
	if count <= 0 || t.Size == 0 {
		return 0, 0, true
	}
	last, ok := checked.Mul64(int64(count-1), t.Extent())
	if !ok {
		return 0, 0, false
	}
	lo, hi = t.TrueLB, t.TrueUB
	if last < 0 {
		lo, ok = checked.Add64(lo, last)
	} else {
		hi, ok = checked.Add64(hi, last)
	}
	return lo, hi, ok
}

// seek returns the value index and the segment index and offset into it
// where packed offset off falls.
func (t *Type) seek(off int64) (elem int64, seg int, in int64) {
	elem = off / t.Size
	r := off % t.Size
	seg = sort.Search(len(t.start), func(i int) bool { return t.start[i] > r }) - 1
	return elem, seg, r - t.start[seg]
}

// PackAt copies len(dst) bytes of the packed form of count values of t in
// buf (the first value at offset 0), starting at packed offset off, into
// dst. The bytes must exist: off+len(dst) <= count*t.Size, and buf must hold
// the span of the values (see Span).
func (t *Type) PackAt(dst, buf []byte, off int64) {
	t.copyAt(dst, buf, 0, off, true)
}

// UnpackAt copies src into the values of t in buf at packed offset off:
// the inverse of PackAt.
func (t *Type) UnpackAt(src, buf []byte, off int64) {
	t.copyAt(src, buf, 0, off, false)
}

// PackFrom is PackAt for values whose first one starts at byte origin of
// buf, so that a type map reaching below its start (a negative lower
// bound or displacement) can be used inside a buffer: buf must hold the
// span of the values shifted by origin.
func (t *Type) PackFrom(dst, buf []byte, origin, off int64) {
	t.copyAt(dst, buf, origin, off, true)
}

// UnpackFrom is UnpackAt with the first value at byte origin of buf: the
// inverse of PackFrom.
func (t *Type) UnpackFrom(src, buf []byte, origin, off int64) {
	t.copyAt(src, buf, origin, off, false)
}

func (t *Type) copyAt(p, buf []byte, origin, off int64, pack bool) {
	if len(p) == 0 {
		return
	}
	if t.Contiguous() {
		if pack {
			copy(p, buf[origin+off:])
		} else {
			copy(buf[origin+off:], p)
		}
		return
	}
	ext := t.Extent()
	elem, seg, in := t.seek(off)
	base := origin + elem*ext
	if t.regular {
		if step, ok := t.flowStep(); ok {
			// One strided run for every value, not a call per value.
			copyRegular(p, buf, base+t.Segs[seg].Off, in, t.segLen, step, pack)
			return
		}
		for len(p) > 0 {
			room := int64(len(t.Segs)-seg)*t.segLen - in // bytes left in this value
			n := min(room, int64(len(p)))
			copyRegular(p[:n], buf, base+t.Segs[seg].Off, in, t.segLen, t.segStep, pack)
			p = p[n:]
			seg, in = 0, 0
			base += ext
		}
		return
	}
	for len(p) > 0 {
		s := t.Segs[seg]
		a := base + s.Off + in
		n := min(s.Len-in, int64(len(p)))
		if pack {
			copy(p[:n], buf[a:a+n])
		} else {
			copy(buf[a:a+n], p[:n])
		}
		p = p[n:]
		in = 0
		if seg++; seg == len(t.Segs) {
			seg = 0
			base += ext
		}
	}
}

// Elements returns the number of basic elements in the first n bytes of
// the packed form of values of t, or -1 if n ends inside a basic element
// (MPI_Get_elements).
func (t *Type) Elements(n int64) int64 {
	if t.Size == 0 {
		if n == 0 {
			return 0
		}
		return -1
	}
	whole := n / t.Size
	r := n % t.Size
	count := whole * t.NBasic
	for _, b := range t.Blocks {
		if r == 0 {
			break
		}
		sz := int64(b.Basic.Size())
		k := min(b.N, r/sz)
		count += k
		r -= k * sz
		if k < b.N {
			break
		}
	}
	if r != 0 {
		return -1
	}
	return count
}

// flowStep reports whether the segments of a regular type go on at one
// stride from one value to the next, and that stride: a resized element
// (one segment, the extent apart), a vector whose extent is its count
// times its stride. Such values are one strided run, however many.
func (t *Type) flowStep() (int64, bool) {
	switch {
	case !t.regular:
		return 0, false
	case len(t.Segs) == 1:
		return t.Extent(), true
	case t.segStep*int64(len(t.Segs)) == t.Extent():
		return t.segStep, true
	}
	return 0, false
}

// copyRegular packs (or unpacks) p from segments of l bytes every step
// bytes of buf, the first at a, starting in bytes into it.
func copyRegular(p, buf []byte, a, in, l, step int64, pack bool) {
	if in > 0 { // finish the first segment
		n := min(l-in, int64(len(p)))
		if pack {
			copy(p[:n], buf[a+in:a+in+n])
		} else {
			copy(buf[a+in:a+in+n], p[:n])
		}
		p = p[n:]
		a += step
	}
	whole := int64(len(p)) / l
	if whole > 0 {
		// Bounds are checked once for the whole run.
		_ = buf[a+(whole-1)*step+l-1]
		_ = p[whole*l-1]
		src, dst := unsafe.Pointer(&buf[a]), unsafe.Pointer(&p[0])
		srcStep, dstStep := uintptr(step), uintptr(l)
		if !pack {
			src, dst = dst, src
			srcStep, dstStep = dstStep, srcStep
		}
		moveStrided(dst, dstStep, src, srcStep, l, uintptr(whole))
		p = p[whole*l:]
		a += whole * step
	}
	if len(p) > 0 { // the start of a last segment
		if pack {
			copy(p, buf[a:a+int64(len(p))])
		} else {
			copy(buf[a:a+int64(len(p))], p)
		}
	}
}

// CopyDirect copies the first n bytes of the packed form of values of src
// in sbuf straight into values of t in dbuf, without packing them in
// between, when both type maps are regular with segments of one length
// (vectors of the same element, say). It reports false, having copied
// nothing, otherwise.
func (t *Type) CopyDirect(dbuf []byte, src *Type, sbuf []byte, n int64) bool {
	if !t.regular || !src.regular || t.segLen != src.segLen || t.Contiguous() || src.Contiguous() {
		return false
	}
	l := t.segLen
	dSegs, sSegs := int64(len(t.Segs)), int64(len(src.Segs))
	// A side whose values go on at one stride (flowStep) is one run of
	// segments, however many values: as if its value held them all.
	dStep, dExt, sStep, sExt := t.segStep, t.Extent(), src.segStep, src.Extent()
	if step, ok := t.flowStep(); ok {
		dStep, dSegs, dExt = step, math.MaxInt64, 0
	}
	if step, ok := src.flowStep(); ok {
		sStep, sSegs, sExt = step, math.MaxInt64, 0
	}
	var dv, sv, dk, sk int64 // value index and segment index in it, each side
	for n > 0 {
		da := dv*dExt + t.Segs[0].Off + dk*dStep
		sa := sv*sExt + src.Segs[0].Off + sk*sStep
		k := min(dSegs-dk, sSegs-sk, n/l) // whole segments before either side ends a value
		if k == 0 {                       // a last, partial segment
			copy(dbuf[da:da+n], sbuf[sa:sa+n])
			return true
		}
		copyStrided(dbuf, da, dStep, sbuf, sa, sStep, l, k)
		n -= k * l
		if dk += k; dk == dSegs {
			dv, dk = dv+1, 0
		}
		if sk += k; sk == sSegs {
			sv, sk = sv+1, 0
		}
	}
	return true
}

// copyStrided copies k segments of l bytes from sbuf (at sa, every sstep
// bytes) to dbuf (at da, every dstep bytes).
func copyStrided(dbuf []byte, da, dstep int64, sbuf []byte, sa, sstep, l, k int64) {
	_ = dbuf[da+(k-1)*dstep+l-1] // bounds, once
	_ = sbuf[sa+(k-1)*sstep+l-1]
	moveStrided(unsafe.Pointer(&dbuf[da]), uintptr(dstep), unsafe.Pointer(&sbuf[sa]), uintptr(sstep), l, uintptr(k))
}

// moveStrided moves k segments of l bytes from src, every ss bytes, to
// dst, every ds bytes; the caller has checked that all of them lie in
// their buffers. Segments of 1, 2, 4 or 8 bytes move as one load and
// store each where both sides stay aligned (a resized MPI_CHAR of 2 GiB:
// 100 -> 700 MB/s), others by copy; every pointer formed lies inside its
// buffer (no pointer past the end, for checkptr).
func moveStrided(dst unsafe.Pointer, ds uintptr, src unsafe.Pointer, ss uintptr, l int64, k uintptr) {
	aligned := (uintptr(dst)|uintptr(src)|ds|ss)%uintptr(l) == 0
	switch {
	case l == 8 && aligned:
		for i := range k {
			*(*uint64)(unsafe.Add(dst, i*ds)) = *(*uint64)(unsafe.Add(src, i*ss))
		}
	case l == 4 && aligned:
		for i := range k {
			*(*uint32)(unsafe.Add(dst, i*ds)) = *(*uint32)(unsafe.Add(src, i*ss))
		}
	case l == 2 && aligned:
		for i := range k {
			*(*uint16)(unsafe.Add(dst, i*ds)) = *(*uint16)(unsafe.Add(src, i*ss))
		}
	case l == 1:
		for i := range k {
			*(*byte)(unsafe.Add(dst, i*ds)) = *(*byte)(unsafe.Add(src, i*ss))
		}
	default:
		for i := range k {
			copy(unsafe.Slice((*byte)(unsafe.Add(dst, i*ds)), l), unsafe.Slice((*byte)(unsafe.Add(src, i*ss)), l))
		}
	}
}
