package mpi

// The predefined operations of Go's basic types are made once and handed
// out by value: a func literal in a generic function captures its
// instantiation's dictionary, so making one allocates, and a hot loop such
// as `mpi.AllreduceSliceInto(c, v, out, mpi.Sum[float64]())` must not.

type opKind int

const (
	kSum opKind = iota
	kProd
	kMin
	kMax
	kLand
	kLor
	kLxor
	kBand
	kBor
	kBxor
	nOpKinds
)

type opTable[T any] [nOpKinds]Op[T]

func tableInt[T Integer]() *opTable[T] {
	return &opTable[T]{kSum: sumOp[T](), kProd: prodOp[T](), kMin: minOp[T](), kMax: maxOp[T](),
		kLand: landOp[T](), kLor: lorOp[T](), kLxor: lxorOp[T](),
		kBand: bandOp[T](), kBor: borOp[T](), kBxor: bxorOp[T]()}
}

func tableFloat[T Float]() *opTable[T] {
	return &opTable[T]{kSum: sumOp[T](), kProd: prodOp[T](), kMin: minOp[T](), kMax: maxOp[T]()}
}

func tableComplex[T Complex]() *opTable[T] {
	return &opTable[T]{kSum: sumOp[T](), kProd: prodOp[T]()}
}

var (
	opsInt        = tableInt[int]()
	opsInt8       = tableInt[int8]()
	opsInt16      = tableInt[int16]()
	opsInt32      = tableInt[int32]()
	opsInt64      = tableInt[int64]()
	opsUint       = tableInt[uint]()
	opsUint8      = tableInt[uint8]()
	opsUint16     = tableInt[uint16]()
	opsUint32     = tableInt[uint32]()
	opsUint64     = tableInt[uint64]()
	opsUintptr    = tableInt[uintptr]()
	opsFloat32    = tableFloat[float32]()
	opsFloat64    = tableFloat[float64]()
	opsComplex64  = tableComplex[complex64]()
	opsComplex128 = tableComplex[complex128]()
	opsBool       = &opTable[bool]{kLand: landBool(), kLor: lorBool(), kLxor: lxorBool()}
)

// cachedOp returns the ready-made operation k for T if T is a basic type
// (named types such as `type Celsius float64` make theirs on each call).
func cachedOp[T any](k opKind) (Op[T], bool) {
	var t any
	// The cases are tried in order: the most used types first.
	switch any((*T)(nil)).(type) { // a nil pointer: no allocation
	case *float64:
		t = opsFloat64
	case *int:
		t = opsInt
	case *int8:
		t = opsInt8
	case *int16:
		t = opsInt16
	case *int32:
		t = opsInt32
	case *int64:
		t = opsInt64
	case *uint:
		t = opsUint
	case *uint8:
		t = opsUint8
	case *uint16:
		t = opsUint16
	case *uint32:
		t = opsUint32
	case *uint64:
		t = opsUint64
	case *uintptr:
		t = opsUintptr
	case *float32:
		t = opsFloat32
	case *complex64:
		t = opsComplex64
	case *complex128:
		t = opsComplex128
	case *bool:
		t = opsBool
	default:
		return Op[T]{}, false
	}
	ops := t.(*opTable[T])
	return ops[k], ops[k].fn != nil
}
