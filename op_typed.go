package mpi

import "reflect"

// Integer is the set of Go integer types.
type Integer interface {
	~int | ~int8 | ~int16 | ~int32 | ~int64 | ~uint | ~uint8 | ~uint16 | ~uint32 | ~uint64 | ~uintptr
}

// Float is the set of Go floating-point types.
type Float interface{ ~float32 | ~float64 }

// Complex is the set of Go complex types.
type Complex interface{ ~complex64 | ~complex128 }

// Ordered is the set of number types that Min and Max work on.
type Ordered interface{ Integer | Float }

// Number is the set of number types that Sum and Prod work on.
type Number interface{ Integer | Float | Complex }

// Logical is the set of types that Land, Lor and Lxor work on: bools, and
// integers as MPI defines them (nonzero is true, true is 1).
type Logical interface{ ~bool | Integer }

// logicalOne returns T's true: true for a bool type, 1 for an integer type.
func logicalOne[T Logical]() T {
	var one T
	switch v := reflect.ValueOf(&one).Elem(); v.Kind() {
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(1)
	default:
		v.SetUint(1)
	}
	return one
}

// Op is a reduction operation on values of type T (MPI_Op). Make one from
// any function with NewOp, or use a predefined one (Sum, Max, ...), which
// reductions over slices run as tight loops with no call per element.
//
// An Op is a single pointer, cheap to pass and return; its zero value is
// not an operation (reductions refuse it with ErrOp).
type Op[T any] struct {
	*opDef[T]
}

// opDef is what an Op points to. Keeping Op one word wide matters: a
// 48-byte struct returned by Sum and passed down three calls was copied
// each time, and the copies stalled on store forwarding (perf annotate),
// about a fifth of a one-rank Allreduce's time.
type opDef[T any] struct {
	name        string
	fn          func(a, b T) T
	vec         func(inout, in []T) // inout[i] = inout[i] op in[i]; nil for user ops
	commutative bool
}

// NewOp returns an operation that combines a and b with f. f may be a
// closure that carries state. If commutative is false, reductions apply f
// in rank order: the operand from the lower ranks is always a.
func NewOp[T any](f func(a, b T) T, commutative bool) Op[T] {
	if f == nil {
		return Op[T]{}
	}
	return Op[T]{&opDef[T]{name: "user", fn: f, commutative: commutative}}
}

// Name returns the operation's name ("sum", "max", ..., or "user").
func (o Op[T]) Name() string {
	if o.opDef == nil {
		return ""
	}
	return o.name
}

// Commutative reports whether the operation is commutative.
func (o Op[T]) Commutative() bool { return o.opDef != nil && o.commutative }

func (o Op[T]) valid() bool { return o.opDef != nil && o.fn != nil }

// apply combines in into inout elementwise: inout[i] = inout[i] op in[i]
// when leftFirst, in[i] op inout[i] otherwise.
func (o Op[T]) apply(inout, in []T, leftFirst bool) {
	if o.vec != nil && (leftFirst || o.commutative) {
		o.vec(inout, in)
		return
	}
	in = in[:len(inout)]
	if leftFirst {
		for i := range inout {
			inout[i] = o.fn(inout[i], in[i])
		}
	} else {
		for i := range inout {
			inout[i] = o.fn(in[i], inout[i])
		}
	}
}

func predef[T any](name string, fn func(a, b T) T, vec func(inout, in []T)) Op[T] {
	return Op[T]{&opDef[T]{name: name, fn: fn, vec: vec, commutative: true}}
}

// Sum adds (MPI_SUM).
func Sum[T Number]() Op[T] {
	if o, ok := cachedOp[T](kSum); ok {
		return o
	}
	return sumOp[T]()
}

func sumOp[T Number]() Op[T] {
	return predef("sum", func(a, b T) T { return a + b }, func(x, y []T) {
		y = y[:len(x)]
		for i := range x {
			x[i] += y[i]
		}
	})
}

// Prod multiplies (MPI_PROD).
func Prod[T Number]() Op[T] {
	if o, ok := cachedOp[T](kProd); ok {
		return o
	}
	return prodOp[T]()
}

func prodOp[T Number]() Op[T] {
	return predef("prod", func(a, b T) T { return a * b }, func(x, y []T) {
		y = y[:len(x)]
		for i := range x {
			x[i] *= y[i]
		}
	})
}

// Min takes the smaller (MPI_MIN).
func Min[T Ordered]() Op[T] {
	if o, ok := cachedOp[T](kMin); ok {
		return o
	}
	return minOp[T]()
}

func minOp[T Ordered]() Op[T] {
	return predef("min", func(a, b T) T { return min(a, b) }, func(x, y []T) {
		y = y[:len(x)]
		for i := range x {
			x[i] = min(x[i], y[i])
		}
	})
}

// Max takes the larger (MPI_MAX).
func Max[T Ordered]() Op[T] {
	if o, ok := cachedOp[T](kMax); ok {
		return o
	}
	return maxOp[T]()
}

func maxOp[T Ordered]() Op[T] {
	return predef("max", func(a, b T) T { return max(a, b) }, func(x, y []T) {
		y = y[:len(x)]
		for i := range x {
			x[i] = max(x[i], y[i])
		}
	})
}

// Land is logical and (MPI_LAND). On integers, as in MPI, nonzero is
// true and the result is 1 or 0.
func Land[T Logical]() Op[T] {
	if o, ok := cachedOp[T](kLand); ok {
		return o
	}
	return landOp[T]()
}

func landOp[T Logical]() Op[T] {
	var zero T
	one := logicalOne[T]()
	return predef("land", func(a, b T) T {
		if a != zero && b != zero {
			return one
		}
		return zero
	}, func(x, y []T) {
		y = y[:len(x)]
		for i := range x {
			if x[i] != zero && y[i] != zero {
				x[i] = one
			} else {
				x[i] = zero
			}
		}
	})
}

// landBool is Land for bool, with Go's own operator.
func landBool() Op[bool] {
	return predef("land", func(a, b bool) bool { return a && b }, func(x, y []bool) {
		y = y[:len(x)]
		for i := range x {
			x[i] = x[i] && y[i]
		}
	})
}

// Lor is logical or (MPI_LOR). On integers, as in MPI, nonzero is
// true and the result is 1 or 0.
func Lor[T Logical]() Op[T] {
	if o, ok := cachedOp[T](kLor); ok {
		return o
	}
	return lorOp[T]()
}

func lorOp[T Logical]() Op[T] {
	var zero T
	one := logicalOne[T]()
	return predef("lor", func(a, b T) T {
		if a != zero || b != zero {
			return one
		}
		return zero
	}, func(x, y []T) {
		y = y[:len(x)]
		for i := range x {
			if x[i] != zero || y[i] != zero {
				x[i] = one
			} else {
				x[i] = zero
			}
		}
	})
}

// lorBool is Lor for bool, with Go's own operator.
func lorBool() Op[bool] {
	return predef("lor", func(a, b bool) bool { return a || b }, func(x, y []bool) {
		y = y[:len(x)]
		for i := range x {
			x[i] = x[i] || y[i]
		}
	})
}

// Lxor is logical exclusive or (MPI_LXOR). On integers, as in MPI, nonzero is
// true and the result is 1 or 0.
func Lxor[T Logical]() Op[T] {
	if o, ok := cachedOp[T](kLxor); ok {
		return o
	}
	return lxorOp[T]()
}

func lxorOp[T Logical]() Op[T] {
	var zero T
	one := logicalOne[T]()
	return predef("lxor", func(a, b T) T {
		if (a != zero) != (b != zero) {
			return one
		}
		return zero
	}, func(x, y []T) {
		y = y[:len(x)]
		for i := range x {
			if (x[i] != zero) != (y[i] != zero) {
				x[i] = one
			} else {
				x[i] = zero
			}
		}
	})
}

// lxorBool is Lxor for bool, with Go's own operator.
func lxorBool() Op[bool] {
	return predef("lxor", func(a, b bool) bool { return a != b }, func(x, y []bool) {
		y = y[:len(x)]
		for i := range x {
			x[i] = x[i] != y[i]
		}
	})
}

// Band is bitwise and (MPI_BAND).
func Band[T Integer]() Op[T] {
	if o, ok := cachedOp[T](kBand); ok {
		return o
	}
	return bandOp[T]()
}

func bandOp[T Integer]() Op[T] {
	return predef("band", func(a, b T) T { return a & b }, func(x, y []T) {
		y = y[:len(x)]
		for i := range x {
			x[i] &= y[i]
		}
	})
}

// Bor is bitwise or (MPI_BOR).
func Bor[T Integer]() Op[T] {
	if o, ok := cachedOp[T](kBor); ok {
		return o
	}
	return borOp[T]()
}

func borOp[T Integer]() Op[T] {
	return predef("bor", func(a, b T) T { return a | b }, func(x, y []T) {
		y = y[:len(x)]
		for i := range x {
			x[i] |= y[i]
		}
	})
}

// Bxor is bitwise exclusive or (MPI_BXOR).
func Bxor[T Integer]() Op[T] {
	if o, ok := cachedOp[T](kBxor); ok {
		return o
	}
	return bxorOp[T]()
}

func bxorOp[T Integer]() Op[T] {
	return predef("bxor", func(a, b T) T { return a ^ b }, func(x, y []T) {
		y = y[:len(x)]
		for i := range x {
			x[i] ^= y[i]
		}
	})
}

// ValueLoc is a value with the index of where it came from (usually a
// rank), the element type of MinLoc and MaxLoc (MPI's pair types such as
// MPI_DOUBLE_INT).
type ValueLoc[T Ordered] struct {
	Value T
	Loc   int
}

// MinLoc takes the smaller value and its location; on a tie, the smaller
// location (MPI_MINLOC).
func MinLoc[T Ordered]() Op[ValueLoc[T]] {
	f := func(a, b ValueLoc[T]) ValueLoc[T] {
		if b.Value < a.Value || (b.Value == a.Value && b.Loc < a.Loc) {
			return b
		}
		return a
	}
	return predef("minloc", f, func(x, y []ValueLoc[T]) {
		y = y[:len(x)]
		for i := range x {
			if y[i].Value < x[i].Value || (y[i].Value == x[i].Value && y[i].Loc < x[i].Loc) {
				x[i] = y[i]
			}
		}
	})
}

// MaxLoc takes the larger value and its location; on a tie, the smaller
// location (MPI_MAXLOC).
func MaxLoc[T Ordered]() Op[ValueLoc[T]] {
	f := func(a, b ValueLoc[T]) ValueLoc[T] {
		if b.Value > a.Value || (b.Value == a.Value && b.Loc < a.Loc) {
			return b
		}
		return a
	}
	return predef("maxloc", f, func(x, y []ValueLoc[T]) {
		y = y[:len(x)]
		for i := range x {
			if y[i].Value > x[i].Value || (y[i].Value == x[i].Value && y[i].Loc < x[i].Loc) {
				x[i] = y[i]
			}
		}
	})
}
