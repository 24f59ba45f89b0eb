package mpi

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"sync/atomic"

	"github.com/mpigo/mpi/internal/cnum"
	"github.com/mpigo/mpi/internal/datatype"
	"github.com/mpigo/mpi/internal/wire"
)

// Datatype describes the elements of a low-level buffer (MPI_Datatype).
//
// The predefined datatypes correspond to Go's basic types; a buffer of n
// elements of a predefined datatype of size s is n*s bytes in the
// machine's layout. Derived datatypes (NewContiguous, NewVector,
// NewStruct, NewSubarray, ... and DatatypeOf for Go types) describe data
// scattered through a buffer: a send gathers it, a receive scatters it,
// chunk by chunk and without staging the whole message. A derived datatype
// must be committed (Commit) before it is used in communication, and may
// be freed (Free) afterwards.
//
// Offsets of a datatype are relative to the start of the []byte buffer it
// is used with: a datatype that reaches before offset 0 (a negative lower
// bound) or past the end of the buffer is refused with ErrBuffer, since Go
// slices cannot be indexed below 0.
//
// Messages sent with a predefined datatype carry the same type signature as
// the typed API's, so a c.Send(buf, n, mpi.Float64, ...) can be received by
// mpi.Recv[[]float64] and vice versa. A derived datatype whose elements are
// all of one predefined datatype carries that datatype's signature; one
// that mixes kinds carries none (like Byte) and matches any receive;
// DatatypeOf[T] carries T's.
//
// Commit and Free must not run concurrently with other uses of the same
// Datatype; everything else may be called from any goroutine.
type Datatype struct {
	name      string
	size      int
	sig       uint64
	t         *datatype.Type
	derived   bool
	committed bool
	freedAt   uint64                            // 0, or the freeEpoch its Free took (atomic: collectives under way read it)
	ops       map[string]func(inout, in []byte) // predefined reductions defined on it
	cnum      cnum.Kind                         // a number Go cannot compute on: its kernels are cnum's (ctypes.go)
	packedOf  *Datatype                         // for the packed stand-in of a reduction (packedType): the datatype it stands for

	// padded: the holes of the type map are a Go type's padding, which
	// nobody reads, so collectives may move count elements as count
	// extents of memory (the pair types and DatatypeOf's types).
	padded bool

	// how records the constructor call that made a derived datatype, for
	// Envelope and Contents; nil for a named (predefined) datatype.
	how *contents

	attrs *[]typeAttr // attributes (typeattr.go), guarded by typeAttrs
}

// block returns the bytes one element takes in the contiguous memory that
// collectives move: the size of a contiguous datatype, the extent of a
// padded one, and 0 for a datatype whose holes must not be touched.
func (d *Datatype) block() int {
	switch {
	case d.t.Contiguous():
		return d.size
	case d.padded && d.t.LB == 0 && d.t.TrueLB >= 0 && d.t.TrueUB <= d.t.UB:
		return int(d.t.Extent())
	}
	return 0
}

// mem is block, or the size for a datatype that has no block form.
func (d *Datatype) mem() int {
	if b := d.block(); b > 0 {
		return b
	}
	return d.size
}

// The getters below answer for a nil *Datatype (MPI_DATATYPE_NULL, which
// every call taking a datatype rejects with ErrType) without panicking:
// the zero value of each result, and the name "<nil>" (what fmt prints for
// a nil pointer). A freed datatype keeps answering what it was, as its
// Contents' constituents do.

// nilTypeName is what Name and String say of a nil *Datatype.
const nilTypeName = "<nil>"

// Name returns the datatype's name; "<nil>" for a nil *Datatype.
func (d *Datatype) Name() string {
	if d == nil {
		return nilTypeName
	}
	return d.name
}

// SetName sets the name used in messages and by String
// (MPI_Type_set_name). On a nil *Datatype it does nothing.
func (d *Datatype) SetName(name string) {
	if d == nil {
		return
	}
	d.name = name
}

// Size returns the number of bytes of data in one element, holes not
// counted (MPI_Type_size); 0 for a nil *Datatype.
func (d *Datatype) Size() int {
	if d == nil {
		return 0
	}
	return d.size
}

// String returns the name; "<nil>" for a nil *Datatype.
func (d *Datatype) String() string { return d.Name() }

// Extent returns the lower bound and the extent of the datatype: the
// distance between consecutive elements of a buffer of several
// (MPI_Type_get_extent); 0, 0 for a nil *Datatype.
func (d *Datatype) Extent() (lb, extent int) {
	if d == nil {
		return 0, 0
	}
	return int(d.t.LB), int(d.t.Extent())
}

// LB returns the lower bound (MPI_Type_get_extent's lb); 0 for a nil
// *Datatype.
func (d *Datatype) LB() int {
	if d == nil {
		return 0
	}
	return int(d.t.LB)
}

// UB returns the upper bound, lower bound plus extent; 0 for a nil
// *Datatype.
func (d *Datatype) UB() int {
	if d == nil {
		return 0
	}
	return int(d.t.UB)
}

// TrueExtent returns the lower bound and the extent of the data itself,
// ignoring bounds set with NewResized (MPI_Type_get_true_extent); 0, 0
// for a nil *Datatype.
func (d *Datatype) TrueExtent() (lb, extent int) {
	if d == nil {
		return 0, 0
	}
	return int(d.t.TrueLB), int(d.t.TrueUB - d.t.TrueLB)
}

// Committed reports whether the datatype may be used in communication:
// false for a nil or freed *Datatype.
func (d *Datatype) Committed() bool { return d != nil && d.committed && !d.isFreed() }

// Commit makes a derived datatype usable in communication and Pack
// (MPI_Type_commit). Committing twice, or a predefined datatype, does
// nothing.
func (d *Datatype) Commit() (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Datatype.Commit", nil, Undefined, Undefined), &err)
	}
	if d == nil || d.isFreed() {
		return typeErr("TypeCommit", "datatype is nil or freed")
	}
	if !d.committed {
		// Only a derived datatype's first Commit writes: goroutine ranks
		// share the predefined ones and may commit them at once.
		d.committed = true
	}
	return nil
}

// Free marks a derived datatype as no longer usable (MPI_Type_free),
// after deleting its attributes with their delete callbacks (the last set
// first; an error of one leaves the datatype and its remaining attributes
// as they are). Datatypes made from it, and operations already started
// with it, are not affected. Predefined datatypes cannot be freed.
func (d *Datatype) Free() (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Datatype.Free", nil, Undefined, Undefined), &err)
	}

	if d == nil || d.isFreed() {
		return typeErr("TypeFree", "datatype is nil or freed already")
	}
	if !d.derived {
		return typeErr("TypeFree", "predefined datatype %s cannot be freed", d.name)
	}
	if err := d.deleteAllAttrs("TypeFree"); err != nil {
		return err
	}
	atomic.StoreUint64(&d.freedAt, freeEpoch.Add(1))
	return nil
}

// freeEpoch counts the calls of Datatype.Free: a collective that runs
// after its call returned (non-blocking or persistent) notes it at its
// call, and a datatype freed later still counts as usable for it
// (checkCommBefore).
var freeEpoch atomic.Uint64

// isFreed reports whether d has been freed.
func (d *Datatype) isFreed() bool { return atomic.LoadUint64(&d.freedAt) != 0 }

// Dup returns a new datatype with the same type map (MPI_Type_dup); it is
// committed if d is, and gets the attributes of d that their keys' copy
// callbacks keep.
func (d *Datatype) Dup() (_ *Datatype, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Datatype.Dup", nil, Undefined, Undefined), &err)
	}

	if err := d.usable("TypeDup"); err != nil {
		return nil, err
	}
	typeAttrs.Lock() // d.attrs may be being set
	n := *d
	typeAttrs.Unlock()
	n.derived, n.freedAt, n.attrs = true, 0, nil
	n.how = &contents{combiner: CombinerDup, types: []*Datatype{d}}
	if err := d.copyAttrs("TypeDup", &n); err != nil {
		return nil, err
	}
	return &n, nil
}

func typeErr(op, format string, args ...any) error {
	return (*Comm)(nil).errorf(op, ErrType, loc{}, format, args...)
}

// usable checks that d may be used to build another datatype.
func (d *Datatype) usable(op string) error {
	if d == nil {
		return typeErr(op, "nil datatype")
	}
	if d.isFreed() {
		return typeErr(op, "datatype %s has been freed", d.name)
	}
	return nil
}

// checkComm checks that d may be used in communication or Pack.
func (d *Datatype) checkComm() string { return d.checkCommBefore(math.MaxUint64) }

// checkCommBefore is checkComm for an operation that began when
// freeEpoch was epoch: a datatype freed after that is still usable for
// it, as MPI lets a program free a datatype that a pending operation
// uses (MPICH's coll/nonblocking2 frees one between Igather and Wait).
func (d *Datatype) checkCommBefore(epoch uint64) string {
	switch {
	case d == nil:
		return "nil datatype"
	case d.isFreed() && atomic.LoadUint64(&d.freedAt) <= epoch:
		return "datatype " + d.name + " has been freed"
	case !d.committed:
		return "datatype " + d.name + " is not committed (call Commit)"
	}
	return ""
}

func basic[T any](name string, k datatype.Basic) *Datatype {
	info := datatype.InfoFor[T]()
	return &Datatype{name: name, size: info.Size, sig: info.Sig, t: datatype.NewBasic(k), committed: true}
}

// pairType is the predefined datatype of ValueLoc[T]: a struct of the
// value and the int location at their Go offsets, with Go's size of the
// pair as its extent. Its size is the data alone (a Float32Loc is 4+8
// bytes of data in 16 of memory) and Status.GetElements counts two basic
// elements per pair. Point-to-point calls send the data without the
// padding; collectives move whole pairs (padded is set).
func pairType[T Ordered](name string) *Datatype {
	d, err := DatatypeOf[ValueLoc[T]]()
	if err != nil {
		panic(err) // ValueLoc of a number is always plain
	}
	d.name, d.derived, d.padded = name, false, true
	return d
}

// The predefined datatypes. Each is made once, when the package is
// initialized (predefined has the recipes).
var (
	Byte       = predefined("Byte")       // untyped bytes (MPI_BYTE): matches any type
	Packed     = predefined("Packed")     // packed data (MPI_PACKED)
	Bool       = predefined("Bool")       // MPI_C_BOOL
	Int8       = predefined("Int8")       // MPI_INT8_T
	Int16      = predefined("Int16")      // MPI_INT16_T
	Int32      = predefined("Int32")      // MPI_INT32_T, MPI_INT
	Int64      = predefined("Int64")      // MPI_INT64_T, MPI_LONG
	Int        = predefined("Int")        // Go int
	Uint8      = predefined("Uint8")      // MPI_UINT8_T, MPI_UNSIGNED_CHAR
	Uint16     = predefined("Uint16")     // MPI_UINT16_T
	Uint32     = predefined("Uint32")     // MPI_UINT32_T, MPI_UNSIGNED
	Uint64     = predefined("Uint64")     // MPI_UINT64_T
	Uint       = predefined("Uint")       // Go uint
	Float32    = predefined("Float32")    // MPI_FLOAT
	Float64    = predefined("Float64")    // MPI_DOUBLE
	Complex64  = predefined("Complex64")  // MPI_C_FLOAT_COMPLEX
	Complex128 = predefined("Complex128") // MPI_C_DOUBLE_COMPLEX

	// The pair types of MinLoc and MaxLoc: ValueLoc[T], a value with an
	// int location, as a struct datatype over Go's layout of the pair.
	Float32Loc = predefined("Float32Loc") // MPI_FLOAT_INT
	Float64Loc = predefined("Float64Loc") // MPI_DOUBLE_INT
	Int32Loc   = predefined("Int32Loc")   // MPI_2INT
	Int64Loc   = predefined("Int64Loc")   // MPI_LONG_INT
	IntLoc     = predefined("IntLoc")     // Go int with location
)

// predefined makes the predefined datatype called name (the variables
// above): its size, type signature, type map and the reduction kernels
// that apply to it.
func predefined(name string) *Datatype {
	switch name {
	case "Byte":
		return &Datatype{name: "Byte", size: 1, t: datatype.NewBasic(datatype.BasicByte), committed: true, ops: bitOps}
	case "Packed":
		return &Datatype{name: "Packed", size: 1, t: datatype.NewBasic(datatype.BasicByte), committed: true}
	case "Bool":
		return withOps(basic[bool]("Bool", datatype.BasicBool), boolOps())
	case "Int8":
		return withOps(basic[int8]("Int8", datatype.BasicInt8), intOps[int8]())
	case "Int16":
		return withOps(basic[int16]("Int16", datatype.BasicInt16), intOps[int16]())
	case "Int32":
		return withOps(basic[int32]("Int32", datatype.BasicInt32), intOps[int32]())
	case "Int64":
		return withOps(basic[int64]("Int64", datatype.BasicInt64), intOps[int64]())
	case "Int":
		return withOps(basic[int]("Int", datatype.BasicOf(reflect.TypeFor[int]())), intOps[int]())
	case "Uint8":
		return withOps(basic[uint8]("Uint8", datatype.BasicUint8), intOps[uint8]())
	case "Uint16":
		return withOps(basic[uint16]("Uint16", datatype.BasicUint16), intOps[uint16]())
	case "Uint32":
		return withOps(basic[uint32]("Uint32", datatype.BasicUint32), intOps[uint32]())
	case "Uint64":
		return withOps(basic[uint64]("Uint64", datatype.BasicUint64), intOps[uint64]())
	case "Uint":
		return withOps(basic[uint]("Uint", datatype.BasicOf(reflect.TypeFor[uint]())), intOps[uint]())
	case "Float32":
		return withOps(basic[float32]("Float32", datatype.BasicFloat32), floatOps[float32]())
	case "Float64":
		return withOps(basic[float64]("Float64", datatype.BasicFloat64), floatOps[float64]())
	case "Complex64":
		return withOps(basic[complex64]("Complex64", datatype.BasicComplex64), complexOps[complex64]())
	case "Complex128":
		return withOps(basic[complex128]("Complex128", datatype.BasicComplex128), complexOps[complex128]())
	case "Float32Loc":
		return withOps(pairType[float32]("Float32Loc"), locOps[float32]())
	case "Float64Loc":
		return withOps(pairType[float64]("Float64Loc"), locOps[float64]())
	case "Int32Loc":
		return withOps(pairType[int32]("Int32Loc"), locOps[int32]())
	case "Int64Loc":
		return withOps(pairType[int64]("Int64Loc"), locOps[int64]())
	case "IntLoc":
		return withOps(pairType[int]("IntLoc"), locOps[int]())
	}
	panic("mpi: no predefined datatype " + name) // unreachable: only the variables above call it
}

// bitOps are the bitwise operations, which MPI also defines on MPI_BYTE.
var bitOps = kernels{"band": kernel(Band[uint8]().vec), "bor": kernel(Bor[uint8]().vec), "bxor": kernel(Bxor[uint8]().vec)}

// AsBytes returns the memory of a slice of plain (pointer-free) values as
// bytes, without copying, for use with the low-level calls. E must not
// contain pointers, strings, slices, maps or interfaces.
func AsBytes[E any](s []E) []byte { return datatype.SliceBytes(s) }

// DatatypeOf returns the datatype of the plain Go type T (numbers, bools,
// and arrays and structs of those): a struct type map of its fields at
// their offsets, with Go's size of T as its extent, committed. A buffer of
// n elements is the memory of a []T of length n (see AsBytes). The type
// map is derived once per type and cached. T that is not plain gives
// ErrType.
//
// Like every datatype, it sends the fields' data without the padding
// between them. When T has no padding that is exactly T's memory, which
// is what the typed API sends for a []T: such messages carry T's
// signature, so mpi.Recv[[]T] receives what c.Send(buf, n, DatatypeOf[T])
// sent and the other way round. When T has padding the two forms differ,
// and DatatypeOf's messages carry a signature of their own: a typed
// receive of them fails with ErrType instead of misreading them.
func DatatypeOf[T any]() (_ *Datatype, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("DatatypeOf", nil, Undefined, Undefined), &err)
	}
	info := datatype.InfoFor[T]()
	if !info.Plain {
		return nil, typeErr("DatatypeOf", "%v is not a plain type (it holds pointers, strings, slices, maps or interfaces)", info.Type)
	}
	tm := info.TypeMap()
	sig := info.Sig
	if tm.Size != int64(info.Size) {
		sig = sig*0x9E3779B97F4A7C15 ^ 0x7061636b6564 // "packed": a signature of its own
		if sig == 0 {
			sig = 1
		}
	}
	return &Datatype{name: info.Type.String(), size: int(tm.Size), sig: sig, t: tm, derived: true, committed: true, padded: true}, nil
}

// derive wraps a new type map built from the datatypes olds.
func derive(op string, t *datatype.Type, err error, olds ...*Datatype) (*Datatype, error) {
	if err != nil {
		class := ErrArg
		if !errors.Is(err, datatype.ErrType) {
			class = ErrIntern
		}
		return nil, (*Comm)(nil).errorf(op, class, loc{}, "%v", err)
	}
	if t.Size > int64(int(^uint(0)>>1)) {
		return nil, (*Comm)(nil).errorf(op, ErrArg, loc{}, "datatype of %d bytes is too large", t.Size)
	}
	var sig uint64
	for i, o := range olds {
		if i == 0 {
			sig = o.sig
		} else if o.sig != sig {
			sig = 0
		}
	}
	name := op[len("New"):] + "("
	for i, o := range olds {
		if i > 0 {
			name += ","
		}
		name += o.name
	}
	return &Datatype{name: name + ")", size: int(t.Size), sig: sig, t: t, derived: true}, nil
}

// NewContiguous returns the datatype of count consecutive elements of old
// (MPI_Type_contiguous).
func NewContiguous(count int, old *Datatype) (_ *Datatype, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("NewContiguous", nil, Undefined, Undefined), &err)
	}
	if err := old.usable("NewContiguous"); err != nil {
		return nil, err
	}
	t, err := datatype.NewContiguous(count, old.t)
	return recorded(CombinerContiguous, []int{count}, nil, []*Datatype{old})(derive("NewContiguous", t, err, old))
}

// NewVector returns the datatype of count blocks of blocklen elements of
// old, the starts of consecutive blocks stride elements apart
// (MPI_Type_vector).
func NewVector(count, blocklen, stride int, old *Datatype) (_ *Datatype, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("NewVector", nil, Undefined, Undefined), &err)
	}
	if err := old.usable("NewVector"); err != nil {
		return nil, err
	}
	t, err := datatype.NewVector(count, blocklen, stride, old.t)
	return recorded(CombinerVector, []int{count, blocklen, stride}, nil, []*Datatype{old})(derive("NewVector", t, err, old))
}

// NewHvector is NewVector with the stride in bytes (MPI_Type_create_hvector).
func NewHvector(count, blocklen, stride int, old *Datatype) (_ *Datatype, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("NewHvector", nil, Undefined, Undefined), &err)
	}
	if err := old.usable("NewHvector"); err != nil {
		return nil, err
	}
	t, err := datatype.NewHvector(count, blocklen, int64(stride), old.t)
	return recorded(CombinerHvector, []int{count, blocklen}, []int{stride}, []*Datatype{old})(derive("NewHvector", t, err, old))
}

// NewIndexed returns the datatype of blocks of blocklens[i] elements of
// old starting displs[i] extents of old from the start (MPI_Type_indexed).
func NewIndexed(blocklens, displs []int, old *Datatype) (_ *Datatype, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("NewIndexed", nil, Undefined, Undefined), &err)
	}
	if err := old.usable("NewIndexed"); err != nil {
		return nil, err
	}
	t, err := datatype.NewIndexed(blocklens, displs, old.t)
	return recorded(CombinerIndexed, cat([]int{len(blocklens)}, blocklens, displs), nil, []*Datatype{old})(derive("NewIndexed", t, err, old))
}

// NewHindexed is NewIndexed with displacements in bytes
// (MPI_Type_create_hindexed).
func NewHindexed(blocklens, displs []int, old *Datatype) (_ *Datatype, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("NewHindexed", nil, Undefined, Undefined), &err)
	}
	if err := old.usable("NewHindexed"); err != nil {
		return nil, err
	}
	t, err := datatype.NewHindexed(blocklens, int64s(displs), old.t)
	return recorded(CombinerHindexed, cat([]int{len(blocklens)}, blocklens), cat(displs), []*Datatype{old})(derive("NewHindexed", t, err, old))
}

// NewIndexedBlock is NewIndexed with every block blocklen elements long
// (MPI_Type_create_indexed_block).
func NewIndexedBlock(blocklen int, displs []int, old *Datatype) (_ *Datatype, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("NewIndexedBlock", nil, Undefined, Undefined), &err)
	}
	if err := old.usable("NewIndexedBlock"); err != nil {
		return nil, err
	}
	t, err := datatype.NewIndexedBlock(blocklen, displs, old.t)
	return recorded(CombinerIndexedBlock, cat([]int{len(displs), blocklen}, displs), nil, []*Datatype{old})(derive("NewIndexedBlock", t, err, old))
}

// NewHindexedBlock is NewIndexedBlock with displacements in bytes
// (MPI_Type_create_hindexed_block).
func NewHindexedBlock(blocklen int, displs []int, old *Datatype) (_ *Datatype, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("NewHindexedBlock", nil, Undefined, Undefined), &err)
	}
	if err := old.usable("NewHindexedBlock"); err != nil {
		return nil, err
	}
	t, err := datatype.NewHindexedBlock(blocklen, int64s(displs), old.t)
	return recorded(CombinerHindexedBlock, []int{len(displs), blocklen}, cat(displs), []*Datatype{old})(derive("NewHindexedBlock", t, err, old))
}

// NewStruct returns the datatype of blocks of blocklens[i] elements of
// types[i] at byte displacements displs[i] (MPI_Type_create_struct). Its
// extent is rounded up to the largest alignment of its basic elements, as
// a Go struct's size is; use NewResized for another extent. For a Go
// struct type, DatatypeOf builds this from the type itself.
func NewStruct(blocklens, displs []int, types []*Datatype) (_ *Datatype, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("NewStruct", nil, Undefined, Undefined), &err)
	}
	ts := make([]*datatype.Type, len(types))
	for i, o := range types {
		if err := o.usable("NewStruct"); err != nil {
			return nil, err
		}
		ts[i] = o.t
	}
	t, err := datatype.NewStruct(blocklens, int64s(displs), ts)
	return recorded(CombinerStruct, cat([]int{len(blocklens)}, blocklens), cat(displs), append([]*Datatype(nil), types...))(derive("NewStruct", t, err, types...))
}

// NewResized returns old with lower bound lb and extent extent
// (MPI_Type_create_resized): consecutive elements of the new datatype lie
// extent bytes apart.
func NewResized(old *Datatype, lb, extent int) (_ *Datatype, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("NewResized", nil, Undefined, Undefined), &err)
	}
	if err := old.usable("NewResized"); err != nil {
		return nil, err
	}
	t, err := datatype.NewResized(old.t, int64(lb), int64(extent))
	return recorded(CombinerResized, nil, []int{lb, extent}, []*Datatype{old})(derive("NewResized", t, err, old))
}

// Order is the storage order of a multi-dimensional array, for
// NewSubarray and NewDarray.
type Order int

// Storage orders (MPI_ORDER_C, MPI_ORDER_FORTRAN).
const (
	OrderC       Order = Order(datatype.OrderC)       // row-major: the last index varies fastest
	OrderFortran Order = Order(datatype.OrderFortran) // column-major: the first index varies fastest
)

// NewSubarray returns the datatype of the block of subsizes elements
// starting at index starts of an array of sizes elements of old, stored in
// order (MPI_Type_create_subarray). Its lower bound is 0 and its extent
// the whole array's.
func NewSubarray(sizes, subsizes, starts []int, order Order, old *Datatype) (_ *Datatype, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("NewSubarray", nil, Undefined, Undefined), &err)
	}
	if err := old.usable("NewSubarray"); err != nil {
		return nil, err
	}
	t, err := datatype.NewSubarray(sizes, subsizes, starts, datatype.Order(order), old.t)
	return recorded(CombinerSubarray, cat([]int{len(sizes)}, sizes, subsizes, starts, []int{int(order)}), nil, []*Datatype{old})(derive("NewSubarray", t, err, old))
}

// Distribution says how NewDarray distributes one dimension of an array.
type Distribution int

// Distributions (MPI_DISTRIBUTE_NONE, _BLOCK, _CYCLIC) and the default
// distribution argument (MPI_DISTRIBUTE_DFLT_DARG).
const (
	DistributeNone     Distribution = Distribution(datatype.DistributeNone)
	DistributeBlock    Distribution = Distribution(datatype.DistributeBlock)
	DistributeCyclic   Distribution = Distribution(datatype.DistributeCyclic)
	DistributeDfltDarg              = datatype.DistributeDfltDarg
)

// NewDarray returns the datatype of the part of a global array of gsizes
// elements of old, stored in order, that process rank of size processes
// holds when the array is distributed over a process grid of psizes with
// distribs and their arguments dargs (block size, or DistributeDfltDarg)
// (MPI_Type_create_darray). The process grid is row-major, as in MPI. Its
// lower bound is 0 and its extent the whole array's.
func NewDarray(size, rank int, gsizes []int, distribs []Distribution, dargs, psizes []int, order Order, old *Datatype) (_ *Datatype, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("NewDarray", nil, Undefined, Undefined), &err)
	}
	if err := old.usable("NewDarray"); err != nil {
		return nil, err
	}
	ds := make([]datatype.Distribution, len(distribs))
	for i, d := range distribs {
		ds[i] = datatype.Distribution(d)
	}
	t, err := datatype.NewDarray(size, rank, gsizes, ds, dargs, psizes, datatype.Order(order), old.t)
	return recorded(CombinerDarray, cat([]int{size, rank, len(gsizes)}, gsizes, distInts(distribs), dargs, psizes, []int{int(order)}), nil, []*Datatype{old})(derive("NewDarray", t, err, old))
}

func int64s(a []int) []int64 {
	b := make([]int64, len(a))
	for i, x := range a {
		b[i] = int64(x)
	}
	return b
}

// span checks that count elements of dt fit in a buffer of n bytes.
func (d *Datatype) span(count, n int) string {
	s, _ := d.fits(count, n)
	return s
}

// fits checks that count elements of dt fit in a buffer of n bytes, and
// returns the class and message of the error if not: ErrCount if their
// span overflows, ErrBuffer if it leaves the buffer.
func (d *Datatype) fits(count, n int) (msg string, class error) {
	lo, hi, ok := d.t.SpanChecked(count)
	if !ok {
		return fmt.Sprintf("%d elements of %s (extent %d) span more bytes than an int holds", count, d.name, d.t.Extent()), ErrCount
	}
	if lo < 0 {
		return fmt.Sprintf("%d elements of %s start %d bytes before the buffer", count, d.name, -lo), ErrBuffer
	}
	if hi > int64(n) {
		return fmt.Sprintf("%d elements of %s need %d bytes, the buffer has %d", count, d.name, hi, n), ErrBuffer
	}
	return "", nil
}

// layout is the engine's view of count elements of a non-contiguous
// datatype in buf: message bytes are packed from and unpacked into it at
// any offset.
type layout struct {
	t   *datatype.Type
	buf []byte
	n   int
}

func (l *layout) Len() int                   { return l.n }
func (l *layout) Pack(dst []byte, off int)   { l.t.PackAt(dst, l.buf, int64(off)) }
func (l *layout) Unpack(src []byte, off int) { l.t.UnpackAt(src, l.buf, int64(off)) }

// CopyFrom copies from another layout read in place without packing in
// between, when both type maps allow (engine.DirectCopier).
func (l *layout) CopyFrom(src wire.Packer, n int) bool {
	s, ok := src.(*layout)
	return ok && l.t.CopyDirect(l.buf, s.t, s.buf, int64(n))
}

// PackSize returns the bytes Pack needs for count elements of dt (MPI_Pack_size).
func PackSize(count int, dt *Datatype) (_ int, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("PackSize", nil, Undefined, Undefined), &err)
	}
	if s := dt.checkComm(); s != "" {
		return 0, typeErr("PackSize", "%s", s)
	}
	return (*Comm)(nil).elemBytes("PackSize", loc{}, count, dt)
}

// packArgs validates the arguments shared by Pack and Unpack (and their
// external forms, external set) and returns the packed size of the data:
// in external32 it is smaller than in memory where dt holds C longs.
func packArgs(op string, data []byte, count int, dt *Datatype, packed []byte, pos int, external bool) (int, error) {
	if s := dt.checkComm(); s != "" {
		return 0, typeErr(op, "%s", s)
	}
	need, err := (*Comm)(nil).elemBytes(op, loc{}, count, dt)
	if err != nil {
		return 0, err
	}
	if external {
		// Never more than the memory size, which fits.
		need = int(dt.t.ExternalSize(count))
	}
	if isBottom(data) {
		// Resolved by the caller.
	} else if s, class := dt.fits(count, len(data)); class != nil {
		return 0, (*Comm)(nil).errorf(op, class, loc{}, "%s", s)
	}
	if pos < 0 || pos > len(packed) || need > len(packed)-pos {
		return 0, (*Comm)(nil).errorf(op, ErrBuffer, loc{}, "%d packed bytes at position %d do not fit in %d bytes", need, pos, len(packed))
	}
	return need, nil
}

// Pack appends count elements of dt from inbuf to the packed buffer outbuf
// at byte position pos, and returns the position after them (MPI_Pack).
// The packed form is the elements' data without holes, in the machine's
// representation; send it with the Packed datatype. Unlike MPI_Pack there
// is no communicator argument: every rank of a job packs alike.
func Pack(inbuf []byte, count int, dt *Datatype, outbuf []byte, pos int) (_ int, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Pack", nil, Undefined, Undefined), &err)
	}

	n, err := packArgs("Pack", inbuf, count, dt, outbuf, pos, false)
	if err != nil {
		return pos, err
	}
	if isBottom(inbuf) {
		lay, bad := resolveBottom(dt, count)
		if bad != "" {
			return pos, (*Comm)(nil).errorf("Pack", ErrBuffer, loc{}, "%s", bad)
		}
		lay.Pack(outbuf[pos:pos+n], 0)
		return pos + n, nil
	}
	dt.t.PackAt(outbuf[pos:pos+n], inbuf, 0)
	return pos + n, nil
}

// Unpack reads count elements of dt from the packed buffer inbuf at byte
// position pos into outbuf, and returns the position after them (MPI_Unpack).
func Unpack(inbuf []byte, pos int, outbuf []byte, count int, dt *Datatype) (_ int, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Unpack", nil, Undefined, Undefined), &err)
	}

	n, err := packArgs("Unpack", outbuf, count, dt, inbuf, pos, false)
	if err != nil {
		return pos, err
	}
	if isBottom(outbuf) {
		lay, bad := resolveBottom(dt, count)
		if bad != "" {
			return pos, (*Comm)(nil).errorf("Unpack", ErrBuffer, loc{}, "%s", bad)
		}
		lay.Unpack(inbuf[pos:pos+n], 0)
		return pos + n, nil
	}
	dt.t.UnpackAt(inbuf[pos:pos+n], outbuf, 0)
	return pos + n, nil
}

// PackExternalSize returns the bytes PackExternal needs for count elements
// of dt (MPI_Pack_external_size).
func PackExternalSize(count int, dt *Datatype) (_ int, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("PackExternalSize", nil, Undefined, Undefined), &err)
	}
	if s := dt.checkComm(); s != "" {
		return 0, typeErr("PackExternalSize", "%s", s)
	}
	if _, err := (*Comm)(nil).elemBytes("PackExternalSize", loc{}, count, dt); err != nil {
		return 0, err
	}
	return int(dt.t.ExternalSize(count)), nil
}

// PackExternal is Pack in the portable "external32" representation of
// MPI-4.1 section 14.5.2 (MPI_Pack_external): every basic element
// big-endian, bools one byte, complex numbers real part first, no padding;
// Go's int and uint are 8 bytes (4 on 32-bit machines), CLong and CUlong
// 4 (MPI's table for C's long): a value of those beyond 32 bits fails
// with ErrConversion, outbuf then holding part of the data. Any MPI
// implementation's MPI_Unpack_external("external32", ...) reads it.
func PackExternal(inbuf []byte, count int, dt *Datatype, outbuf []byte, pos int) (_ int, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("PackExternal", nil, Undefined, Undefined), &err)
	}

	if isBottom(inbuf) {
		return pos, (*Comm)(nil).errorf("PackExternal", ErrBuffer, loc{}, "Bottom is not supported: use Pack")
	}
	need, err := packArgs("PackExternal", inbuf, count, dt, outbuf, pos, true)
	if err != nil {
		return pos, err
	}
	if err := dt.t.PackExternal(outbuf[pos:pos+need], inbuf, count); err != nil {
		return pos, (*Comm)(nil).errorf("PackExternal", ErrConversion, loc{}, "%v", err)
	}
	return pos + need, nil
}

// UnpackExternal reads count elements of dt in external32 from inbuf at
// byte position pos into outbuf, and returns the position after them
// (MPI_Unpack_external). A bool byte other than 0 or 1 fails with ErrType.
// A CLong's 4 bytes are sign-extended, a CUlong's zero-extended.
func UnpackExternal(inbuf []byte, pos int, outbuf []byte, count int, dt *Datatype) (_ int, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("UnpackExternal", nil, Undefined, Undefined), &err)
	}

	if isBottom(outbuf) {
		return pos, (*Comm)(nil).errorf("UnpackExternal", ErrBuffer, loc{}, "Bottom is not supported: use Unpack")
	}
	need, err := packArgs("UnpackExternal", outbuf, count, dt, inbuf, pos, true)
	if err != nil {
		return pos, err
	}
	if err := dt.t.UnpackExternal(inbuf[pos:pos+need], outbuf, count); err != nil {
		return pos, typeErr("UnpackExternal", "%v", err)
	}
	return pos + need, nil
}
