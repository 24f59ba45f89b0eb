package mpi

import (
	"encoding/binary"
	"slices"

	"github.com/mpigo/mpi/internal/datatype"
	"github.com/mpigo/mpi/internal/transport"
)

// Atomics through the fabric (transport.Atomics: UCX's atomic operations,
// the device's own on an RDMA device, or libfabric's, fi_fetch_atomic and
// fi_compare_atomic, where the provider has them). An accumulate-family call on
// integers of 4 or 8 bytes with MPI_SUM, MPI_BAND, MPI_BOR, MPI_BXOR,
// MPI_REPLACE or MPI_NO_OP, and a compare-and-swap of such an integer,
// can then be applied in the target's memory by the fabric, without a
// message to the target's runtime (on an RDMA device, without its CPU).
//
// Only with MPIGO_FABRIC_ATOMICS=1 (the job's promise, as Open MPI's
// window hint acc_single_intrinsic is, that its accumulates are of one
// or a few elements): an accumulate of many elements takes one atomic
// operation each, far slower than one message the target applies (an
// MPICH test of Get_accumulates of 1000 ints took 94 s instead of 5.6
// over UCX's shared memory), and a road chosen by the number of
// elements would break atomicity between calls of different lengths on
// one element.
//
// Such an operation is atomic only with respect to the fabric's other
// operations on the same memory, not to the target's own read, combine
// and write under its accumulate lock (lowApply). So a window takes the
// fabric's atomics only when every origin can use them for every target,
// the target itself included (through the fabric's endpoint to itself):
// every member reaches every other member's part through the fabric
// (windows over a fabric that reaches no peer's memory directly, by
// default, or with a member in the same process or on the same node
// reached through shared memory, keep the target's road), and every
// member agrees, in one more allgather when the window is made. Which
// road an element takes then depends only on its datatype, the
// operation and its address (an integer whose address is not a multiple
// of its size goes the target's road from every origin), so the
// operations of every origin on one element are atomic with respect to
// each other, as MPI asks of accumulates of one predefined datatype with
// the same operation or MPI_NO_OP (the info key accumulate_ops, whose
// values same_op and same_op_no_op are the only ones MPI defines). MPI_SUM
// and MPI_MAX on one element at once, which MPI leaves undefined under
// both, are not atomic with respect to each other here.
//
// Each atomic operation fetches the element's value before, so that its
// completion means it is applied at the target: an accumulate-family call
// through the fabric is complete when it returns, and successive calls
// from one origin are ordered as MPI's default accumulate_ordering asks.
// The elements of one call are all under way at once.

// atomicWin is set up in fabWin when the window takes the fabric's
// atomics.
type atomicWin struct {
	self transport.Atomics // this rank's own part, through the fabric
	tsz  int               // the size of the integers T is made of (4 or 8), or 0
}

// atomicCandidate reports whether this rank can take the fabric's atomics
// towards every member of w, itself included: it reaches every other
// member's part through the fabric, with atomics, and opens its own part
// through the same transport.
func (w *Window[T]) atomicCandidate() bool {
	f := w.fab
	if !w.c.p.job.fabricAtomics || f == nil || f.x == nil || f.tr == nil || f.rm == nil || w.dynamic {
		return false
	}
	for r := range w.sizes {
		if r == w.c.rank {
			continue
		}
		if _, ok := f.rm[r].(transport.Atomics); !ok {
			return false
		}
	}
	self, err := f.tr.OpenRemote(w.c.group[w.c.rank], f.x.Key())
	if err != nil {
		return false
	}
	a, ok := self.(transport.Atomics)
	if !ok {
		self.Close()
		return false
	}
	f.selfRm = self
	f.atom = &atomicWin{self: a, tsz: intSize(datatype.InfoFor[T]().TypeMap())}
	return true
}

// decideAtomics has the members of w agree whether the window takes the
// fabric's atomics: only if every one can (atomicCandidate). Collective
// over d, the window's communicator, when keys were exchanged.
func (w *Window[T]) decideAtomics(d *Comm) error {
	ok := w.atomicCandidate()
	all, err := Allgather(d, ok)
	if err != nil {
		return err
	}
	if !slices.Contains(all, false) {
		return nil
	}
	if w.fab != nil && w.fab.selfRm != nil {
		w.fab.selfRm.Close()
		w.fab.selfRm, w.fab.atom = nil, nil
	}
	return nil
}

// intSize returns the size of the integers t is made of, if it is made of
// integers of 4 or 8 bytes of one kind with no holes between them, else 0.
func intSize(t *datatype.Type) int {
	if t == nil || t.Size == 0 || !t.Contiguous() {
		return 0
	}
	switch k := t.Uniform().Canon(); k {
	case datatype.BasicInt32, datatype.BasicUint32, datatype.BasicInt64, datatype.BasicUint64:
		if t.Size%int64(k.Size()) == 0 {
			return k.Size()
		}
	}
	return 0
}

// atomicOp returns the fabric's integer operation for an accumulate
// operation's name.
func atomicOp(name string) (transport.AtomicOp, bool) {
	switch name {
	case "sum", "no_op": // no_op adds 0: an atomic read
		return transport.AtomicAdd, true
	case "band":
		return transport.AtomicAnd, true
	case "bor":
		return transport.AtomicOr, true
	case "bxor":
		return transport.AtomicXor, true
	case "replace":
		return transport.AtomicSwap, true
	}
	return 0, false
}

// atomicsTo returns target's part through the fabric's atomics, if w
// takes them, else nil.
func (w *Window[T]) atomicsTo(target int) transport.Atomics {
	if w.fab == nil || w.fab.atom == nil {
		return nil
	}
	if target == w.c.rank {
		return w.fab.atom.self
	}
	a, _ := w.fab.rm[target].(transport.Atomics)
	return a
}

// fabAtomics applies op to the integers of size bytes at byte offsets offs
// of target's part, with operands in (packed, size bytes each; for a
// compare-and-swap the values compared, then the new ones), and writes
// their values before into out (packed) if it is not nil.
func (w *Window[T]) fabAtomics(name string, a transport.Atomics, target int, op transport.AtomicOp, size int, offs []int, in, out []byte) error {
	ne := binary.NativeEndian
	get := func(b []byte, i int) uint64 {
		if size == 4 {
			return uint64(ne.Uint32(b[4*i:]))
		}
		return ne.Uint64(b[8*i:])
	}
	as := make([]transport.Atomic, len(offs))
	for i, off := range offs {
		as[i].Off = off
		switch {
		case op == transport.AtomicCswap:
			as[i].Cmp, as[i].V = get(in, i), get(in, len(offs)+i)
		case in != nil:
			as[i].V = get(in, i)
		}
	}
	if err := a.Atomics(op, size, as); err != nil {
		return w.fabFailed(name, target, err)
	}
	for i := range as {
		if out == nil {
			break
		}
		if size == 4 {
			ne.PutUint32(out[4*i:], uint32(as[i].Old))
		} else {
			ne.PutUint64(out[8*i:], as[i].Old)
		}
	}
	return nil
}

// typedAtomic is the fabric's road of a typed accumulate-family call: op
// applied to len(vals) elements from disp of target's part, their values
// before into old (if not nil); for a compare-and-swap (cas) vals holds
// the value compared, then the new one. It reports whether the call took
// the road.
func (w *Window[T]) typedAtomic(name string, target, disp int, opName string, cas bool, vals, old []T) (bool, error) {
	a := w.atomicsTo(target)
	if a == nil || w.fab.atom.tsz == 0 {
		return false, nil
	}
	op := transport.AtomicCswap
	if !cas {
		var ok bool
		if op, ok = atomicOp(opName); !ok {
			return false, nil
		}
	}
	size := w.fab.atom.tsz
	n := len(vals)
	if cas {
		n = 1
	}
	per := w.esize / size
	offs := make([]int, 0, n*per)
	for i := range n * per {
		off := disp*w.esize + i*size
		if !a.AtomicOK(off, size) {
			// Not aligned: this element takes the target's road from
			// every origin. T's elements are all aligned alike, so
			// the call does.
			return false, nil
		}
		offs = append(offs, off)
	}
	var in, out []byte
	if opName != "no_op" {
		in = bytesOf(vals, w.esize)
	}
	if old != nil {
		out = bytesOf(old, w.esize)
	}
	return true, w.fabAtomics(name, a, target, op, size, offs, in, out)
}

// typedAtomic1 is typedAtomic for one element: v with op, or for a
// compare-and-swap v compared and swap the new value. It returns the
// element's value before.
func (w *Window[T]) typedAtomic1(name string, target, disp int, opName string, cas bool, v, swap T) (T, bool, error) {
	if w.atomicsTo(target) == nil {
		var zero T
		return zero, false, nil
	}
	vals, old := []T{v, swap}, make([]T, 1)
	if !cas {
		vals = vals[:1]
	}
	ok, err := w.typedAtomic(name, target, disp, opName, cas, vals, old)
	return old[0], ok, err
}

// atomName is the name of op for typedAtomic: a predefined operation's,
// else "" (a user's operation takes the target's road).
func atomName[T any](op Op[T]) string {
	if op.opDef == nil || op.vec == nil {
		return ""
	}
	return op.name
}

// lowAtomic is the fabric's road of a low-level accumulate-family call
// (run): it reports whether c took it. The integers of c whose address is
// not a multiple of their size take the target's road, as one call of
// their own, from every origin.
func (w *Window[T]) lowAtomic(c *lowCall) (bool, error) {
	if c.noAtom || (c.kind != reqAccV && c.kind != reqGaccV && c.kind != reqCasV) || c.ae == nil {
		return false, nil
	}
	a := w.atomicsTo(c.target)
	if a == nil {
		return false, nil
	}
	size := intSize(c.ae.t)
	if size == 0 || c.ae.size != size {
		return false, nil
	}
	op := transport.AtomicCswap
	if c.kind != reqCasV {
		if c.op == nil || c.op.user != nil {
			return false, nil
		}
		var ok bool
		if op, ok = atomicOp(c.op.name); !ok {
			return false, nil
		}
	}
	base := int64(c.disp) * int64(w.esize)
	part := int64(w.sizes[c.target]) * int64(w.esize)
	if lo, hi, ok := c.d.span(); !ok || base+lo < 0 || base+hi > part {
		return false, nil // the target's road reports the range
	}
	// Every integer's offset from base, and whether the fabric reaches
	// it (aligned).
	var rel []int64
	var fab []bool
	nfab := 0
	for k := int64(0); k < c.d.count; k++ {
		for _, sg := range c.d.segs {
			if sg.Len%int64(size) != 0 {
				return false, nil
			}
			for j := int64(0); j < sg.Len; j += int64(size) {
				r := k*c.d.ext + sg.Off + j
				ok := a.AtomicOK(int(base+r), size)
				rel, fab = append(rel, r), append(fab, ok)
				if ok {
					nfab++
				}
			}
		}
	}
	if nfab == 0 || (c.kind == reqCasV && nfab < len(rel)) {
		return false, nil
	}
	if nfab < len(rel) {
		// The others first, by their own call.
		if err := w.lowAtomicOdd(c, size, rel, fab); err != nil {
			return true, err
		}
	}
	// The operands and results of the integers the fabric reaches, in
	// order.
	offs := make([]int, 0, nfab)
	in, out := c.in, c.out
	if nfab < len(rel) {
		in, out = nil, nil
		if c.out != nil {
			out = make([]byte, nfab*size)
		}
		for i := range rel {
			if fab[i] {
				in = append(in, c.in[i*size:(i+1)*size]...)
			}
		}
	}
	for i, r := range rel {
		if fab[i] {
			offs = append(offs, int(base+r))
		}
	}
	if c.op != nil && c.op.name == "no_op" {
		in = nil // an atomic read: adds 0, whatever the origin holds
	}
	if err := w.fabAtomics(c.name, a, c.target, op, size, offs, in, out); err != nil {
		return true, err
	}
	if c.out != nil && nfab < len(rel) {
		// Merge: the others' values before are in c.out already.
		x := 0
		for i := range rel {
			if fab[i] {
				copy(c.out[i*size:(i+1)*size], out[x*size:])
				x++
			}
		}
	}
	if c.out != nil && c.done != nil {
		c.done()
	}
	return true, nil
}

// lowAtomicOdd applies the integers of c the fabric does not reach (fab
// false; rel holds every integer's offset from the call's start) by the
// target's road, as one call, their values before into c.out at their
// places.
func (w *Window[T]) lowAtomicOdd(c *lowCall, size int, rel []int64, fab []bool) error {
	sub := &lowCall{name: c.name, target: c.target, disp: c.disp, kind: c.kind, op: c.op, opk: c.opk, elem: c.elem, f: c.f, noAtom: true}
	sub.d = vdesc{count: 1}
	for i, r := range rel {
		if !fab[i] {
			sub.d.segs = append(sub.d.segs, datatype.Seg{Off: r, Len: int64(size)})
			sub.in = append(sub.in, c.in[i*size:(i+1)*size]...)
		}
	}
	sub.d.size = int64(len(sub.d.segs) * size)
	sub.d.ext = sub.d.size
	if c.out != nil {
		sub.out = make([]byte, sub.d.size)
	}
	if _, err := w.run(sub, false); err != nil {
		return err
	}
	if c.out != nil {
		x := 0
		for i := range rel {
			if !fab[i] {
				copy(c.out[i*size:(i+1)*size], sub.out[x*size:])
				x++
			}
		}
	}
	return nil
}
