package mpi

import (
	"strconv"
	"unsafe"

	"github.com/mpigo/mpi/internal/datatype"
)

// This file answers questions about datatypes (MPI-3.1 section 4.1.13,
// decoding a datatype; section 4.1.5, addresses) and finds predefined
// datatypes by size and precision (sections 17.1.9 and 17.2.5).

// Combiner names the constructor that made a datatype
// (MPI_COMBINER_NAMED, MPI_COMBINER_VECTOR, ...), as Envelope returns it.
type Combiner int

// The combiners.
const (
	CombinerNamed         Combiner = iota // a predefined datatype
	CombinerDup                           // Dup
	CombinerContiguous                    // NewContiguous
	CombinerVector                        // NewVector
	CombinerHvector                       // NewHvector
	CombinerIndexed                       // NewIndexed
	CombinerHindexed                      // NewHindexed
	CombinerIndexedBlock                  // NewIndexedBlock
	CombinerHindexedBlock                 // NewHindexedBlock
	CombinerStruct                        // NewStruct, and DatatypeOf of a Go type
	CombinerSubarray                      // NewSubarray
	CombinerDarray                        // NewDarray
	CombinerF90Real                       // TypeCreateF90Real
	CombinerF90Complex                    // TypeCreateF90Complex
	CombinerF90Integer                    // TypeCreateF90Integer
	CombinerResized                       // NewResized
)

var combinerNames = [...]string{"Named", "Dup", "Contiguous", "Vector", "Hvector", "Indexed", "Hindexed",
	"IndexedBlock", "HindexedBlock", "Struct", "Subarray", "Darray", "F90Real", "F90Complex", "F90Integer", "Resized"}

// String returns the combiner's name, as "Vector".
func (c Combiner) String() string {
	if c < 0 || int(c) >= len(combinerNames) {
		return "Combiner(" + strconv.Itoa(int(c)) + ")"
	}
	return combinerNames[c]
}

// contents is the recorded constructor call of a datatype.
type contents struct {
	combiner Combiner
	ints     []int
	addrs    []int
	types    []*Datatype
}

// recorded attaches the constructor call to a datatype that derive made.
func recorded(c Combiner, ints, addrs []int, types []*Datatype) func(*Datatype, error) (*Datatype, error) {
	return func(d *Datatype, err error) (*Datatype, error) {
		if err == nil {
			d.how = &contents{combiner: c, ints: ints, addrs: addrs, types: types}
		}
		return d, err
	}
}

// cat concatenates integer slices into a new one.
func cat(parts ...[]int) []int {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	out := make([]int, 0, n)
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

func distInts(ds []Distribution) []int {
	out := make([]int, len(ds))
	for i, d := range ds {
		out[i] = int(d)
	}
	return out
}

// recipe returns how d was made: its recorded call, or for a datatype of
// DatatypeOf the struct of its basic elements at their offsets.
func (d *Datatype) recipe() *contents {
	if d.how != nil {
		return d.how
	}
	if !d.derived || d.t == nil {
		return &contents{combiner: CombinerNamed}
	}
	c := &contents{combiner: CombinerStruct, ints: []int{len(d.t.Blocks)}}
	for _, b := range d.t.Blocks {
		c.ints = append(c.ints, int(b.N))
		c.addrs = append(c.addrs, int(b.Off))
		c.types = append(c.types, basicDatatype(b.Basic))
	}
	return c
}

// basicDatatype returns the predefined datatype of a basic kind.
func basicDatatype(b datatype.Basic) *Datatype {
	switch b {
	case datatype.BasicBool:
		return Bool
	case datatype.BasicInt8:
		return Int8
	case datatype.BasicInt16:
		return Int16
	case datatype.BasicInt32:
		return Int32
	case datatype.BasicInt64:
		return Int64
	case datatype.BasicUint8:
		return Uint8
	case datatype.BasicUint16:
		return Uint16
	case datatype.BasicUint32:
		return Uint32
	case datatype.BasicUint64:
		return Uint64
	case datatype.BasicFloat32:
		return Float32
	case datatype.BasicFloat64:
		return Float64
	case datatype.BasicComplex64:
		return Complex64
	case datatype.BasicComplex128:
		return Complex128
	case datatype.BasicLongDouble:
		return CLongDouble
	case datatype.BasicFloat16:
		return Float16
	case datatype.BasicFloat128:
		return Float128
	case datatype.BasicInt128:
		return Int128
	case datatype.BasicCLong:
		return CLong
	case datatype.BasicCUlong:
		return CUlong
	}
	return Byte
}

// Envelope returns the constructor that made d and how many integers,
// addresses and datatypes Contents will return (MPI_Type_get_envelope).
// A predefined datatype, the pair types included, has CombinerNamed and no
// contents. A nil datatype is CombinerNamed with nothing.
func (d *Datatype) Envelope() (combiner Combiner, nints, naddrs, ntypes int) {
	if d == nil {
		return CombinerNamed, 0, 0, 0
	}
	c := d.recipe()
	return c.combiner, len(c.ints), len(c.addrs), len(c.types)
}

// Contents returns the arguments of the call that made d
// (MPI_Type_get_contents), in MPI's order for its combiner: for
// NewVector(count, blocklen, stride, old) ints are [count blocklen stride]
// and types [old]; for NewStruct, ints are [count blocklens...], addrs the
// byte displacements and types the datatypes; for NewResized, addrs are
// [lb extent]; for NewSubarray, ints are [ndims sizes... subsizes...
// starts... order]; for NewDarray [size rank ndims gsizes... distribs...
// dargs... psizes... order]; Orders and Distributions appear as their int
// values. Byte displacements and strides (MPI's addresses) are in addrs.
// A datatype of DatatypeOf reads as the struct of its basic elements at
// their offsets. The slices are copies; the datatypes are the ones d was
// built from (they stay usable even if they have been freed since, as in
// MPI). A predefined datatype has no contents: ErrArg, as MPI makes it
// erroneous. A nil or freed d gives ErrType.
func (d *Datatype) Contents() (ints, addrs []int, types []*Datatype, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Datatype.Contents", nil, Undefined, Undefined), &err)
	}

	if d == nil {
		return nil, nil, nil, typeErr("TypeGetContents", "nil datatype")
	}
	if d.isFreed() {
		return nil, nil, nil, typeErr("TypeGetContents", "the datatype has been freed")
	}
	c := d.recipe()
	if c.combiner == CombinerNamed {
		return nil, nil, nil, (*Comm)(nil).errorf("TypeGetContents", ErrArg, loc{}, "%s is a predefined datatype: it has no contents", d.name)
	}
	types = append([]*Datatype{}, c.types...)
	for i, m := range types {
		if m != nil && m.isFreed() {
			// Freed by its owner since: MPI keeps the type alive for the
			// types built on it, so the answer is a live equivalent.
			typeAttrs.Lock()
			n := *m
			typeAttrs.Unlock()
			n.freedAt, n.attrs = 0, nil
			types[i] = &n
		}
	}
	return append([]int{}, c.ints...), append([]int{}, c.addrs...), types, nil
}

// TypeClass is the kind of number TypeMatchSize looks for
// (MPI_TYPECLASS_INTEGER, _REAL, _COMPLEX).
type TypeClass int

// The type classes.
const (
	TypeClassInteger TypeClass = iota + 1
	TypeClassReal
	TypeClassComplex
)

// TypeMatchSize returns the predefined datatype of class whose elements
// are size bytes (MPI_Type_match_size): Int8..Int64 for integers,
// Float32 and Float64 for reals, Complex64 and Complex128 for complex
// numbers. Other sizes give ErrArg.
func TypeMatchSize(class TypeClass, size int) (_ *Datatype, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("TypeMatchSize", nil, Undefined, Undefined), &err)
	}

	var dt *Datatype
	switch class {
	case TypeClassInteger:
		switch size {
		case 1:
			dt = Int8
		case 2:
			dt = Int16
		case 4:
			dt = Int32
		case 8:
			dt = Int64
		}
	case TypeClassReal:
		switch size {
		case 4:
			dt = Float32
		case 8:
			dt = Float64
		}
	case TypeClassComplex:
		switch size {
		case 8:
			dt = Complex64
		case 16:
			dt = Complex128
		}
	default:
		return nil, (*Comm)(nil).errorf("TypeMatchSize", ErrArg, loc{}, "unknown type class %d", class)
	}
	if dt == nil {
		return nil, (*Comm)(nil).errorf("TypeMatchSize", ErrArg, loc{}, "no datatype of class %d has %d bytes", class, size)
	}
	return dt, nil
}

// f90 returns a named datatype equal to base whose envelope records the
// Fortran-style request that selected it.
func f90(base *Datatype, c Combiner, name string, ints []int) *Datatype {
	typeAttrs.Lock() // base.attrs may be being set
	d := *base
	typeAttrs.Unlock()
	d.name, d.attrs = name, nil
	d.how = &contents{combiner: c, ints: ints}
	return &d
}

// TypeCreateF90Real returns the datatype of the smallest Go float with at
// least p decimal digits of precision and a decimal exponent range of at
// least r (MPI_Type_create_f90_real): Float32 up to p=6, r=37, Float64 up
// to p=15, r=307. Undefined for p or r means "any". A request no Go type
// meets gives ErrArg. The datatype sends and reduces like the float it
// stands for; Envelope reports CombinerF90Real and Contents [p r].
func TypeCreateF90Real(p, r int) (_ *Datatype, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("TypeCreateF90Real", nil, Undefined, Undefined), &err)
	}

	base, err := f90Float("TypeCreateF90Real", p, r)
	if err != nil {
		return nil, err
	}
	return f90(base, CombinerF90Real, "F90Real("+strconv.Itoa(p)+","+strconv.Itoa(r)+")", []int{p, r}), nil
}

// TypeCreateF90Complex is TypeCreateF90Real for complex numbers
// (MPI_Type_create_f90_complex): Complex64 or Complex128.
func TypeCreateF90Complex(p, r int) (_ *Datatype, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("TypeCreateF90Complex", nil, Undefined, Undefined), &err)
	}

	base, err := f90Float("TypeCreateF90Complex", p, r)
	if err != nil {
		return nil, err
	}
	c := Complex64
	if base == Float64 {
		c = Complex128
	}
	return f90(c, CombinerF90Complex, "F90Complex("+strconv.Itoa(p)+","+strconv.Itoa(r)+")", []int{p, r}), nil
}

func f90Float(op string, p, r int) (*Datatype, error) {
	if p == Undefined {
		p = 0
	}
	if r == Undefined {
		r = 0
	}
	switch {
	case p < 0 || r < 0:
		return nil, (*Comm)(nil).errorf(op, ErrArg, loc{}, "negative precision %d or range %d", p, r)
	case p <= 6 && r <= 37:
		return Float32, nil
	case p <= 15 && r <= 307:
		return Float64, nil
	}
	return nil, (*Comm)(nil).errorf(op, ErrArg, loc{}, "no Go floating-point type has %d digits and exponent range %d", p, r)
}

// TypeCreateF90Integer returns the datatype of the smallest Go integer
// that holds every integer of up to r decimal digits, -10^r < n < 10^r
// (MPI_Type_create_f90_integer): Int8 up to r=2, Int16 up to 4, Int32 up
// to 9, Int64 up to 18. Envelope reports CombinerF90Integer and Contents
// [r].
func TypeCreateF90Integer(r int) (_ *Datatype, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("TypeCreateF90Integer", nil, Undefined, Undefined), &err)
	}

	var base *Datatype
	switch {
	case r < 0:
	case r <= 2:
		base = Int8
	case r <= 4:
		base = Int16
	case r <= 9:
		base = Int32
	case r <= 18:
		base = Int64
	}
	if base == nil {
		return nil, (*Comm)(nil).errorf("TypeCreateF90Integer", ErrArg, loc{}, "no Go integer type holds %d decimal digits", r)
	}
	return f90(base, CombinerF90Integer, "F90Integer("+strconv.Itoa(r)+")", []int{r}), nil
}

// AintAdd returns base + disp (MPI_Aint_add). Addresses are plain ints in
// Go; it exists for symmetry with AintDiff.
func AintAdd(base, disp int) int { return base + disp }

// AintDiff returns the displacement addr1 - addr2 between two addresses
// of GetAddress (MPI_Aint_diff).
func AintDiff(addr1, addr2 int) int { return addr1 - addr2 }

// BytesOf returns the memory of the plain value *p as a byte slice,
// without copying: the buffer for a datatype whose displacements were
// taken relative to p with GetAddress. T must be plain (numbers, bools,
// and arrays and structs of them); other types, or a nil p, give ErrType.
func BytesOf[T any](p *T) (_ []byte, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("BytesOf", nil, Undefined, Undefined), &err)
	}

	info := datatype.InfoFor[T]()
	if p == nil || !info.Plain {
		return nil, typeErr("BytesOf", "%v is nil or not a plain type", info.Type)
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(p)), unsafe.Sizeof(*p)), nil
}
