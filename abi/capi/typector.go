//go:build cgo

package capi

import (
	"fmt"
	"math"
	"sync"
	"unsafe"

	"github.com/mpigo/mpi"
)

// The datatype constructors and queries beyond contiguous and vector, and
// packing. Arrays come from C as int, MPI_Aint or MPI_Count elements;
// they are read into Go ints before mpigo sees them.

// cInts reads n C ints at p; NULL is allowed only when n is 0.
func cInts(p unsafe.Pointer, n int) ([]int, bool) {
	if n <= 0 {
		return []int{}, true
	}
	if p == nil {
		return nil, false
	}
	out := make([]int, n)
	for i, v := range unsafe.Slice((*int32)(p), n) {
		out[i] = int(v)
	}
	return out, true
}

// cLongs reads n MPI_Aint or MPI_Count values (64 bits here) at p.
func cLongs(p unsafe.Pointer, n int) ([]int, bool) {
	if n <= 0 {
		return []int{}, true
	}
	if p == nil {
		return nil, false
	}
	out := make([]int, n)
	for i, v := range unsafe.Slice((*int64)(p), n) {
		out[i] = int(v)
	}
	return out, true
}

// countArg checks a count argument of a constructor.
func countArg(fn string, n int64) (int, int32) {
	if n < 0 {
		return 0, raise(fn, noComm, classErr(MPI_ERR_COUNT, fmt.Sprintf("count %d is negative", n)))
	}
	if n > math.MaxInt32*16 {
		return 0, raise(fn, noComm, classErr(MPI_ERR_COUNT, fmt.Sprintf("count %d is too large", n)))
	}
	return int(n), 0
}

func nullArray(fn, what string) int32 {
	return raise(fn, noComm, classErr(MPI_ERR_ARG, what+" is NULL"))
}

// read reads n elements at p with reader r, raising MPI_ERR_ARG for NULL.
func readArr(fn, what string, r func(unsafe.Pointer, int) ([]int, bool), p unsafe.Pointer, n int) ([]int, int32) {
	a, ok := r(p, n)
	if !ok {
		return nil, nullArray(fn, what)
	}
	return a, 0
}

func implType_contiguous_c(count int64, oldtype uintptr, newtype unsafe.Pointer) int32 {
	const fn = "MPI_Type_contiguous_c"
	old, rc := typeCtor(fn, oldtype, newtype)
	if old == nil {
		return rc
	}
	n, rc := countArg(fn, count)
	if rc != 0 {
		return rc
	}
	t, err := mpi.NewContiguous(n, old)
	return newType(fn, t, err, newtype)
}

func implType_vector_c(count, blocklength, stride int64, oldtype uintptr, newtype unsafe.Pointer) int32 {
	const fn = "MPI_Type_vector_c"
	old, rc := typeCtor(fn, oldtype, newtype)
	if old == nil {
		return rc
	}
	if count < 0 || blocklength < 0 {
		return raise(fn, noComm, classErr(MPI_ERR_COUNT, fmt.Sprintf("count %d or blocklength %d is negative", count, blocklength)))
	}
	t, err := mpi.NewVector(int(count), int(blocklength), int(stride), old)
	return newType(fn, t, err, newtype)
}

func hvector(fn string, count, blocklength, stride int64, oldtype uintptr, newtype unsafe.Pointer) int32 {
	old, rc := typeCtor(fn, oldtype, newtype)
	if old == nil {
		return rc
	}
	if count < 0 || blocklength < 0 {
		return raise(fn, noComm, classErr(MPI_ERR_COUNT, fmt.Sprintf("count %d or blocklength %d is negative", count, blocklength)))
	}
	t, err := mpi.NewHvector(int(count), int(blocklength), int(stride), old)
	return newType(fn, t, err, newtype)
}

func implType_create_hvector(count, blocklength int32, stride int, oldtype uintptr, newtype unsafe.Pointer) int32 {
	return hvector("MPI_Type_create_hvector", int64(count), int64(blocklength), int64(stride), oldtype, newtype)
}

func implType_create_hvector_c(count, blocklength, stride int64, oldtype uintptr, newtype unsafe.Pointer) int32 {
	return hvector("MPI_Type_create_hvector_c", count, blocklength, stride, oldtype, newtype)
}

// indexed is every indexed constructor: blocklens (rb) and displs (rd)
// read with their C element types; hbytes says whether the
// displacements are in bytes.
func indexed(fn string, count int64, blocklens, displs unsafe.Pointer, rb, rd func(unsafe.Pointer, int) ([]int, bool), hbytes bool, oldtype uintptr, newtype unsafe.Pointer) int32 {
	old, rc := typeCtor(fn, oldtype, newtype)
	if old == nil {
		return rc
	}
	n, rc := countArg(fn, count)
	if rc != 0 {
		return rc
	}
	bl, rc := readArr(fn, "array_of_blocklengths", rb, blocklens, n)
	if rc != 0 {
		return rc
	}
	ds, rc := readArr(fn, "array_of_displacements", rd, displs, n)
	if rc != 0 {
		return rc
	}
	var t *mpi.Datatype
	var err error
	if hbytes {
		t, err = mpi.NewHindexed(bl, ds, old)
	} else {
		t, err = mpi.NewIndexed(bl, ds, old)
	}
	return newType(fn, t, err, newtype)
}

func implType_indexed(count int32, blocklens, displs unsafe.Pointer, oldtype uintptr, newtype unsafe.Pointer) int32 {
	return indexed("MPI_Type_indexed", int64(count), blocklens, displs, cInts, cInts, false, oldtype, newtype)
}

func implType_indexed_c(count int64, blocklens, displs unsafe.Pointer, oldtype uintptr, newtype unsafe.Pointer) int32 {
	return indexed("MPI_Type_indexed_c", count, blocklens, displs, cLongs, cLongs, false, oldtype, newtype)
}

func implType_create_hindexed(count int32, blocklens, displs unsafe.Pointer, oldtype uintptr, newtype unsafe.Pointer) int32 {
	return indexed("MPI_Type_create_hindexed", int64(count), blocklens, displs, cInts, cLongs, true, oldtype, newtype)
}

func implType_create_hindexed_c(count int64, blocklens, displs unsafe.Pointer, oldtype uintptr, newtype unsafe.Pointer) int32 {
	return indexed("MPI_Type_create_hindexed_c", count, blocklens, displs, cLongs, cLongs, true, oldtype, newtype)
}

func indexedBlock(fn string, count, blocklength int64, displs unsafe.Pointer, rd func(unsafe.Pointer, int) ([]int, bool), hbytes bool, oldtype uintptr, newtype unsafe.Pointer) int32 {
	old, rc := typeCtor(fn, oldtype, newtype)
	if old == nil {
		return rc
	}
	n, rc := countArg(fn, count)
	if rc != 0 {
		return rc
	}
	ds, rc := readArr(fn, "array_of_displacements", rd, displs, n)
	if rc != 0 {
		return rc
	}
	var t *mpi.Datatype
	var err error
	if hbytes {
		t, err = mpi.NewHindexedBlock(int(blocklength), ds, old)
	} else {
		t, err = mpi.NewIndexedBlock(int(blocklength), ds, old)
	}
	return newType(fn, t, err, newtype)
}

func implType_create_indexed_block(count, blocklength int32, displs unsafe.Pointer, oldtype uintptr, newtype unsafe.Pointer) int32 {
	return indexedBlock("MPI_Type_create_indexed_block", int64(count), int64(blocklength), displs, cInts, false, oldtype, newtype)
}

func implType_create_indexed_block_c(count, blocklength int64, displs unsafe.Pointer, oldtype uintptr, newtype unsafe.Pointer) int32 {
	return indexedBlock("MPI_Type_create_indexed_block_c", count, blocklength, displs, cLongs, false, oldtype, newtype)
}

func implType_create_hindexed_block(count, blocklength int32, displs unsafe.Pointer, oldtype uintptr, newtype unsafe.Pointer) int32 {
	return indexedBlock("MPI_Type_create_hindexed_block", int64(count), int64(blocklength), displs, cLongs, true, oldtype, newtype)
}

func implType_create_hindexed_block_c(count, blocklength int64, displs unsafe.Pointer, oldtype uintptr, newtype unsafe.Pointer) int32 {
	return indexedBlock("MPI_Type_create_hindexed_block_c", count, blocklength, displs, cLongs, true, oldtype, newtype)
}

// typesArg reads n datatype handles at p.
func typesArg(fn string, p unsafe.Pointer, n int) ([]*mpi.Datatype, int32) {
	if n == 0 {
		return nil, 0
	}
	if p == nil {
		return nil, nullArray(fn, "array_of_types")
	}
	out := make([]*mpi.Datatype, n)
	for i, h := range unsafe.Slice((*uintptr)(p), n) {
		t, rc := typeArg(fn, nil, h)
		if t == nil {
			return nil, rc
		}
		out[i] = t
	}
	return out, 0
}

func createStruct(fn string, count int64, blocklens, displs, types unsafe.Pointer, rb func(unsafe.Pointer, int) ([]int, bool), newtype unsafe.Pointer) int32 {
	if rc := running(fn); rc != 0 {
		return rc
	}
	if newtype == nil {
		return nullArray(fn, "newtype")
	}
	n, rc := countArg(fn, count)
	if rc != 0 {
		return rc
	}
	bl, rc := readArr(fn, "array_of_blocklengths", rb, blocklens, n)
	if rc != 0 {
		return rc
	}
	ds, rc := readArr(fn, "array_of_displacements", cLongs, displs, n)
	if rc != 0 {
		return rc
	}
	ts, rc := typesArg(fn, types, n)
	if rc != 0 {
		return rc
	}
	t, err := mpi.NewStruct(bl, ds, ts)
	return newType(fn, t, err, newtype)
}

func implType_create_struct(count int32, blocklens, displs, types, newtype unsafe.Pointer) int32 {
	return createStruct("MPI_Type_create_struct", int64(count), blocklens, displs, types, cInts, newtype)
}

func implType_create_struct_c(count int64, blocklens, displs, types, newtype unsafe.Pointer) int32 {
	return createStruct("MPI_Type_create_struct_c", count, blocklens, displs, types, cLongs, newtype)
}

func orderArg(fn string, order int32) (mpi.Order, int32) {
	switch order {
	case MPI_ORDER_C:
		return mpi.OrderC, 0
	case MPI_ORDER_FORTRAN:
		return mpi.OrderFortran, 0
	}
	return 0, raise(fn, noComm, classErr(MPI_ERR_ARG, fmt.Sprintf("order %d is neither MPI_ORDER_C nor MPI_ORDER_FORTRAN", order)))
}

func subarray(fn string, ndims int32, sizes, subsizes, starts unsafe.Pointer, r func(unsafe.Pointer, int) ([]int, bool), order int32, oldtype uintptr, newtype unsafe.Pointer) int32 {
	old, rc := typeCtor(fn, oldtype, newtype)
	if old == nil {
		return rc
	}
	if ndims <= 0 {
		return raise(fn, noComm, classErr(MPI_ERR_DIMS, fmt.Sprintf("ndims %d is not positive", ndims)))
	}
	n := int(ndims)
	sz, rc := readArr(fn, "array_of_sizes", r, sizes, n)
	if rc != 0 {
		return rc
	}
	sub, rc := readArr(fn, "array_of_subsizes", r, subsizes, n)
	if rc != 0 {
		return rc
	}
	st, rc := readArr(fn, "array_of_starts", r, starts, n)
	if rc != 0 {
		return rc
	}
	o, rc := orderArg(fn, order)
	if rc != 0 {
		return rc
	}
	t, err := mpi.NewSubarray(sz, sub, st, o, old)
	return newType(fn, t, err, newtype)
}

func implType_create_subarray(ndims int32, sizes, subsizes, starts unsafe.Pointer, order int32, oldtype uintptr, newtype unsafe.Pointer) int32 {
	return subarray("MPI_Type_create_subarray", ndims, sizes, subsizes, starts, cInts, order, oldtype, newtype)
}

func implType_create_subarray_c(ndims int32, sizes, subsizes, starts unsafe.Pointer, order int32, oldtype uintptr, newtype unsafe.Pointer) int32 {
	return subarray("MPI_Type_create_subarray_c", ndims, sizes, subsizes, starts, cLongs, order, oldtype, newtype)
}

func darray(fn string, size, rank, ndims int32, gsizes, distribs, dargs, psizes unsafe.Pointer, rg func(unsafe.Pointer, int) ([]int, bool), order int32, oldtype uintptr, newtype unsafe.Pointer) int32 {
	old, rc := typeCtor(fn, oldtype, newtype)
	if old == nil {
		return rc
	}
	if ndims <= 0 {
		return raise(fn, noComm, classErr(MPI_ERR_DIMS, fmt.Sprintf("ndims %d is not positive", ndims)))
	}
	n := int(ndims)
	gs, rc := readArr(fn, "array_of_gsizes", rg, gsizes, n)
	if rc != 0 {
		return rc
	}
	di, rc := readArr(fn, "array_of_distribs", cInts, distribs, n)
	if rc != 0 {
		return rc
	}
	da, rc := readArr(fn, "array_of_dargs", cInts, dargs, n)
	if rc != 0 {
		return rc
	}
	ps, rc := readArr(fn, "array_of_psizes", cInts, psizes, n)
	if rc != 0 {
		return rc
	}
	o, rc := orderArg(fn, order)
	if rc != 0 {
		return rc
	}
	ds := make([]mpi.Distribution, n)
	for i, d := range di {
		switch d {
		case MPI_DISTRIBUTE_NONE:
			ds[i] = mpi.DistributeNone
		case MPI_DISTRIBUTE_BLOCK:
			ds[i] = mpi.DistributeBlock
		case MPI_DISTRIBUTE_CYCLIC:
			ds[i] = mpi.DistributeCyclic
		default:
			return raise(fn, noComm, classErr(MPI_ERR_ARG, fmt.Sprintf("distribution %d of dimension %d is not one of MPI_DISTRIBUTE_*", d, i)))
		}
		if da[i] == MPI_DISTRIBUTE_DFLT_DARG {
			da[i] = mpi.DistributeDfltDarg
		}
	}
	t, err := mpi.NewDarray(int(size), int(rank), gs, ds, da, ps, o, old)
	return newType(fn, t, err, newtype)
}

func implType_create_darray(size, rank, ndims int32, gsizes, distribs, dargs, psizes unsafe.Pointer, order int32, oldtype uintptr, newtype unsafe.Pointer) int32 {
	return darray("MPI_Type_create_darray", size, rank, ndims, gsizes, distribs, dargs, psizes, cInts, order, oldtype, newtype)
}

func implType_create_darray_c(size, rank, ndims int32, gsizes, distribs, dargs, psizes unsafe.Pointer, order int32, oldtype uintptr, newtype unsafe.Pointer) int32 {
	return darray("MPI_Type_create_darray_c", size, rank, ndims, gsizes, distribs, dargs, psizes, cLongs, order, oldtype, newtype)
}

func resized(fn string, oldtype uintptr, lb, extent int64, newtype unsafe.Pointer) int32 {
	old, rc := typeCtor(fn, oldtype, newtype)
	if old == nil {
		return rc
	}
	t, err := mpi.NewResized(old, int(lb), int(extent))
	return newType(fn, t, err, newtype)
}

func implType_create_resized(oldtype uintptr, lb, extent int, newtype unsafe.Pointer) int32 {
	return resized("MPI_Type_create_resized", oldtype, int64(lb), int64(extent), newtype)
}

func implType_create_resized_c(oldtype uintptr, lb, extent int64, newtype unsafe.Pointer) int32 {
	return resized("MPI_Type_create_resized_c", oldtype, lb, extent, newtype)
}

func implType_dup(oldtype uintptr, newtype unsafe.Pointer) int32 {
	const fn = "MPI_Type_dup"
	old, rc := typeCtor(fn, oldtype, newtype)
	if old == nil {
		return rc
	}
	t, err := old.Dup()
	if err == nil && isPredefType(oldtype) {
		// The predefined handles are duplicates of mpigo's types already;
		// a duplicate of one records the handle's type as its origin.
		t.SetName(old.Name())
	}
	return newType(fn, t, err, newtype)
}

func isPredefType(h uintptr) bool { return h < uintptr(len(predefTypes)) }

// queryType resolves the datatype of a query.
func queryType(fn string, h uintptr, outs ...unsafe.Pointer) (*mpi.Datatype, int32) {
	if rc := running(fn); rc != 0 {
		return nil, rc
	}
	t, rc := typeArg(fn, nil, h)
	if t == nil {
		return nil, rc
	}
	for _, p := range outs {
		if p == nil {
			return nil, nullArray(fn, "an output argument")
		}
	}
	return t, 0
}

var combiners = [...]int32{
	mpi.CombinerNamed: MPI_COMBINER_NAMED, mpi.CombinerDup: MPI_COMBINER_DUP,
	mpi.CombinerContiguous: MPI_COMBINER_CONTIGUOUS, mpi.CombinerVector: MPI_COMBINER_VECTOR,
	mpi.CombinerHvector: MPI_COMBINER_HVECTOR, mpi.CombinerIndexed: MPI_COMBINER_INDEXED,
	mpi.CombinerHindexed: MPI_COMBINER_HINDEXED, mpi.CombinerIndexedBlock: MPI_COMBINER_INDEXED_BLOCK,
	mpi.CombinerHindexedBlock: MPI_COMBINER_HINDEXED_BLOCK, mpi.CombinerStruct: MPI_COMBINER_STRUCT,
	mpi.CombinerSubarray: MPI_COMBINER_SUBARRAY, mpi.CombinerDarray: MPI_COMBINER_DARRAY,
	mpi.CombinerF90Real: MPI_COMBINER_F90_REAL, mpi.CombinerF90Complex: MPI_COMBINER_F90_COMPLEX,
	mpi.CombinerF90Integer: MPI_COMBINER_F90_INTEGER, mpi.CombinerResized: MPI_COMBINER_RESIZED,
}

// envelope is the envelope of the datatype behind h: the predefined
// handles are named, though mpigo made them as duplicates.
func envelope(h uintptr, t *mpi.Datatype) (comb int32, ni, na, nt int) {
	if isPredefType(h) {
		return MPI_COMBINER_NAMED, 0, 0, 0
	}
	c, ni, na, nt := t.Envelope()
	if int(c) < len(combiners) {
		comb = combiners[c]
	}
	return comb, ni, na, nt
}

func implType_get_envelope(datatype uintptr, ni, na, nt, combiner unsafe.Pointer) int32 {
	const fn = "MPI_Type_get_envelope"
	t, rc := queryType(fn, datatype, ni, na, nt, combiner)
	if t == nil {
		return rc
	}
	c, i, a, d := envelope(datatype, t)
	*(*int32)(ni), *(*int32)(na), *(*int32)(nt), *(*int32)(combiner) = int32(i), int32(a), int32(d), c
	return MPI_SUCCESS
}

// largeTypes holds the datatypes of the large-count constructors.
var largeTypes sync.Map // *mpi.Datatype -> struct{}

// largeSplit moves the counts and displacements of the contents of a
// type made by a large-count constructor into its large counts, in
// MPI-4's order: for subarray the sizes, subsizes and starts, for darray
// the global sizes, for the others every integer and address.
func largeSplit(t *mpi.Datatype, ints, addrs []int) (is, as, ls []int) {
	if _, ok := largeTypes.Load(t); !ok {
		return ints, addrs, nil
	}
	c, _, _, _ := t.Envelope()
	switch c {
	case mpi.CombinerSubarray:
		nd := ints[0]
		return []int{nd, ints[len(ints)-1]}, addrs, ints[1 : 1+3*nd]
	case mpi.CombinerDarray:
		nd := ints[2]
		return append(append([]int{}, ints[:3]...), ints[3+nd:]...), addrs, ints[3 : 3+nd]
	case mpi.CombinerDup, mpi.CombinerNamed:
		return ints, addrs, nil
	}
	return nil, nil, append(append([]int{}, ints...), addrs...)
}

func implType_get_envelope_c(datatype uintptr, ni, na, nl, nt, combiner unsafe.Pointer) int32 {
	const fn = "MPI_Type_get_envelope_c"
	t, rc := queryType(fn, datatype, ni, na, nl, nt, combiner)
	if t == nil {
		return rc
	}
	c, i, a, d := envelope(datatype, t)
	var l int
	if c != MPI_COMBINER_NAMED {
		ints, addrs, _, _ := t.Contents()
		is, as, ls := largeSplit(t, ints, addrs)
		i, a, l = len(is), len(as), len(ls)
	}
	*(*int64)(ni), *(*int64)(na), *(*int64)(nl), *(*int64)(nt), *(*int32)(combiner) = int64(i), int64(a), int64(l), int64(d), c
	return MPI_SUCCESS
}

// contentsOf returns the ABI's contents of the datatype behind h: the
// distributions and orders as the ABI's constants, the datatypes as
// handles.
func contentsOf(fn string, h uintptr, t *mpi.Datatype) ([]int, []int, []uintptr, int32) {
	if isPredefType(h) {
		return nil, nil, nil, raise(fn, noComm, classErr(MPI_ERR_ARG, "a predefined datatype has no contents"))
	}
	ints, addrs, types, err := t.Contents()
	if err != nil {
		return nil, nil, nil, raise(fn, noComm, err)
	}
	c, _, _, _ := t.Envelope()
	order := func(i int) {
		if mpi.Order(ints[i]) == mpi.OrderFortran {
			ints[i] = MPI_ORDER_FORTRAN
		} else {
			ints[i] = MPI_ORDER_C
		}
	}
	switch c {
	case mpi.CombinerSubarray:
		order(len(ints) - 1)
	case mpi.CombinerDarray:
		nd := ints[2]
		for i := 3 + nd; i < 3+2*nd; i++ {
			switch mpi.Distribution(ints[i]) {
			case mpi.DistributeNone:
				ints[i] = MPI_DISTRIBUTE_NONE
			case mpi.DistributeBlock:
				ints[i] = MPI_DISTRIBUTE_BLOCK
			default:
				ints[i] = MPI_DISTRIBUTE_CYCLIC
			}
			if ints[i+nd] == mpi.DistributeDfltDarg {
				ints[i+nd] = MPI_DISTRIBUTE_DFLT_DARG
			}
		}
		order(len(ints) - 1)
	}
	hs := make([]uintptr, len(types))
	for i, d := range types {
		hs[i] = typeHandle(d)
		switch {
		case hs[i] == MPI_DATATYPE_NULL:
			// A type mpigo made itself (the basic elements of a Go
			// type): give it a handle of its own, which stays, and
			// the caller a new one.
			h := userTypes.add(d)
			typeHandles.Store(d, h)
			hs[i] = aliasHandle(d, h)
		case !isPredefType(hs[i]):
			// A derived datatype: a new handle, which the caller frees
			// (MPI-4.1 5.1.13) without freeing it under its others.
			hs[i] = aliasHandle(d, hs[i])
		}
	}
	return ints, addrs, hs, 0
}

func implType_get_contents(datatype uintptr, maxI, maxA, maxT int32, ints, addrs, types unsafe.Pointer) int32 {
	const fn = "MPI_Type_get_contents"
	t, rc := queryType(fn, datatype)
	if t == nil {
		return rc
	}
	is, as, ts, rc := contentsOf(fn, datatype, t)
	if rc != 0 {
		return rc
	}
	if int(maxI) < len(is) || int(maxA) < len(as) || int(maxT) < len(ts) {
		return raise(fn, noComm, classErr(MPI_ERR_ARG, fmt.Sprintf("the arrays are too small: the contents have %d integers, %d addresses and %d datatypes", len(is), len(as), len(ts))))
	}
	return putContents(fn, is, as, ts, ints, addrs, types)
}

func putContents(fn string, is, as []int, ts []uintptr, ints, addrs, types unsafe.Pointer) int32 {
	if (len(is) > 0 && ints == nil) || (len(as) > 0 && addrs == nil) || (len(ts) > 0 && types == nil) {
		return nullArray(fn, "an output array")
	}
	if len(is) > 0 {
		out := unsafe.Slice((*int32)(ints), len(is))
		for i, v := range is {
			out[i] = int32(v)
		}
	}
	if len(as) > 0 {
		out := unsafe.Slice((*int64)(addrs), len(as))
		for i, v := range as {
			out[i] = int64(v)
		}
	}
	if len(ts) > 0 {
		copy(unsafe.Slice((*uintptr)(types), len(ts)), ts)
	}
	return MPI_SUCCESS
}

func implType_get_contents_c(datatype uintptr, maxI, maxA, maxL, maxT int64, ints, addrs, larges, types unsafe.Pointer) int32 {
	const fn = "MPI_Type_get_contents_c"
	t, rc := queryType(fn, datatype)
	if t == nil {
		return rc
	}
	is, as, ts, rc := contentsOf(fn, datatype, t)
	if rc != 0 {
		return rc
	}
	is, as, ls := largeSplit(t, is, as)
	if maxI < int64(len(is)) || maxA < int64(len(as)) || maxL < int64(len(ls)) || maxT < int64(len(ts)) {
		return raise(fn, noComm, classErr(MPI_ERR_ARG, fmt.Sprintf("the arrays are too small: the contents have %d integers, %d addresses, %d large counts and %d datatypes", len(is), len(as), len(ls), len(ts))))
	}
	if len(ls) > 0 {
		if larges == nil {
			return nullArray(fn, "array_of_large_counts")
		}
		out := unsafe.Slice((*int64)(larges), len(ls))
		for i, v := range ls {
			out[i] = int64(v)
		}
	}
	return putContents(fn, is, as, ts, ints, addrs, types)
}

func put2(a, b unsafe.Pointer, x, y int) {
	*(*int64)(a), *(*int64)(b) = int64(x), int64(y)
}

func extentQuery(fn string, datatype uintptr, lb, extent unsafe.Pointer, trueExt bool) int32 {
	t, rc := queryType(fn, datatype, lb, extent)
	if t == nil {
		return rc
	}
	l, e := t.Extent()
	if trueExt {
		l, e = t.TrueExtent()
	}
	put2(lb, extent, l, e)
	return MPI_SUCCESS
}

func implType_get_extent(datatype uintptr, lb, extent unsafe.Pointer) int32 {
	return extentQuery("MPI_Type_get_extent", datatype, lb, extent, false)
}
func implType_get_extent_c(datatype uintptr, lb, extent unsafe.Pointer) int32 {
	return extentQuery("MPI_Type_get_extent_c", datatype, lb, extent, false)
}
func implType_get_extent_x(datatype uintptr, lb, extent unsafe.Pointer) int32 {
	return extentQuery("MPI_Type_get_extent_x", datatype, lb, extent, false)
}
func implType_get_true_extent(datatype uintptr, lb, extent unsafe.Pointer) int32 {
	return extentQuery("MPI_Type_get_true_extent", datatype, lb, extent, true)
}
func implType_get_true_extent_c(datatype uintptr, lb, extent unsafe.Pointer) int32 {
	return extentQuery("MPI_Type_get_true_extent_c", datatype, lb, extent, true)
}
func implType_get_true_extent_x(datatype uintptr, lb, extent unsafe.Pointer) int32 {
	return extentQuery("MPI_Type_get_true_extent_x", datatype, lb, extent, true)
}

func typeSize64(fn string, datatype uintptr, size unsafe.Pointer) int32 {
	t, rc := queryType(fn, datatype, size)
	if t == nil {
		return rc
	}
	*(*int64)(size) = int64(t.Size())
	return MPI_SUCCESS
}

func implType_size_c(datatype uintptr, size unsafe.Pointer) int32 {
	return typeSize64("MPI_Type_size_c", datatype, size)
}
func implType_size_x(datatype uintptr, size unsafe.Pointer) int32 {
	return typeSize64("MPI_Type_size_x", datatype, size)
}

// userNamed holds the datatypes MPI_Type_set_name named.
var userNamed sync.Map // *mpi.Datatype -> struct{}

func implType_set_name(datatype uintptr, name unsafe.Pointer) int32 {
	const fn = "MPI_Type_set_name"
	t, rc := queryType(fn, datatype, name)
	if t == nil {
		return rc
	}
	s := cString(name)
	if len(s) > MPI_MAX_OBJECT_NAME-1 {
		s = s[:MPI_MAX_OBJECT_NAME-1]
	}
	t.SetName(s)
	userNamed.Store(t, struct{}{})
	return MPI_SUCCESS
}

func implType_get_name(datatype uintptr, name, resultlen unsafe.Pointer) int32 {
	const fn = "MPI_Type_get_name"
	if datatype == MPI_DATATYPE_NULL && phase.Load() == phaseRunning && name != nil && resultlen != nil {
		putString(name, resultlen, "MPI_DATATYPE_NULL", MPI_MAX_OBJECT_NAME) // as for MPI_COMM_NULL
		return MPI_SUCCESS
	}
	t, rc := queryType(fn, datatype, name, resultlen)
	if t == nil {
		return rc
	}
	s := t.Name()
	if !isPredefType(datatype) && !namedByUser(t) {
		s = "" // MPI: a derived type has no name until one is set
	}
	putString(name, resultlen, s, MPI_MAX_OBJECT_NAME)
	return MPI_SUCCESS
}

// namedByUser says whether MPI_Type_set_name named t: mpigo gives every
// derived type a descriptive name, which MPI's empty name hides.
func namedByUser(t *mpi.Datatype) bool {
	_, ok := userNamed.Load(t)
	return ok
}

func implType_match_size(typeclass, size int32, datatype unsafe.Pointer) int32 {
	const fn = "MPI_Type_match_size"
	if rc := running(fn); rc != 0 {
		return rc
	}
	if datatype == nil {
		return nullArray(fn, "datatype")
	}
	// The first type of the class with that size; long double counts
	// where this compiler gives it a size of its own (16 bytes on
	// x86-64 and arm64, where MPICH's suite asks for it).
	var candidates []uintptr
	switch typeclass {
	case MPI_TYPECLASS_INTEGER:
		candidates = []uintptr{MPI_INT8_T, MPI_INT16_T, MPI_INT32_T, MPI_INT64_T}
	case MPI_TYPECLASS_REAL:
		candidates = []uintptr{MPI_FLOAT, MPI_DOUBLE, MPI_LONG_DOUBLE}
	case MPI_TYPECLASS_COMPLEX:
		candidates = []uintptr{MPI_C_FLOAT_COMPLEX, MPI_C_DOUBLE_COMPLEX, MPI_C_LONG_DOUBLE_COMPLEX}
	default:
		return raise(fn, noComm, classErr(MPI_ERR_ARG, fmt.Sprintf("%d is not a type class", typeclass)))
	}
	predefTypesMu.Do(setupTypes)
	var h uintptr
	for _, c := range candidates {
		if t := predefTypes[c]; t != nil && t.Size() == int(size) {
			h = c
			break
		}
	}
	if h == 0 {
		return raise(fn, noComm, classErr(MPI_ERR_ARG, fmt.Sprintf("no datatype of class %d has %d bytes", typeclass, size)))
	}
	*(*uintptr)(datatype) = h
	return MPI_SUCCESS
}

func f90Type(fn string, t *mpi.Datatype, err error, newtype unsafe.Pointer) int32 {
	if rc := running(fn); rc != 0 {
		return rc
	}
	if newtype == nil {
		return nullArray(fn, "newtype")
	}
	if h, ok := typeHandles.Load(t); ok && err == nil {
		*(*uintptr)(newtype) = h.(uintptr)
		return MPI_SUCCESS
	}
	return newType(fn, t, err, newtype)
}

func implType_create_f90_real(p, r int32, newtype unsafe.Pointer) int32 {
	t, err := mpi.TypeCreateF90Real(f90Arg(p), f90Arg(r))
	return f90Type("MPI_Type_create_f90_real", t, err, newtype)
}

func implType_create_f90_complex(p, r int32, newtype unsafe.Pointer) int32 {
	t, err := mpi.TypeCreateF90Complex(f90Arg(p), f90Arg(r))
	return f90Type("MPI_Type_create_f90_complex", t, err, newtype)
}

func implType_create_f90_integer(r int32, newtype unsafe.Pointer) int32 {
	t, err := mpi.TypeCreateF90Integer(f90Arg(r))
	return f90Type("MPI_Type_create_f90_integer", t, err, newtype)
}

// f90Arg maps MPI_UNDEFINED (no constraint) to mpigo's Undefined.
func f90Arg(v int32) int {
	if v == MPI_UNDEFINED {
		return mpi.Undefined
	}
	return int(v)
}

func implGet_address(location, address unsafe.Pointer) int32 {
	const fn = "MPI_Get_address"
	if rc := running(fn); rc != 0 {
		return rc
	}
	if address == nil {
		return nullArray(fn, "address")
	}
	*(*int64)(address) = int64(uintptr(location))
	return MPI_SUCCESS
}
