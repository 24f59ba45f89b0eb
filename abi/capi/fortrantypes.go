//go:build cgo

package capi

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/mpigo/mpi"
)

// The default-kind Fortran datatypes (MPI_INTEGER, MPI_REAL,
// MPI_DOUBLE_PRECISION, MPI_LOGICAL, MPI_COMPLEX, MPI_DOUBLE_COMPLEX,
// MPI_CHARACTER and the pairs MPI_2INTEGER, MPI_2REAL,
// MPI_2DOUBLE_PRECISION). Their sizes are the Fortran compiler's, which a
// C library cannot know: a Fortran binding layered on the ABI tells them
// with MPI_Abi_set_fortran_info (keys mpi_integer_size, mpi_real_size,
// mpi_double_precision_size and mpi_logical_size, all required, as in
// MPICH), and the types exist from then on. Before, using one is
// MPI_ERR_TYPE with a message that says why.
//
// They live apart from predefTypes, which is read without a lock: the
// information may come after the first datatype was used, so the set is
// published whole through an atomic pointer.

// fortranSet is what MPI_Abi_set_fortran_info made.
type fortranSet struct {
	types map[uintptr]*mpi.Datatype
	pairs map[*mpi.Datatype]pairKind // the value-location pairs, by the kind of both members
}

var fortranTypes atomic.Pointer[fortranSet]

// fortranHandles are the handles fortranSet gives types to, for the
// message of an unset one.
var fortranHandles = map[uintptr]string{
	MPI_INTEGER: "MPI_INTEGER", MPI_REAL: "MPI_REAL", MPI_DOUBLE_PRECISION: "MPI_DOUBLE_PRECISION",
	MPI_LOGICAL: "MPI_LOGICAL", MPI_COMPLEX: "MPI_COMPLEX", MPI_DOUBLE_COMPLEX: "MPI_DOUBLE_COMPLEX",
	MPI_CHARACTER: "MPI_CHARACTER", MPI_2INTEGER: "MPI_2INTEGER", MPI_2REAL: "MPI_2REAL",
	MPI_2DOUBLE_PRECISION: "MPI_2DOUBLE_PRECISION",
}

// fortranType returns the Fortran datatype of h, or nil and why not.
func fortranType(h uintptr) (*mpi.Datatype, string) {
	name, ok := fortranHandles[h]
	if !ok {
		return nil, ""
	}
	if s := fortranTypes.Load(); s != nil {
		if t := s.types[h]; t != nil {
			return t, ""
		}
	}
	return nil, fmt.Sprintf("%s has no size yet: the sizes of Fortran's default kinds are the Fortran compiler's, given by a Fortran binding with MPI_Abi_set_fortran_info", name)
}

// makeFortranTypes builds the Fortran types from the sizes in in.
func makeFortranTypes(in *mpi.Info) (*fortranSet, error) {
	size := func(key string, allowed ...int) (int, error) {
		v, ok := in.Get(key)
		if !ok {
			return 0, fmt.Errorf("the info has no key %q (mpi_integer_size, mpi_real_size, mpi_double_precision_size and mpi_logical_size are required)", key)
		}
		n, err := strconv.Atoi(v)
		if err == nil {
			for _, a := range allowed {
				if n == a {
					return n, nil
				}
			}
		}
		return 0, fmt.Errorf("%s = %q: mpigo supports the sizes %v", key, v, allowed)
	}
	isz, err := size("mpi_integer_size", 1, 2, 4, 8)
	if err != nil {
		return nil, err
	}
	lsz, err := size("mpi_logical_size", 1, 2, 4, 8)
	if err != nil {
		return nil, err
	}
	rsz, err := size("mpi_real_size", 4, 8)
	if err != nil {
		return nil, err
	}
	dsz, err := size("mpi_double_precision_size", 4, 8)
	if err != nil {
		return nil, err
	}
	float := map[int]*mpi.Datatype{4: mpi.Float32, 8: mpi.Float64}
	complex := map[int]*mpi.Datatype{4: mpi.Complex64, 8: mpi.Complex128}
	s := &fortranSet{types: map[uintptr]*mpi.Datatype{}, pairs: map[*mpi.Datatype]pairKind{}}
	add := func(h uintptr, t *mpi.Datatype) error {
		d, err := t.Dup()
		if err != nil {
			return err
		}
		d.SetName(fortranHandles[h])
		s.types[h] = d
		return nil
	}
	pair := func(h uintptr, t *mpi.Datatype, k pairKind) error {
		p, err := mpi.NewContiguous(2, t)
		if err == nil {
			err = p.Commit()
		}
		if err == nil {
			err = add(h, p)
		}
		if err == nil {
			s.pairs[s.types[h]] = k
		}
		return err
	}
	ik := map[int]pairKind{1: pairInt8, 2: pairInt16, 4: pairInt32, 8: pairInt64}
	fk := map[int]pairKind{4: pairFloat32, 8: pairFloat64}
	for _, err := range []error{
		add(MPI_INTEGER, intOfSize(uintptr(isz), true)),
		add(MPI_LOGICAL, intOfSize(uintptr(lsz), true)),
		add(MPI_REAL, float[rsz]),
		add(MPI_DOUBLE_PRECISION, float[dsz]),
		add(MPI_COMPLEX, complex[rsz]),
		add(MPI_DOUBLE_COMPLEX, complex[dsz]),
		add(MPI_CHARACTER, mpi.Uint8),
		pair(MPI_2INTEGER, intOfSize(uintptr(isz), true), ik[isz]),
		pair(MPI_2REAL, float[rsz], fk[rsz]),
		pair(MPI_2DOUBLE_PRECISION, float[dsz], fk[dsz]),
	} {
		if err != nil {
			return nil, err
		}
	}
	return s, nil
}

// publishFortranTypes makes s the Fortran types.
func publishFortranTypes(s *fortranSet) {
	for h, t := range s.types {
		typeHandles.Store(t, h)
	}
	fortranTypes.Store(s)
}

// fortranPair reports whether t is one of Fortran's pair types, and the
// kind of its members.
func fortranPair(t *mpi.Datatype) (pairKind, bool) {
	s := fortranTypes.Load()
	if s == nil {
		return 0, false
	}
	k, ok := s.pairs[t]
	return k, ok
}

// pairOps caches the MINLOC and MAXLOC operations on Fortran's pairs, by
// member kind and operation.
var pairOps sync.Map // [2]int{kind, max} -> *mpi.ReduceOp

// fortranPairOp returns the operation a reduction with the predefined o
// runs on t: o itself unless t is a Fortran pair; on a pair, MPI_MINLOC
// and MPI_MAXLOC as Go kernels over (value, location) of the members'
// kind (the location is a Fortran INTEGER, REAL or DOUBLE PRECISION like
// the value), and MPI_ERR_OP raised on ce for the other predefined
// operations.
func fortranPairOp(fn string, ce *commEntry, o *mpi.ReduceOp, t *mpi.Datatype) (*mpi.ReduceOp, int32) {
	k, ok := fortranPair(t)
	if !ok || o.Name() == "user" {
		return o, 0
	}
	if o != mpi.OpMinLoc && o != mpi.OpMaxLoc {
		return nil, raiseOn(fn, ce, classErr(MPI_ERR_OP, fmt.Sprintf("operation %s is not defined on the pair type %s (only MPI_MINLOC and MPI_MAXLOC are)", o.Name(), t.Name())))
	}
	max := o == mpi.OpMaxLoc
	key := [2]int{int(k), 0}
	if max {
		key[1] = 1
	}
	if op, ok := pairOps.Load(key); ok {
		return op.(*mpi.ReduceOp), 0
	}
	w, cmp := pairCompare(k)
	op := mpi.NewReduceOp(func(in, inout []byte, count int, _ *mpi.Datatype) {
		for i := 0; i < count && (i+1)*2*w <= len(in) && (i+1)*2*w <= len(inout); i++ {
			a, b := inout[i*2*w:(i+1)*2*w], in[i*2*w:(i+1)*2*w]
			c := cmp(b[:w], a[:w])
			if max {
				c = -c
			}
			if c < 0 || (c == 0 && cmp(b[w:], a[w:]) < 0) {
				copy(a, b)
			}
		}
	}, true)
	actual, _ := pairOps.LoadOrStore(key, op)
	return actual.(*mpi.ReduceOp), 0
}

// pairKind is the kind of both members of a Fortran pair.
type pairKind int

const (
	pairInt8 pairKind = iota + 1
	pairInt16
	pairInt32
	pairInt64
	pairFloat32
	pairFloat64
)

// pairCompare returns the width of one member of kind k and a comparison
// of two members (-1, 0, +1 as x < y, x == y, x > y).
func pairCompare(k pairKind) (int, func(x, y []byte) int) {
	ne := binary.NativeEndian
	switch k {
	case pairInt8:
		return 1, func(x, y []byte) int { return cmp.Compare(int8(x[0]), int8(y[0])) }
	case pairInt16:
		return 2, func(x, y []byte) int { return cmp.Compare(int16(ne.Uint16(x)), int16(ne.Uint16(y))) }
	case pairInt32:
		return 4, func(x, y []byte) int { return cmp.Compare(int32(ne.Uint32(x)), int32(ne.Uint32(y))) }
	case pairFloat32:
		return 4, func(x, y []byte) int {
			return cmp.Compare(math.Float32frombits(ne.Uint32(x)), math.Float32frombits(ne.Uint32(y)))
		}
	case pairFloat64:
		return 8, func(x, y []byte) int {
			return cmp.Compare(math.Float64frombits(ne.Uint64(x)), math.Float64frombits(ne.Uint64(y)))
		}
	}
	return 8, func(x, y []byte) int { return cmp.Compare(int64(ne.Uint64(x)), int64(ne.Uint64(y))) }
}
