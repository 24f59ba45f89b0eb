//go:build cgo

package capi

import (
	"fmt"
	"unsafe"

	"github.com/mpigo/mpi"
)

// redArgs resolves the communicator, datatype and operation of a
// reduction.
func redArgs(fn string, comm, datatype, op uintptr) (*commEntry, *mpi.Datatype, *mpi.ReduceOp, int32) {
	ce, t, rc := args(fn, comm, datatype)
	if ce == nil {
		return nil, nil, nil, rc
	}
	o, rc := opArg(fn, ce, op)
	if o == nil {
		return nil, nil, nil, rc
	}
	if o, rc = fortranPairOp(fn, ce, o, t); o == nil { // fortrantypes.go
		return nil, nil, nil, rc
	}
	if rc := opOnType(fn, ce, o, t); rc != 0 {
		return nil, nil, nil, rc
	}
	return ce, t, o, 0
}

// redBuf is a buffer of n elements of t, or nil where not significant
// (want false); MPI_IN_PLACE only where inPlaceOK.
func redBuf(fn string, ce *commEntry, p unsafe.Pointer, n int, t *mpi.Datatype, want, inPlaceOK bool) ([]byte, int32) {
	if !want {
		return nil, 0
	}
	if uintptr(p) == 1 && !inPlaceOK {
		return nil, raiseOn(fn, ce, classErr(MPI_ERR_BUFFER, "MPI_IN_PLACE is not allowed here"))
	}
	if n < 0 {
		return nil, raiseOn(fn, ce, classErr(MPI_ERR_COUNT, fmt.Sprintf("count %d is negative", n)))
	}
	return bufArg(fn, ce, p, n, t)
}

func reduce(fn string, sendbuf, recvbuf unsafe.Pointer, count int, datatype, op uintptr, root int32, comm uintptr) collOp {
	ce, t, o, rc := redArgs(fn, comm, datatype, op)
	if ce == nil {
		return failed(rc)
	}
	c := ce.c
	here := isRoot(c, root)
	// The root of an intracommunicator may give MPI_IN_PLACE; the root
	// group of an intercommunicator gives no data.
	sb, rc := redBuf(fn, ce, sendbuf, count, t, sends(c, root), here)
	if rc != 0 {
		return failed(rc)
	}
	rb, rc := redBuf(fn, ce, recvbuf, count, t, here, false)
	if rc != 0 {
		return failed(rc)
	}
	ro := rootArg(root)
	return collOp{ce: ce,
		run:   func() error { return c.Reduce(sb, rb, count, t, o, ro) },
		start: func() (*mpi.Request, error) { return c.Ireduce(sb, rb, count, t, o, ro) },
		init:  func(in *mpi.Info) (*mpi.Request, error) { return c.ReduceInit(sb, rb, count, t, o, ro, in) }}
}

func implReduce(sendbuf, recvbuf unsafe.Pointer, count int32, datatype, op uintptr, root int32, comm uintptr) int32 {
	const fn = "MPI_Reduce"
	return reduce(fn, sendbuf, recvbuf, int(count), datatype, op, root, comm).block(fn)
}

func implReduce_c(sendbuf, recvbuf unsafe.Pointer, count int64, datatype, op uintptr, root int32, comm uintptr) int32 {
	const fn = "MPI_Reduce_c"
	return reduce(fn, sendbuf, recvbuf, int(count), datatype, op, root, comm).block(fn)
}

func implIreduce(sendbuf, recvbuf unsafe.Pointer, count int32, datatype, op uintptr, root int32, comm uintptr, request unsafe.Pointer) int32 {
	const fn = "MPI_Ireduce"
	return reduce(fn, sendbuf, recvbuf, int(count), datatype, op, root, comm).post(fn, request)
}

func implIreduce_c(sendbuf, recvbuf unsafe.Pointer, count int64, datatype, op uintptr, root int32, comm uintptr, request unsafe.Pointer) int32 {
	const fn = "MPI_Ireduce_c"
	return reduce(fn, sendbuf, recvbuf, int(count), datatype, op, root, comm).post(fn, request)
}

// Kinds of the reductions that every rank gets a result of.
const (
	kAllreduce = iota
	kScan
	kExscan
)

// redOp is a reduction of kind kAllreduce, kScan or kExscan whose
// arguments are resolved. Its blocking form calls mpigo directly: a
// collOp's closures cost three allocations a call, and from C, where a
// program's MPI_Allreduce in a loop made the runtime grow and sweep the
// heap, that was a third of an 8-byte MPI_Allreduce's time.
type redOp struct {
	ce     *commEntry
	rc     int32
	kind   int
	sb, rb []byte
	count  int
	t      *mpi.Datatype
	o      *mpi.ReduceOp
}

func allreduce(fn string, kind int, sendbuf, recvbuf unsafe.Pointer, count int, datatype, op uintptr, comm uintptr) redOp {
	ce, t, o, rc := redArgs(fn, comm, datatype, op)
	if ce == nil {
		return redOp{rc: rc}
	}
	sb, rc := redBuf(fn, ce, sendbuf, count, t, true, true)
	if rc != 0 {
		return redOp{rc: rc}
	}
	rb, rc := redBuf(fn, ce, recvbuf, count, t, true, false)
	if rc != 0 {
		return redOp{rc: rc}
	}
	return redOp{ce: ce, kind: kind, sb: sb, rb: rb, count: count, t: t, o: o}
}

// block runs the reduction (the blocking form).
func (r redOp) block(fn string) int32 {
	if r.ce == nil {
		return r.rc
	}
	c := r.ce.c
	var err error
	switch r.kind {
	case kScan:
		err = c.Scan(r.sb, r.rb, r.count, r.t, r.o)
	case kExscan:
		err = c.Exscan(r.sb, r.rb, r.count, r.t, r.o)
	default:
		err = c.Allreduce(r.sb, r.rb, r.count, r.t, r.o)
	}
	return r.ce.check(fn, err)
}

// post is collOp.post for the reduction.
func (r redOp) post(fn string, request unsafe.Pointer) int32 { return r.coll().post(fn, request) }

// persist is collOp.persist for the reduction.
func (r redOp) persist(fn string, info uintptr, request unsafe.Pointer) int32 {
	return r.coll().persist(fn, info, request)
}

// coll is the reduction as a collOp, for its non-blocking and persistent
// forms.
func (r redOp) coll() collOp {
	if r.ce == nil {
		return failed(r.rc)
	}
	c, sb, rb, count, t, o := r.ce.c, r.sb, r.rb, r.count, r.t, r.o
	switch r.kind {
	case kScan:
		return collOp{ce: r.ce,
			start: func() (*mpi.Request, error) { return c.Iscan(sb, rb, count, t, o) },
			init:  func(in *mpi.Info) (*mpi.Request, error) { return c.ScanInit(sb, rb, count, t, o, in) }}
	case kExscan:
		return collOp{ce: r.ce,
			start: func() (*mpi.Request, error) { return c.Iexscan(sb, rb, count, t, o) },
			init:  func(in *mpi.Info) (*mpi.Request, error) { return c.ExscanInit(sb, rb, count, t, o, in) }}
	}
	return collOp{ce: r.ce,
		start: func() (*mpi.Request, error) { return c.Iallreduce(sb, rb, count, t, o) },
		init:  func(in *mpi.Info) (*mpi.Request, error) { return c.AllreduceInit(sb, rb, count, t, o, in) }}
}

func implAllreduce(sendbuf, recvbuf unsafe.Pointer, count int32, datatype, op, comm uintptr) int32 {
	const fn = "MPI_Allreduce"
	return allreduce(fn, kAllreduce, sendbuf, recvbuf, int(count), datatype, op, comm).block(fn)
}

func implAllreduce_c(sendbuf, recvbuf unsafe.Pointer, count int64, datatype, op, comm uintptr) int32 {
	const fn = "MPI_Allreduce_c"
	return allreduce(fn, kAllreduce, sendbuf, recvbuf, int(count), datatype, op, comm).block(fn)
}

func implIallreduce(sendbuf, recvbuf unsafe.Pointer, count int32, datatype, op, comm uintptr, request unsafe.Pointer) int32 {
	const fn = "MPI_Iallreduce"
	return allreduce(fn, kAllreduce, sendbuf, recvbuf, int(count), datatype, op, comm).post(fn, request)
}

func implIallreduce_c(sendbuf, recvbuf unsafe.Pointer, count int64, datatype, op, comm uintptr, request unsafe.Pointer) int32 {
	const fn = "MPI_Iallreduce_c"
	return allreduce(fn, kAllreduce, sendbuf, recvbuf, int(count), datatype, op, comm).post(fn, request)
}

func implScan(sendbuf, recvbuf unsafe.Pointer, count int32, datatype, op, comm uintptr) int32 {
	const fn = "MPI_Scan"
	return allreduce(fn, kScan, sendbuf, recvbuf, int(count), datatype, op, comm).block(fn)
}

func implScan_c(sendbuf, recvbuf unsafe.Pointer, count int64, datatype, op, comm uintptr) int32 {
	const fn = "MPI_Scan_c"
	return allreduce(fn, kScan, sendbuf, recvbuf, int(count), datatype, op, comm).block(fn)
}

func implIscan(sendbuf, recvbuf unsafe.Pointer, count int32, datatype, op, comm uintptr, request unsafe.Pointer) int32 {
	const fn = "MPI_Iscan"
	return allreduce(fn, kScan, sendbuf, recvbuf, int(count), datatype, op, comm).post(fn, request)
}

func implIscan_c(sendbuf, recvbuf unsafe.Pointer, count int64, datatype, op, comm uintptr, request unsafe.Pointer) int32 {
	const fn = "MPI_Iscan_c"
	return allreduce(fn, kScan, sendbuf, recvbuf, int(count), datatype, op, comm).post(fn, request)
}

func implExscan(sendbuf, recvbuf unsafe.Pointer, count int32, datatype, op, comm uintptr) int32 {
	const fn = "MPI_Exscan"
	return allreduce(fn, kExscan, sendbuf, recvbuf, int(count), datatype, op, comm).block(fn)
}

func implExscan_c(sendbuf, recvbuf unsafe.Pointer, count int64, datatype, op, comm uintptr) int32 {
	const fn = "MPI_Exscan_c"
	return allreduce(fn, kExscan, sendbuf, recvbuf, int(count), datatype, op, comm).block(fn)
}

func implIexscan(sendbuf, recvbuf unsafe.Pointer, count int32, datatype, op, comm uintptr, request unsafe.Pointer) int32 {
	const fn = "MPI_Iexscan"
	return allreduce(fn, kExscan, sendbuf, recvbuf, int(count), datatype, op, comm).post(fn, request)
}

func implIexscan_c(sendbuf, recvbuf unsafe.Pointer, count int64, datatype, op, comm uintptr, request unsafe.Pointer) int32 {
	const fn = "MPI_Iexscan_c"
	return allreduce(fn, kExscan, sendbuf, recvbuf, int(count), datatype, op, comm).post(fn, request)
}

// reduceScatter is MPI_Reduce_scatter: the input has sum(recvcounts)
// elements, in recvbuf with MPI_IN_PLACE.
func reduceScatter(fn string, sendbuf, recvbuf, recvcounts unsafe.Pointer, datatype, op, comm uintptr, wide bool) collOp {
	ce, t, o, rc := redArgs(fn, comm, datatype, op)
	if ce == nil {
		return failed(rc)
	}
	c := ce.c
	cs, rc := ints(fn, ce, recvcounts, c.Size(), wide, "recvcounts")
	if rc != 0 {
		return failed(rc)
	}
	total := 0
	for _, n := range cs {
		if n < 0 {
			return failed(raiseOn(fn, ce, classErr(MPI_ERR_COUNT, fmt.Sprintf("count %d is negative", n))))
		}
		total += n
	}
	inPlace := uintptr(sendbuf) == 1
	sb, rc := redBuf(fn, ce, sendbuf, total, t, true, true)
	if rc != 0 {
		return failed(rc)
	}
	rn := cs[c.Rank()]
	if inPlace {
		rn = total
	}
	rb, rc := redBuf(fn, ce, recvbuf, rn, t, true, false)
	if rc != 0 {
		return failed(rc)
	}
	return collOp{ce: ce,
		run:   func() error { return c.ReduceScatter(sb, rb, cs, t, o) },
		start: func() (*mpi.Request, error) { return c.IreduceScatter(sb, rb, cs, t, o) },
		init:  func(in *mpi.Info) (*mpi.Request, error) { return c.ReduceScatterInit(sb, rb, cs, t, o, in) }}
}

func implReduce_scatter(sendbuf, recvbuf, recvcounts unsafe.Pointer, datatype, op, comm uintptr) int32 {
	const fn = "MPI_Reduce_scatter"
	return reduceScatter(fn, sendbuf, recvbuf, recvcounts, datatype, op, comm, false).block(fn)
}

func implReduce_scatter_c(sendbuf, recvbuf, recvcounts unsafe.Pointer, datatype, op, comm uintptr) int32 {
	const fn = "MPI_Reduce_scatter_c"
	return reduceScatter(fn, sendbuf, recvbuf, recvcounts, datatype, op, comm, true).block(fn)
}

func implIreduce_scatter(sendbuf, recvbuf, recvcounts unsafe.Pointer, datatype, op, comm uintptr, request unsafe.Pointer) int32 {
	const fn = "MPI_Ireduce_scatter"
	return reduceScatter(fn, sendbuf, recvbuf, recvcounts, datatype, op, comm, false).post(fn, request)
}

func implIreduce_scatter_c(sendbuf, recvbuf, recvcounts unsafe.Pointer, datatype, op, comm uintptr, request unsafe.Pointer) int32 {
	const fn = "MPI_Ireduce_scatter_c"
	return reduceScatter(fn, sendbuf, recvbuf, recvcounts, datatype, op, comm, true).post(fn, request)
}

func reduceScatterBlock(fn string, sendbuf, recvbuf unsafe.Pointer, recvcount int, datatype, op, comm uintptr) collOp {
	ce, t, o, rc := redArgs(fn, comm, datatype, op)
	if ce == nil {
		return failed(rc)
	}
	c := ce.c
	if recvcount < 0 {
		return failed(raiseOn(fn, ce, classErr(MPI_ERR_COUNT, fmt.Sprintf("recvcount %d is negative", recvcount))))
	}
	total := recvcount * c.Size()
	sb, rc := redBuf(fn, ce, sendbuf, total, t, true, true)
	if rc != 0 {
		return failed(rc)
	}
	rn := recvcount
	if uintptr(sendbuf) == 1 {
		rn = total
	}
	rb, rc := redBuf(fn, ce, recvbuf, rn, t, true, false)
	if rc != 0 {
		return failed(rc)
	}
	return collOp{ce: ce,
		run:   func() error { return c.ReduceScatterBlock(sb, rb, recvcount, t, o) },
		start: func() (*mpi.Request, error) { return c.IreduceScatterBlock(sb, rb, recvcount, t, o) },
		init:  func(in *mpi.Info) (*mpi.Request, error) { return c.ReduceScatterBlockInit(sb, rb, recvcount, t, o, in) }}
}

func implReduce_scatter_block(sendbuf, recvbuf unsafe.Pointer, recvcount int32, datatype, op, comm uintptr) int32 {
	const fn = "MPI_Reduce_scatter_block"
	return reduceScatterBlock(fn, sendbuf, recvbuf, int(recvcount), datatype, op, comm).block(fn)
}

func implReduce_scatter_block_c(sendbuf, recvbuf unsafe.Pointer, recvcount int64, datatype, op, comm uintptr) int32 {
	const fn = "MPI_Reduce_scatter_block_c"
	return reduceScatterBlock(fn, sendbuf, recvbuf, int(recvcount), datatype, op, comm).block(fn)
}

func implIreduce_scatter_block(sendbuf, recvbuf unsafe.Pointer, recvcount int32, datatype, op, comm uintptr, request unsafe.Pointer) int32 {
	const fn = "MPI_Ireduce_scatter_block"
	return reduceScatterBlock(fn, sendbuf, recvbuf, int(recvcount), datatype, op, comm).post(fn, request)
}

func implIreduce_scatter_block_c(sendbuf, recvbuf unsafe.Pointer, recvcount int64, datatype, op, comm uintptr, request unsafe.Pointer) int32 {
	const fn = "MPI_Ireduce_scatter_block_c"
	return reduceScatterBlock(fn, sendbuf, recvbuf, int(recvcount), datatype, op, comm).post(fn, request)
}
