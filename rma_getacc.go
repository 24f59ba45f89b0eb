package mpi

import (
	"github.com/mpigo/mpi/internal/rma"
)

// Replace is the operation that stores the origin's value (MPI_REPLACE):
// Accumulate with Replace is an atomic Put.
func Replace[T any]() Op[T] {
	return Op[T]{&opDef[T]{name: "replace", fn: func(_, b T) T { return b }, vec: func(x, y []T) { copy(x, y) }}}
}

// NoOp is the operation that leaves the target unchanged (MPI_NO_OP):
// FetchAndOp or GetAccumulate with NoOp is an atomic read.
func NoOp[T any]() Op[T] {
	return Op[T]{&opDef[T]{name: "no_op", fn: func(a, _ T) T { return a }, vec: func(x, y []T) {}}}
}

// Codes of Replace and NoOp in requests (after the predefined kinds).
const (
	kReplace = opKind(nOpKinds) + iota
	kNoOp
)

// opFor returns the operation a request's code names for T.
func opFor[T any](k byte) (Op[T], bool) {
	switch opKind(k) {
	case kReplace:
		return Replace[T](), true
	case kNoOp:
		return NoOp[T](), true
	}
	if k >= byte(nOpKinds) {
		return Op[T]{}, false
	}
	o, ok := cachedOp[T](opKind(k))
	return o, ok && o.opDef != nil
}

// GetAccumulate combines vals into target's window at disp like
// Accumulate and stores in result the values the elements held before,
// atomically per element (MPI_Get_accumulate). len(result) must be
// len(vals). It is complete on return.
func (w *Window[T]) GetAccumulate(vals, result []T, target, disp int, op Op[T]) (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Window.GetAccumulate", nil, Undefined, Undefined), &err)
	}

	if err := w.accOp("GetAccumulate", target, op); err != nil {
		return err
	}
	if len(result) != len(vals) {
		return w.errorf("GetAccumulate", ErrCount, target, "result holds %d elements, vals %d", len(result), len(vals))
	}
	if null, err := w.check("GetAccumulate", target, disp, len(vals)); null || err != nil {
		return err
	}
	if len(vals) == 0 {
		return nil
	}
	if ok, err := w.typedAtomic("GetAccumulate", target, disp, atomName(op), false, vals, result); ok { // rma_atomic.go
		return err
	}
	if m := w.direct(target, disp, len(vals)); m != nil {
		span, err := w.span("GetAccumulate", m, target, disp, len(vals))
		if err != nil {
			return err
		}
		if err := w.accLock(m, target); err != nil {
			return w.failed("GetAccumulate", target, err)
		}
		dst := elemsOf[T](span, 0, len(vals), w.esize)
		copy(result, dst)
		op.apply(dst, vals, true)
		rma.AccUnlock(m.acc)
		return nil
	}
	if k, ok := w.predef(op); ok {
		rep, err := w.call("GetAccumulate", target, reqFop, k, disp, len(vals), bytesOf(vals, w.esize))
		if err != nil {
			return err
		}
		copy(bytesOf(result, w.esize), rep)
		return nil
	}
	old, err := w.remoteApply("GetAccumulate", target, disp, vals, op)
	if err != nil {
		return err
	}
	copy(result, old)
	return nil
}
