package mpi

import (
	"bytes"
	"fmt"

	"github.com/mpigo/mpi/internal/coll"
)

// ReduceOp is an operation of the low-level reductions (MPI_Op): it
// combines buffers of elements of a Datatype. The predefined ones (OpSum,
// OpMax, ...) run as tight loops over the whole buffer for every
// predefined datatype they make sense for (MPI's rules: arithmetic on
// numbers, logical on Bool and on integers (nonzero is true, the result 1
// or 0), bitwise on integers and Byte, MinLoc/MaxLoc on the pair types
// such as Float64Loc); NewReduceOp makes one from a Go function.
type ReduceOp struct {
	name        string
	commutative bool
	user        func(in, inout []byte, count int, dt *Datatype)
}

// The predefined operations of the low-level layer.
var (
	OpSum    = &ReduceOp{name: "sum", commutative: true}    // MPI_SUM
	OpProd   = &ReduceOp{name: "prod", commutative: true}   // MPI_PROD
	OpMin    = &ReduceOp{name: "min", commutative: true}    // MPI_MIN
	OpMax    = &ReduceOp{name: "max", commutative: true}    // MPI_MAX
	OpLand   = &ReduceOp{name: "land", commutative: true}   // MPI_LAND
	OpLor    = &ReduceOp{name: "lor", commutative: true}    // MPI_LOR
	OpLxor   = &ReduceOp{name: "lxor", commutative: true}   // MPI_LXOR
	OpBand   = &ReduceOp{name: "band", commutative: true}   // MPI_BAND
	OpBor    = &ReduceOp{name: "bor", commutative: true}    // MPI_BOR
	OpBxor   = &ReduceOp{name: "bxor", commutative: true}   // MPI_BXOR
	OpMinLoc = &ReduceOp{name: "minloc", commutative: true} // MPI_MINLOC
	OpMaxLoc = &ReduceOp{name: "maxloc", commutative: true} // MPI_MAXLOC
)

// NewReduceOp returns a user operation (MPI_Op_create). f must set
// inout[i] = in[i] ⊕ inout[i] for the count elements of dt in the two
// buffers, as MPI's user functions do: in holds the operand of the lower
// ranks. f may be a closure. If commutative is false, reductions apply f
// in rank order.
func NewReduceOp(f func(in, inout []byte, count int, dt *Datatype), commutative bool) *ReduceOp {
	return &ReduceOp{name: "user", commutative: commutative, user: f}
}

// Name returns the operation's name ("sum", ..., or "user"); "" for a nil
// *ReduceOp (MPI_OP_NULL, which every call taking an operation rejects
// with ErrOp).
func (o *ReduceOp) Name() string {
	if o == nil {
		return ""
	}
	return o.name
}

// Commutative reports whether the operation is commutative
// (MPI_Op_commutative); false for a nil *ReduceOp.
func (o *ReduceOp) Commutative() bool { return o != nil && o.commutative }

// check reports whether o can combine elements of dt, without allocating.
func (o *ReduceOp) check(dt *Datatype) error {
	switch {
	case o == nil:
		return fmt.Errorf("nil operation")
	case dt == nil:
		return fmt.Errorf("nil datatype")
	case o.user == nil && dt.kernel(o.name) == nil:
		return fmt.Errorf("operation %s is not defined on datatype %s", o.name, dt.name)
	}
	return nil
}

// ordered returns f(in, inout): inout = in ⊕ inout, the MPI convention.
func (o *ReduceOp) ordered(dt *Datatype) (func(in, inout []byte), error) {
	if err := o.check(dt); err != nil {
		return nil, err
	}
	if o.user != nil {
		f := o.user
		if d := dt.packedOf; d != nil {
			return func(in, inout []byte) { userOnLayout(f, d, in, inout) }, nil
		}
		return func(in, inout []byte) { f(in, inout, len(inout)/dt.mem(), dt) }, nil
	}
	k := dt.kernel(o.name)
	// Predefined operations are commutative: in ⊕ inout = inout ⊕ in.
	return func(in, inout []byte) { k(inout, in) }, nil
}

// vec returns inout = inout ⊕ in for a commutative operation. For the
// predefined operations it is the datatype's kernel itself (no allocation).
func (o *ReduceOp) vec(dt *Datatype) (coll.VecOp, error) {
	if err := o.check(dt); err != nil {
		return nil, err
	}
	if o.user == nil {
		return dt.kernel(o.name), nil
	}
	f, err := o.ordered(dt)
	if err != nil {
		return nil, err
	}
	return func(inout, in []byte) { f(in, inout) }, nil
}

// combine returns the operation as a coll.Combine that respects operand
// order, for the order-preserving algorithms.
func (o *ReduceOp) combine(dt *Datatype) (coll.Combine, error) {
	f, err := o.ordered(dt)
	if err != nil {
		return nil, err
	}
	comm := o.commutative
	return func(acc, in []byte, accFirst bool) ([]byte, error) {
		if len(acc) != len(in) {
			return nil, errLen(len(acc)/dt.mem(), len(in)/dt.mem())
		}
		if accFirst && !comm { // acc ⊕ in, computed into a copy of in
			t := bytes.Clone(in)
			f(acc, t)
			return t, nil
		}
		f(in, acc)
		return acc, nil
	}, nil
}

// ReduceLocal sets inout = in ⊕ inout for count elements of dt, with no
// communication (MPI_Reduce_local). dt may have holes: a predefined
// operation combines the elements' data (as the collectives do) and leaves
// the holes of inout alone; a user operation gets the two buffers as they
// are.
func ReduceLocal(in, inout []byte, count int, dt *Datatype, op *ReduceOp) (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("ReduceLocal", nil, Undefined, Undefined), &err)
	}

	const name = "ReduceLocal"
	if dt == nil {
		return (*Comm)(nil).errorf(name, ErrType, loc{}, "nil datatype")
	}
	if _, err := (*Comm)(nil).elemBytes(name, loc{}, count, dt); err != nil {
		return err
	}
	if dt.block() == 0 {
		return reduceLocalLayout(in, inout, count, dt, op)
	}
	n, ok := countBytes(count, dt.mem())
	if !ok || n > len(in) || n > len(inout) {
		return (*Comm)(nil).errorf(name, ErrBuffer, loc{}, "%d elements of %s need %d bytes, in has %d and inout %d", count, dt.name, n, len(in), len(inout))
	}
	f, err := op.ordered(dt)
	if err != nil {
		return (*Comm)(nil).errorf(name, ErrOp, loc{}, "%v", err)
	}
	f(in[:n], inout[:n])
	return nil
}

// kernel turns an elementwise loop over []E into one over bytes.
func kernel[E any](vec func(x, y []E)) func(inout, in []byte) {
	t := typeOf[E]()
	return func(inout, in []byte) {
		x, xb := alignedView[E](t, inout)
		y, _ := alignedView[E](t, in)
		vec(x, y)
		if len(xb) > 0 && &xb[0] != &inout[0] {
			copy(inout, xb)
		}
	}
}

type kernels = map[string]func(inout, in []byte)

func intOps[T Integer]() kernels {
	return kernels{
		"sum": kernel(Sum[T]().vec), "prod": kernel(Prod[T]().vec),
		"min": kernel(Min[T]().vec), "max": kernel(Max[T]().vec),
		"band": kernel(Band[T]().vec), "bor": kernel(Bor[T]().vec), "bxor": kernel(Bxor[T]().vec),
		"land": kernel(Land[T]().vec), "lor": kernel(Lor[T]().vec), "lxor": kernel(Lxor[T]().vec),
	}
}

func floatOps[T Float]() kernels {
	return kernels{
		"sum": kernel(Sum[T]().vec), "prod": kernel(Prod[T]().vec),
		"min": kernel(Min[T]().vec), "max": kernel(Max[T]().vec),
	}
}

func complexOps[T Complex]() kernels {
	return kernels{"sum": kernel(Sum[T]().vec), "prod": kernel(Prod[T]().vec)}
}

func boolOps() kernels {
	return kernels{"land": kernel(Land[bool]().vec), "lor": kernel(Lor[bool]().vec), "lxor": kernel(Lxor[bool]().vec)}
}

func locOps[T Ordered]() kernels {
	return kernels{"minloc": kernel(MinLoc[T]().vec), "maxloc": kernel(MaxLoc[T]().vec)}
}

func withOps(d *Datatype, k kernels) *Datatype { d.ops = k; return d }

// reduceLocalLayout is ReduceLocal for a datatype that is not contiguous.
func reduceLocalLayout(in, inout []byte, count int, dt *Datatype, op *ReduceOp) error {
	for _, b := range [][]byte{in, inout} {
		if s := dt.span(count, len(b)); s != "" {
			return (*Comm)(nil).errorf("ReduceLocal", ErrBuffer, loc{}, "%s", s)
		}
	}
	if op != nil && op.user != nil {
		op.user(in, inout, count, dt)
		return nil
	}
	f, err := op.ordered(dt.packedType())
	if err != nil {
		return (*Comm)(nil).errorf("ReduceLocal", ErrOp, loc{}, "%v", err)
	}
	n := count * dt.size
	a, b := make([]byte, n), make([]byte, n)
	dt.t.PackAt(a, in, 0)
	dt.t.PackAt(b, inout, 0)
	f(a, b)
	dt.t.UnpackAt(b, inout, 0)
	return nil
}
