//go:build cgo

package capi

import (
	"fmt"
	"unsafe"

	"github.com/mpigo/mpi"
)

// collOp is a collective whose arguments are resolved: run does it,
// start begins it as a request (the I form), init makes it a persistent
// request (the _init form of MPI-4). ce is nil if the arguments were
// bad, and rc is then the error's code.
type collOp struct {
	ce    *commEntry
	run   func() error
	start func() (*mpi.Request, error)
	init  func(*mpi.Info) (*mpi.Request, error)
	rc    int32
}

func failed(rc int32) collOp { return collOp{rc: rc} }

// block runs the collective (the blocking form).
func (k collOp) block(fn string) int32 {
	if k.ce == nil {
		return k.rc
	}
	return k.ce.check(fn, k.run())
}

// post starts the collective and stores its request at request (the
// non-blocking form).
func (k collOp) post(fn string, request unsafe.Pointer) int32 {
	if k.ce == nil {
		return k.rc
	}
	if request == nil {
		return raiseOn(fn, k.ce, classErr(MPI_ERR_ARG, "request is NULL"))
	}
	r, err := k.start()
	if err != nil {
		return k.ce.check(fn, err)
	}
	*(*uintptr)(request) = addRequest(r, k.ce, false)
	return MPI_SUCCESS
}

// rootArg converts a root of the ABI to mpigo's: MPI_ROOT and
// MPI_PROC_NULL name the groups of an intercommunicator's collectives.
func rootArg(r int32) int {
	switch r {
	case MPI_ROOT:
		return mpi.Root
	case MPI_PROC_NULL:
		return mpi.ProcNull
	}
	if r < 0 {
		return invalidArg
	}
	return int(r)
}

// isRoot reports whether the caller is the root of a rooted collective:
// its rank on an intracommunicator, MPI_ROOT on an intercommunicator.
func isRoot(c *mpi.Comm, root int32) bool {
	if c.IsInter() {
		return root == MPI_ROOT
	}
	return c.Rank() == int(root)
}

// sends reports whether the caller gives data to a rooted collective:
// every rank of an intracommunicator, the ranks of the group without the
// root on an intercommunicator.
func sends(c *mpi.Comm, root int32) bool {
	return !c.IsInter() || root >= 0
}

// peers is the number of blocks of an all-to-all collective: the size of
// the group, the remote group on an intercommunicator.
func peers(c *mpi.Comm) int {
	if c.IsInter() {
		return c.RemoteSize()
	}
	return c.Size()
}

// ints reads n counts or displacements at p: C ints, or 64-bit
// MPI_Count/MPI_Aint values in the large-count (wide) forms.
func ints(fn string, ce *commEntry, p unsafe.Pointer, n int, wide bool, what string) ([]int, int32) {
	if n == 0 {
		return []int{}, 0
	}
	if p == nil {
		return nil, raiseOn(fn, ce, classErr(MPI_ERR_ARG, what+" is NULL"))
	}
	v := make([]int, n)
	if wide {
		for i, x := range unsafe.Slice((*int64)(p), n) {
			v[i] = int(x)
		}
	} else {
		for i, x := range unsafe.Slice((*int32)(p), n) {
			v[i] = int(x)
		}
	}
	return v, 0
}

// vbuf is the buffer of a v-collective: up to the end of its farthest
// block (displacements in elements of t).
func vbuf(fn string, ce *commEntry, p unsafe.Pointer, counts, displs []int, t *mpi.Datatype) ([]byte, int32) {
	if uintptr(p) == 1 {
		return mpi.InPlace, 0
	}
	n := 0
	for i, c := range counts {
		if c < 0 {
			return nil, raiseOn(fn, ce, classErr(MPI_ERR_COUNT, fmt.Sprintf("count %d is negative", c)))
		}
		if c > 0 && i < len(displs) && displs[i]+c > n {
			n = displs[i] + c
		}
	}
	for _, d := range displs {
		if d < 0 {
			// A block before the buffer's start: not supported, as
			// MPI_BOTTOM is not.
			return nil, raiseOn(fn, ce, classErr(MPI_ERR_ARG, fmt.Sprintf("negative displacement %d is not supported", d)))
		}
	}
	return bufArg(fn, ce, p, n, t)
}

// wbuf is the buffer of an alltoallw (displacements in bytes, a datatype
// per block) and the displacements and datatypes to give mpigo for it:
// displs and ts as they are, or, when the buffer is MPI_BOTTOM (the
// addresses are in the displacements or the datatypes) or a block starts
// below p, a buffer from the first byte any block reaches, each block's
// displacement made relative to it and its datatype rebased to start at
// its first byte.
func wbuf(fn string, ce *commEntry, p unsafe.Pointer, counts, displs []int, ts []*mpi.Datatype) ([]byte, []int, []*mpi.Datatype, int32) {
	if uintptr(p) == 1 {
		return mpi.InPlace, displs, ts, 0
	}
	// lo and hi bound the bytes the blocks reach, relative to p.
	lo, hi, any := 0, 0, false
	for i, c := range counts {
		if c < 0 {
			return nil, nil, nil, raiseOn(fn, ce, classErr(MPI_ERR_COUNT, fmt.Sprintf("count %d is negative", c)))
		}
		if c == 0 || ts[i].Size() == 0 {
			continue
		}
		_, extent := ts[i].Extent()
		tlb, textent := ts[i].TrueExtent()
		first, end := displs[i]+tlb, displs[i]+(c-1)*extent+tlb+textent
		if !any || first < lo {
			lo = first
		}
		if !any || end > hi {
			hi = end
		}
		any = true
	}
	if !any {
		return unsafe.Slice((*byte)(p), 0), make([]int, len(displs)), ts, 0
	}
	if p != nil && lo >= 0 {
		for _, d := range displs {
			if d < 0 {
				return nil, nil, nil, raiseOn(fn, ce, classErr(MPI_ERR_ARG, fmt.Sprintf("negative displacement %d is not supported", d)))
			}
		}
		return unsafe.Slice((*byte)(p), hi), displs, ts, 0
	}
	if p == nil && lo <= 0 {
		return nil, nil, nil, raiseOn(fn, ce, classErr(MPI_ERR_BUFFER, fmt.Sprintf("buffer is MPI_BOTTOM but the blocks start at address %d, not at absolute addresses", lo)))
	}
	ds := make([]int, len(displs))
	moved := make([]*mpi.Datatype, len(ts))
	for i, t := range ts {
		moved[i] = t
		if counts[i] == 0 || t.Size() == 0 {
			continue
		}
		tlb, _ := t.TrueExtent()
		ds[i] = displs[i] + tlb - lo
		if tlb != 0 {
			r, err := rebased(t, -tlb)
			if err != nil {
				return nil, nil, nil, raiseOn(fn, ce, err)
			}
			moved[i] = r
		}
	}
	return unsafe.Slice((*byte)(unsafe.Add(p, lo)), hi-lo), ds, moved, 0
}

// types reads n datatype handles at p (alltoallw).
func types(fn string, ce *commEntry, p unsafe.Pointer, n int, what string) ([]*mpi.Datatype, int32) {
	if n == 0 {
		return []*mpi.Datatype{}, 0
	}
	if p == nil {
		return nil, raiseOn(fn, ce, classErr(MPI_ERR_ARG, what+" is NULL"))
	}
	ts := make([]*mpi.Datatype, n)
	for i, h := range unsafe.Slice((*uintptr)(p), n) {
		t, rc := typeArg(fn, ce, h)
		if t == nil {
			return nil, rc
		}
		ts[i] = t
	}
	return ts, 0
}

func implBarrier(comm uintptr) int32 {
	ce, rc := getComm("MPI_Barrier", comm)
	if ce == nil {
		return rc
	}
	return ce.check("MPI_Barrier", ce.c.Barrier())
}

func implIbarrier(comm uintptr, request unsafe.Pointer) int32 {
	const fn = "MPI_Ibarrier"
	ce, rc := getComm(fn, comm)
	if ce == nil {
		return rc
	}
	return collOp{ce: ce, start: ce.c.Ibarrier}.post(fn, request)
}

func bcast(fn string, buffer unsafe.Pointer, count int, datatype uintptr, root int32, comm uintptr) collOp {
	ce, t, rc := args(fn, comm, datatype)
	if ce == nil {
		return failed(rc)
	}
	var b []byte
	if root != MPI_PROC_NULL {
		if b, rc = bufArg(fn, ce, buffer, count, t); rc != 0 {
			return failed(rc)
		}
	}
	r := rootArg(root)
	return collOp{ce: ce,
		run:   func() error { return ce.c.Bcast(b, count, t, r) },
		start: func() (*mpi.Request, error) { return ce.c.Ibcast(b, count, t, r) },
		init:  func(in *mpi.Info) (*mpi.Request, error) { return ce.c.BcastInit(b, count, t, r, in) }}
}

func implBcast(buffer unsafe.Pointer, count int32, datatype uintptr, root int32, comm uintptr) int32 {
	return bcast("MPI_Bcast", buffer, int(count), datatype, root, comm).block("MPI_Bcast")
}

func implBcast_c(buffer unsafe.Pointer, count int64, datatype uintptr, root int32, comm uintptr) int32 {
	return bcast("MPI_Bcast_c", buffer, int(count), datatype, root, comm).block("MPI_Bcast_c")
}

func implIbcast(buffer unsafe.Pointer, count int32, datatype uintptr, root int32, comm uintptr, request unsafe.Pointer) int32 {
	return bcast("MPI_Ibcast", buffer, int(count), datatype, root, comm).post("MPI_Ibcast", request)
}

func implIbcast_c(buffer unsafe.Pointer, count int64, datatype uintptr, root int32, comm uintptr, request unsafe.Pointer) int32 {
	return bcast("MPI_Ibcast_c", buffer, int(count), datatype, root, comm).post("MPI_Ibcast_c", request)
}

// side is one side (send or receive) of a collective: its buffer and
// datatype, nil where it is not significant.
type side struct {
	b []byte
	t *mpi.Datatype
}

// fixed resolves a side of count*n elements (n 0: not significant here).
func fixed(fn string, ce *commEntry, p unsafe.Pointer, count int, datatype uintptr, n int) (side, int32) {
	if n <= 0 && uintptr(p) != 1 {
		return side{}, 0
	}
	if uintptr(p) == 1 {
		return side{b: mpi.InPlace}, 0
	}
	t, rc := typeArg(fn, ce, datatype)
	if t == nil {
		return side{}, rc
	}
	if count < 0 {
		return side{}, raiseOn(fn, ce, classErr(MPI_ERR_COUNT, fmt.Sprintf("count %d is negative", count)))
	}
	b, rc := bufArg(fn, ce, p, count*n, t)
	if rc != 0 {
		return side{}, rc
	}
	return side{b, t}, 0
}

// pair completes the datatypes of a collective's two sides: a side that
// is not significant here (or MPI_IN_PLACE) takes the other's, so that
// mpigo gets no nil datatype.
func pair(s, r *side) {
	if s.t == nil {
		s.t = r.t
	}
	if r.t == nil {
		r.t = s.t
	}
	if s.t == nil { // neither side significant: any datatype will do
		s.t, r.t = mpi.Byte, mpi.Byte
	}
}

func gather(fn string, sendbuf unsafe.Pointer, sendcount int, sendtype uintptr, recvbuf unsafe.Pointer, recvcount int, recvtype uintptr, root int32, comm uintptr) collOp {
	ce, rc := getComm(fn, comm)
	if ce == nil {
		return failed(rc)
	}
	c := ce.c
	sn, rn := 0, 0
	if sends(c, root) {
		sn = 1
	}
	if isRoot(c, root) {
		rn = peers(c)
	}
	s, rc := fixed(fn, ce, sendbuf, sendcount, sendtype, sn)
	if rc != 0 {
		return failed(rc)
	}
	r, rc := fixed(fn, ce, recvbuf, recvcount, recvtype, rn)
	if rc != 0 {
		return failed(rc)
	}
	pair(&s, &r)
	ro := rootArg(root)
	return collOp{ce: ce,
		run: func() error { return c.Gather(s.b, sendcount, s.t, r.b, recvcount, r.t, ro) },
		start: func() (*mpi.Request, error) {
			return c.Igather(s.b, sendcount, s.t, r.b, recvcount, r.t, ro)
		},
		init: func(in *mpi.Info) (*mpi.Request, error) {
			return c.GatherInit(s.b, sendcount, s.t, r.b, recvcount, r.t, ro, in)
		}}
}

func implGather(sendbuf unsafe.Pointer, sendcount int32, sendtype uintptr, recvbuf unsafe.Pointer, recvcount int32, recvtype uintptr, root int32, comm uintptr) int32 {
	const fn = "MPI_Gather"
	return gather(fn, sendbuf, int(sendcount), sendtype, recvbuf, int(recvcount), recvtype, root, comm).block(fn)
}

func implGather_c(sendbuf unsafe.Pointer, sendcount int64, sendtype uintptr, recvbuf unsafe.Pointer, recvcount int64, recvtype uintptr, root int32, comm uintptr) int32 {
	const fn = "MPI_Gather_c"
	return gather(fn, sendbuf, int(sendcount), sendtype, recvbuf, int(recvcount), recvtype, root, comm).block(fn)
}

func implIgather(sendbuf unsafe.Pointer, sendcount int32, sendtype uintptr, recvbuf unsafe.Pointer, recvcount int32, recvtype uintptr, root int32, comm uintptr, request unsafe.Pointer) int32 {
	const fn = "MPI_Igather"
	return gather(fn, sendbuf, int(sendcount), sendtype, recvbuf, int(recvcount), recvtype, root, comm).post(fn, request)
}

func implIgather_c(sendbuf unsafe.Pointer, sendcount int64, sendtype uintptr, recvbuf unsafe.Pointer, recvcount int64, recvtype uintptr, root int32, comm uintptr, request unsafe.Pointer) int32 {
	const fn = "MPI_Igather_c"
	return gather(fn, sendbuf, int(sendcount), sendtype, recvbuf, int(recvcount), recvtype, root, comm).post(fn, request)
}

// vside resolves a side with a count and displacement per peer (n
// peers; 0: not significant here).
func vside(fn string, ce *commEntry, p, counts, displs unsafe.Pointer, datatype uintptr, n int, wide bool) (side, []int, []int, int32) {
	if n <= 0 && uintptr(p) != 1 {
		return side{}, nil, nil, 0
	}
	if uintptr(p) == 1 {
		return side{b: mpi.InPlace}, nil, nil, 0
	}
	t, rc := typeArg(fn, ce, datatype)
	if t == nil {
		return side{}, nil, nil, rc
	}
	cs, rc := ints(fn, ce, counts, n, wide, "counts")
	if rc != 0 {
		return side{}, nil, nil, rc
	}
	ds, rc := ints(fn, ce, displs, n, wide, "displs")
	if rc != 0 {
		return side{}, nil, nil, rc
	}
	b, rc := vbuf(fn, ce, p, cs, ds, t)
	if rc != 0 {
		return side{}, nil, nil, rc
	}
	return side{b, t}, cs, ds, 0
}

func gatherv(fn string, sendbuf unsafe.Pointer, sendcount int, sendtype uintptr, recvbuf, recvcounts, displs unsafe.Pointer, recvtype uintptr, root int32, comm uintptr, wide bool) collOp {
	ce, rc := getComm(fn, comm)
	if ce == nil {
		return failed(rc)
	}
	c := ce.c
	sn, rn := 0, 0
	if sends(c, root) {
		sn = 1
	}
	if isRoot(c, root) {
		rn = peers(c)
	}
	s, rc := fixed(fn, ce, sendbuf, sendcount, sendtype, sn)
	if rc != 0 {
		return failed(rc)
	}
	r, cs, ds, rc := vside(fn, ce, recvbuf, recvcounts, displs, recvtype, rn, wide)
	if rc != 0 {
		return failed(rc)
	}
	pair(&s, &r)
	ro := rootArg(root)
	return collOp{ce: ce,
		run: func() error { return c.Gatherv(s.b, sendcount, s.t, r.b, cs, ds, r.t, ro) },
		start: func() (*mpi.Request, error) {
			return c.Igatherv(s.b, sendcount, s.t, r.b, cs, ds, r.t, ro)
		},
		init: func(in *mpi.Info) (*mpi.Request, error) {
			return c.GathervInit(s.b, sendcount, s.t, r.b, cs, ds, r.t, ro, in)
		}}
}

func implGatherv(sendbuf unsafe.Pointer, sendcount int32, sendtype uintptr, recvbuf, recvcounts, displs unsafe.Pointer, recvtype uintptr, root int32, comm uintptr) int32 {
	const fn = "MPI_Gatherv"
	return gatherv(fn, sendbuf, int(sendcount), sendtype, recvbuf, recvcounts, displs, recvtype, root, comm, false).block(fn)
}

func implGatherv_c(sendbuf unsafe.Pointer, sendcount int64, sendtype uintptr, recvbuf, recvcounts, displs unsafe.Pointer, recvtype uintptr, root int32, comm uintptr) int32 {
	const fn = "MPI_Gatherv_c"
	return gatherv(fn, sendbuf, int(sendcount), sendtype, recvbuf, recvcounts, displs, recvtype, root, comm, true).block(fn)
}

func implIgatherv(sendbuf unsafe.Pointer, sendcount int32, sendtype uintptr, recvbuf, recvcounts, displs unsafe.Pointer, recvtype uintptr, root int32, comm uintptr, request unsafe.Pointer) int32 {
	const fn = "MPI_Igatherv"
	return gatherv(fn, sendbuf, int(sendcount), sendtype, recvbuf, recvcounts, displs, recvtype, root, comm, false).post(fn, request)
}

func implIgatherv_c(sendbuf unsafe.Pointer, sendcount int64, sendtype uintptr, recvbuf, recvcounts, displs unsafe.Pointer, recvtype uintptr, root int32, comm uintptr, request unsafe.Pointer) int32 {
	const fn = "MPI_Igatherv_c"
	return gatherv(fn, sendbuf, int(sendcount), sendtype, recvbuf, recvcounts, displs, recvtype, root, comm, true).post(fn, request)
}

func scatter(fn string, sendbuf unsafe.Pointer, sendcount int, sendtype uintptr, recvbuf unsafe.Pointer, recvcount int, recvtype uintptr, root int32, comm uintptr) collOp {
	ce, rc := getComm(fn, comm)
	if ce == nil {
		return failed(rc)
	}
	c := ce.c
	sn, rn := 0, 0
	if isRoot(c, root) {
		sn = peers(c)
	}
	if sends(c, root) {
		rn = 1
	}
	s, rc := fixed(fn, ce, sendbuf, sendcount, sendtype, sn)
	if rc != 0 {
		return failed(rc)
	}
	r, rc := fixed(fn, ce, recvbuf, recvcount, recvtype, rn)
	if rc != 0 {
		return failed(rc)
	}
	pair(&s, &r)
	ro := rootArg(root)
	return collOp{ce: ce,
		run: func() error { return c.Scatter(s.b, sendcount, s.t, r.b, recvcount, r.t, ro) },
		start: func() (*mpi.Request, error) {
			return c.Iscatter(s.b, sendcount, s.t, r.b, recvcount, r.t, ro)
		},
		init: func(in *mpi.Info) (*mpi.Request, error) {
			return c.ScatterInit(s.b, sendcount, s.t, r.b, recvcount, r.t, ro, in)
		}}
}

func implScatter(sendbuf unsafe.Pointer, sendcount int32, sendtype uintptr, recvbuf unsafe.Pointer, recvcount int32, recvtype uintptr, root int32, comm uintptr) int32 {
	const fn = "MPI_Scatter"
	return scatter(fn, sendbuf, int(sendcount), sendtype, recvbuf, int(recvcount), recvtype, root, comm).block(fn)
}

func implScatter_c(sendbuf unsafe.Pointer, sendcount int64, sendtype uintptr, recvbuf unsafe.Pointer, recvcount int64, recvtype uintptr, root int32, comm uintptr) int32 {
	const fn = "MPI_Scatter_c"
	return scatter(fn, sendbuf, int(sendcount), sendtype, recvbuf, int(recvcount), recvtype, root, comm).block(fn)
}

func implIscatter(sendbuf unsafe.Pointer, sendcount int32, sendtype uintptr, recvbuf unsafe.Pointer, recvcount int32, recvtype uintptr, root int32, comm uintptr, request unsafe.Pointer) int32 {
	const fn = "MPI_Iscatter"
	return scatter(fn, sendbuf, int(sendcount), sendtype, recvbuf, int(recvcount), recvtype, root, comm).post(fn, request)
}

func implIscatter_c(sendbuf unsafe.Pointer, sendcount int64, sendtype uintptr, recvbuf unsafe.Pointer, recvcount int64, recvtype uintptr, root int32, comm uintptr, request unsafe.Pointer) int32 {
	const fn = "MPI_Iscatter_c"
	return scatter(fn, sendbuf, int(sendcount), sendtype, recvbuf, int(recvcount), recvtype, root, comm).post(fn, request)
}

func scatterv(fn string, sendbuf, sendcounts, displs unsafe.Pointer, sendtype uintptr, recvbuf unsafe.Pointer, recvcount int, recvtype uintptr, root int32, comm uintptr, wide bool) collOp {
	ce, rc := getComm(fn, comm)
	if ce == nil {
		return failed(rc)
	}
	c := ce.c
	sn, rn := 0, 0
	if isRoot(c, root) {
		sn = peers(c)
	}
	if sends(c, root) {
		rn = 1
	}
	s, cs, ds, rc := vside(fn, ce, sendbuf, sendcounts, displs, sendtype, sn, wide)
	if rc != 0 {
		return failed(rc)
	}
	r, rc := fixed(fn, ce, recvbuf, recvcount, recvtype, rn)
	if rc != 0 {
		return failed(rc)
	}
	pair(&s, &r)
	ro := rootArg(root)
	return collOp{ce: ce,
		run: func() error { return c.Scatterv(s.b, cs, ds, s.t, r.b, recvcount, r.t, ro) },
		start: func() (*mpi.Request, error) {
			return c.Iscatterv(s.b, cs, ds, s.t, r.b, recvcount, r.t, ro)
		},
		init: func(in *mpi.Info) (*mpi.Request, error) {
			return c.ScattervInit(s.b, cs, ds, s.t, r.b, recvcount, r.t, ro, in)
		}}
}

func implScatterv(sendbuf, sendcounts, displs unsafe.Pointer, sendtype uintptr, recvbuf unsafe.Pointer, recvcount int32, recvtype uintptr, root int32, comm uintptr) int32 {
	const fn = "MPI_Scatterv"
	return scatterv(fn, sendbuf, sendcounts, displs, sendtype, recvbuf, int(recvcount), recvtype, root, comm, false).block(fn)
}

func implScatterv_c(sendbuf, sendcounts, displs unsafe.Pointer, sendtype uintptr, recvbuf unsafe.Pointer, recvcount int64, recvtype uintptr, root int32, comm uintptr) int32 {
	const fn = "MPI_Scatterv_c"
	return scatterv(fn, sendbuf, sendcounts, displs, sendtype, recvbuf, int(recvcount), recvtype, root, comm, true).block(fn)
}

func implIscatterv(sendbuf, sendcounts, displs unsafe.Pointer, sendtype uintptr, recvbuf unsafe.Pointer, recvcount int32, recvtype uintptr, root int32, comm uintptr, request unsafe.Pointer) int32 {
	const fn = "MPI_Iscatterv"
	return scatterv(fn, sendbuf, sendcounts, displs, sendtype, recvbuf, int(recvcount), recvtype, root, comm, false).post(fn, request)
}

func implIscatterv_c(sendbuf, sendcounts, displs unsafe.Pointer, sendtype uintptr, recvbuf unsafe.Pointer, recvcount int64, recvtype uintptr, root int32, comm uintptr, request unsafe.Pointer) int32 {
	const fn = "MPI_Iscatterv_c"
	return scatterv(fn, sendbuf, sendcounts, displs, sendtype, recvbuf, int(recvcount), recvtype, root, comm, true).post(fn, request)
}

// allgather is MPI_Allgather and, with neighbors, MPI_Neighbor_allgather.
func allgather(fn string, sendbuf unsafe.Pointer, sendcount int, sendtype uintptr, recvbuf unsafe.Pointer, recvcount int, recvtype uintptr, comm uintptr, neighbor bool) collOp {
	ce, rc := getComm(fn, comm)
	if ce == nil {
		return failed(rc)
	}
	c := ce.c
	in := peers(c)
	if neighbor {
		var err error
		if in, _, err = degrees(c); err != nil {
			return failed(raiseOn(fn, ce, err))
		}
	}
	s, rc := fixed(fn, ce, sendbuf, sendcount, sendtype, 1)
	if rc != 0 {
		return failed(rc)
	}
	r, rc := fixed(fn, ce, recvbuf, recvcount, recvtype, in)
	if rc != 0 {
		return failed(rc)
	}
	pair(&s, &r)
	if neighbor {
		return collOp{ce: ce,
			run: func() error { return c.NeighborAllgather(s.b, sendcount, s.t, r.b, recvcount, r.t) },
			start: func() (*mpi.Request, error) {
				return c.IneighborAllgather(s.b, sendcount, s.t, r.b, recvcount, r.t)
			},
			init: func(in *mpi.Info) (*mpi.Request, error) {
				return c.NeighborAllgatherInit(s.b, sendcount, s.t, r.b, recvcount, r.t, in)
			}}
	}
	return collOp{ce: ce,
		run: func() error { return c.Allgather(s.b, sendcount, s.t, r.b, recvcount, r.t) },
		start: func() (*mpi.Request, error) {
			return c.Iallgather(s.b, sendcount, s.t, r.b, recvcount, r.t)
		},
		init: func(in *mpi.Info) (*mpi.Request, error) {
			return c.AllgatherInit(s.b, sendcount, s.t, r.b, recvcount, r.t, in)
		}}
}

func implAllgather(sendbuf unsafe.Pointer, sendcount int32, sendtype uintptr, recvbuf unsafe.Pointer, recvcount int32, recvtype uintptr, comm uintptr) int32 {
	const fn = "MPI_Allgather"
	return allgather(fn, sendbuf, int(sendcount), sendtype, recvbuf, int(recvcount), recvtype, comm, false).block(fn)
}

func implAllgather_c(sendbuf unsafe.Pointer, sendcount int64, sendtype uintptr, recvbuf unsafe.Pointer, recvcount int64, recvtype uintptr, comm uintptr) int32 {
	const fn = "MPI_Allgather_c"
	return allgather(fn, sendbuf, int(sendcount), sendtype, recvbuf, int(recvcount), recvtype, comm, false).block(fn)
}

func implIallgather(sendbuf unsafe.Pointer, sendcount int32, sendtype uintptr, recvbuf unsafe.Pointer, recvcount int32, recvtype uintptr, comm uintptr, request unsafe.Pointer) int32 {
	const fn = "MPI_Iallgather"
	return allgather(fn, sendbuf, int(sendcount), sendtype, recvbuf, int(recvcount), recvtype, comm, false).post(fn, request)
}

func implIallgather_c(sendbuf unsafe.Pointer, sendcount int64, sendtype uintptr, recvbuf unsafe.Pointer, recvcount int64, recvtype uintptr, comm uintptr, request unsafe.Pointer) int32 {
	const fn = "MPI_Iallgather_c"
	return allgather(fn, sendbuf, int(sendcount), sendtype, recvbuf, int(recvcount), recvtype, comm, false).post(fn, request)
}

func implNeighbor_allgather(sendbuf unsafe.Pointer, sendcount int32, sendtype uintptr, recvbuf unsafe.Pointer, recvcount int32, recvtype uintptr, comm uintptr) int32 {
	const fn = "MPI_Neighbor_allgather"
	return allgather(fn, sendbuf, int(sendcount), sendtype, recvbuf, int(recvcount), recvtype, comm, true).block(fn)
}

func implNeighbor_allgather_c(sendbuf unsafe.Pointer, sendcount int64, sendtype uintptr, recvbuf unsafe.Pointer, recvcount int64, recvtype uintptr, comm uintptr) int32 {
	const fn = "MPI_Neighbor_allgather_c"
	return allgather(fn, sendbuf, int(sendcount), sendtype, recvbuf, int(recvcount), recvtype, comm, true).block(fn)
}

func implIneighbor_allgather(sendbuf unsafe.Pointer, sendcount int32, sendtype uintptr, recvbuf unsafe.Pointer, recvcount int32, recvtype uintptr, comm uintptr, request unsafe.Pointer) int32 {
	const fn = "MPI_Ineighbor_allgather"
	return allgather(fn, sendbuf, int(sendcount), sendtype, recvbuf, int(recvcount), recvtype, comm, true).post(fn, request)
}

func implIneighbor_allgather_c(sendbuf unsafe.Pointer, sendcount int64, sendtype uintptr, recvbuf unsafe.Pointer, recvcount int64, recvtype uintptr, comm uintptr, request unsafe.Pointer) int32 {
	const fn = "MPI_Ineighbor_allgather_c"
	return allgather(fn, sendbuf, int(sendcount), sendtype, recvbuf, int(recvcount), recvtype, comm, true).post(fn, request)
}

// allgatherv is MPI_Allgatherv and, with neighbor, MPI_Neighbor_allgatherv.
func allgatherv(fn string, sendbuf unsafe.Pointer, sendcount int, sendtype uintptr, recvbuf, recvcounts, displs unsafe.Pointer, recvtype uintptr, comm uintptr, wide, neighbor bool) collOp {
	ce, rc := getComm(fn, comm)
	if ce == nil {
		return failed(rc)
	}
	c := ce.c
	in := peers(c)
	if neighbor {
		var err error
		if in, _, err = degrees(c); err != nil {
			return failed(raiseOn(fn, ce, err))
		}
	}
	s, rc := fixed(fn, ce, sendbuf, sendcount, sendtype, 1)
	if rc != 0 {
		return failed(rc)
	}
	r, cs, ds, rc := vside(fn, ce, recvbuf, recvcounts, displs, recvtype, in, wide)
	if rc != 0 {
		return failed(rc)
	}
	pair(&s, &r)
	if neighbor {
		return collOp{ce: ce,
			run: func() error { return c.NeighborAllgatherv(s.b, sendcount, s.t, r.b, cs, ds, r.t) },
			start: func() (*mpi.Request, error) {
				return c.IneighborAllgatherv(s.b, sendcount, s.t, r.b, cs, ds, r.t)
			},
			init: func(in *mpi.Info) (*mpi.Request, error) {
				return c.NeighborAllgathervInit(s.b, sendcount, s.t, r.b, cs, ds, r.t, in)
			}}
	}
	return collOp{ce: ce,
		run: func() error { return c.Allgatherv(s.b, sendcount, s.t, r.b, cs, ds, r.t) },
		start: func() (*mpi.Request, error) {
			return c.Iallgatherv(s.b, sendcount, s.t, r.b, cs, ds, r.t)
		},
		init: func(in *mpi.Info) (*mpi.Request, error) {
			return c.AllgathervInit(s.b, sendcount, s.t, r.b, cs, ds, r.t, in)
		}}
}

func implAllgatherv(sendbuf unsafe.Pointer, sendcount int32, sendtype uintptr, recvbuf, recvcounts, displs unsafe.Pointer, recvtype uintptr, comm uintptr) int32 {
	const fn = "MPI_Allgatherv"
	return allgatherv(fn, sendbuf, int(sendcount), sendtype, recvbuf, recvcounts, displs, recvtype, comm, false, false).block(fn)
}

func implAllgatherv_c(sendbuf unsafe.Pointer, sendcount int64, sendtype uintptr, recvbuf, recvcounts, displs unsafe.Pointer, recvtype uintptr, comm uintptr) int32 {
	const fn = "MPI_Allgatherv_c"
	return allgatherv(fn, sendbuf, int(sendcount), sendtype, recvbuf, recvcounts, displs, recvtype, comm, true, false).block(fn)
}

func implIallgatherv(sendbuf unsafe.Pointer, sendcount int32, sendtype uintptr, recvbuf, recvcounts, displs unsafe.Pointer, recvtype uintptr, comm uintptr, request unsafe.Pointer) int32 {
	const fn = "MPI_Iallgatherv"
	return allgatherv(fn, sendbuf, int(sendcount), sendtype, recvbuf, recvcounts, displs, recvtype, comm, false, false).post(fn, request)
}

func implIallgatherv_c(sendbuf unsafe.Pointer, sendcount int64, sendtype uintptr, recvbuf, recvcounts, displs unsafe.Pointer, recvtype uintptr, comm uintptr, request unsafe.Pointer) int32 {
	const fn = "MPI_Iallgatherv_c"
	return allgatherv(fn, sendbuf, int(sendcount), sendtype, recvbuf, recvcounts, displs, recvtype, comm, true, false).post(fn, request)
}

func implNeighbor_allgatherv(sendbuf unsafe.Pointer, sendcount int32, sendtype uintptr, recvbuf, recvcounts, displs unsafe.Pointer, recvtype uintptr, comm uintptr) int32 {
	const fn = "MPI_Neighbor_allgatherv"
	return allgatherv(fn, sendbuf, int(sendcount), sendtype, recvbuf, recvcounts, displs, recvtype, comm, false, true).block(fn)
}

func implNeighbor_allgatherv_c(sendbuf unsafe.Pointer, sendcount int64, sendtype uintptr, recvbuf, recvcounts, displs unsafe.Pointer, recvtype uintptr, comm uintptr) int32 {
	const fn = "MPI_Neighbor_allgatherv_c"
	return allgatherv(fn, sendbuf, int(sendcount), sendtype, recvbuf, recvcounts, displs, recvtype, comm, true, true).block(fn)
}

func implIneighbor_allgatherv(sendbuf unsafe.Pointer, sendcount int32, sendtype uintptr, recvbuf, recvcounts, displs unsafe.Pointer, recvtype uintptr, comm uintptr, request unsafe.Pointer) int32 {
	const fn = "MPI_Ineighbor_allgatherv"
	return allgatherv(fn, sendbuf, int(sendcount), sendtype, recvbuf, recvcounts, displs, recvtype, comm, false, true).post(fn, request)
}

func implIneighbor_allgatherv_c(sendbuf unsafe.Pointer, sendcount int64, sendtype uintptr, recvbuf, recvcounts, displs unsafe.Pointer, recvtype uintptr, comm uintptr, request unsafe.Pointer) int32 {
	const fn = "MPI_Ineighbor_allgatherv_c"
	return allgatherv(fn, sendbuf, int(sendcount), sendtype, recvbuf, recvcounts, displs, recvtype, comm, true, true).post(fn, request)
}

// degrees is the number of in- and out-neighbours of the caller in c's
// topology (the blocks of the neighbour collectives).
func degrees(c *mpi.Comm) (in, out int, err error) {
	switch c.Topo() {
	case mpi.Cart:
		d, err := c.CartDim()
		return 2 * d, 2 * d, err
	case mpi.Graph:
		n, err := c.GraphNeighborsCount(c.Rank())
		return n, n, err
	case mpi.DistGraph:
		in, out, _, err := c.DistGraphNeighborsCount()
		return in, out, err
	}
	return 0, 0, classErr(MPI_ERR_TOPOLOGY, "the communicator has no topology (MPI_Cart_create, MPI_Graph_create or MPI_Dist_graph_create)")
}

// alltoall is MPI_Alltoall and, with neighbor, MPI_Neighbor_alltoall.
func alltoall(fn string, sendbuf unsafe.Pointer, sendcount int, sendtype uintptr, recvbuf unsafe.Pointer, recvcount int, recvtype uintptr, comm uintptr, neighbor bool) collOp {
	ce, rc := getComm(fn, comm)
	if ce == nil {
		return failed(rc)
	}
	c := ce.c
	in, out := peers(c), peers(c)
	if neighbor {
		var err error
		if in, out, err = degrees(c); err != nil {
			return failed(raiseOn(fn, ce, err))
		}
	}
	s, rc := fixed(fn, ce, sendbuf, sendcount, sendtype, out)
	if rc != 0 {
		return failed(rc)
	}
	r, rc := fixed(fn, ce, recvbuf, recvcount, recvtype, in)
	if rc != 0 {
		return failed(rc)
	}
	pair(&s, &r)
	if neighbor {
		return collOp{ce: ce,
			run: func() error { return c.NeighborAlltoall(s.b, sendcount, s.t, r.b, recvcount, r.t) },
			start: func() (*mpi.Request, error) {
				return c.IneighborAlltoall(s.b, sendcount, s.t, r.b, recvcount, r.t)
			},
			init: func(in *mpi.Info) (*mpi.Request, error) {
				return c.NeighborAlltoallInit(s.b, sendcount, s.t, r.b, recvcount, r.t, in)
			}}
	}
	return collOp{ce: ce,
		run: func() error { return c.Alltoall(s.b, sendcount, s.t, r.b, recvcount, r.t) },
		start: func() (*mpi.Request, error) {
			return c.Ialltoall(s.b, sendcount, s.t, r.b, recvcount, r.t)
		},
		init: func(in *mpi.Info) (*mpi.Request, error) {
			return c.AlltoallInit(s.b, sendcount, s.t, r.b, recvcount, r.t, in)
		}}
}

func implAlltoall(sendbuf unsafe.Pointer, sendcount int32, sendtype uintptr, recvbuf unsafe.Pointer, recvcount int32, recvtype uintptr, comm uintptr) int32 {
	const fn = "MPI_Alltoall"
	return alltoall(fn, sendbuf, int(sendcount), sendtype, recvbuf, int(recvcount), recvtype, comm, false).block(fn)
}

func implAlltoall_c(sendbuf unsafe.Pointer, sendcount int64, sendtype uintptr, recvbuf unsafe.Pointer, recvcount int64, recvtype uintptr, comm uintptr) int32 {
	const fn = "MPI_Alltoall_c"
	return alltoall(fn, sendbuf, int(sendcount), sendtype, recvbuf, int(recvcount), recvtype, comm, false).block(fn)
}

func implIalltoall(sendbuf unsafe.Pointer, sendcount int32, sendtype uintptr, recvbuf unsafe.Pointer, recvcount int32, recvtype uintptr, comm uintptr, request unsafe.Pointer) int32 {
	const fn = "MPI_Ialltoall"
	return alltoall(fn, sendbuf, int(sendcount), sendtype, recvbuf, int(recvcount), recvtype, comm, false).post(fn, request)
}

func implIalltoall_c(sendbuf unsafe.Pointer, sendcount int64, sendtype uintptr, recvbuf unsafe.Pointer, recvcount int64, recvtype uintptr, comm uintptr, request unsafe.Pointer) int32 {
	const fn = "MPI_Ialltoall_c"
	return alltoall(fn, sendbuf, int(sendcount), sendtype, recvbuf, int(recvcount), recvtype, comm, false).post(fn, request)
}

func implNeighbor_alltoall(sendbuf unsafe.Pointer, sendcount int32, sendtype uintptr, recvbuf unsafe.Pointer, recvcount int32, recvtype uintptr, comm uintptr) int32 {
	const fn = "MPI_Neighbor_alltoall"
	return alltoall(fn, sendbuf, int(sendcount), sendtype, recvbuf, int(recvcount), recvtype, comm, true).block(fn)
}

func implNeighbor_alltoall_c(sendbuf unsafe.Pointer, sendcount int64, sendtype uintptr, recvbuf unsafe.Pointer, recvcount int64, recvtype uintptr, comm uintptr) int32 {
	const fn = "MPI_Neighbor_alltoall_c"
	return alltoall(fn, sendbuf, int(sendcount), sendtype, recvbuf, int(recvcount), recvtype, comm, true).block(fn)
}

func implIneighbor_alltoall(sendbuf unsafe.Pointer, sendcount int32, sendtype uintptr, recvbuf unsafe.Pointer, recvcount int32, recvtype uintptr, comm uintptr, request unsafe.Pointer) int32 {
	const fn = "MPI_Ineighbor_alltoall"
	return alltoall(fn, sendbuf, int(sendcount), sendtype, recvbuf, int(recvcount), recvtype, comm, true).post(fn, request)
}

func implIneighbor_alltoall_c(sendbuf unsafe.Pointer, sendcount int64, sendtype uintptr, recvbuf unsafe.Pointer, recvcount int64, recvtype uintptr, comm uintptr, request unsafe.Pointer) int32 {
	const fn = "MPI_Ineighbor_alltoall_c"
	return alltoall(fn, sendbuf, int(sendcount), sendtype, recvbuf, int(recvcount), recvtype, comm, true).post(fn, request)
}

// alltoallv is MPI_Alltoallv and, with neighbor, MPI_Neighbor_alltoallv.
func alltoallv(fn string, sendbuf, sendcounts, sdispls unsafe.Pointer, sendtype uintptr, recvbuf, recvcounts, rdispls unsafe.Pointer, recvtype uintptr, comm uintptr, wide, neighbor bool) collOp {
	ce, rc := getComm(fn, comm)
	if ce == nil {
		return failed(rc)
	}
	c := ce.c
	in, out := peers(c), peers(c)
	if neighbor {
		var err error
		if in, out, err = degrees(c); err != nil {
			return failed(raiseOn(fn, ce, err))
		}
	}
	s, scs, sds, rc := vside(fn, ce, sendbuf, sendcounts, sdispls, sendtype, out, wide)
	if rc != 0 {
		return failed(rc)
	}
	r, rcs, rds, rc := vside(fn, ce, recvbuf, recvcounts, rdispls, recvtype, in, wide)
	if rc != 0 {
		return failed(rc)
	}
	pair(&s, &r)
	if neighbor {
		return collOp{ce: ce,
			run: func() error { return c.NeighborAlltoallv(s.b, scs, sds, s.t, r.b, rcs, rds, r.t) },
			start: func() (*mpi.Request, error) {
				return c.IneighborAlltoallv(s.b, scs, sds, s.t, r.b, rcs, rds, r.t)
			},
			init: func(in *mpi.Info) (*mpi.Request, error) {
				return c.NeighborAlltoallvInit(s.b, scs, sds, s.t, r.b, rcs, rds, r.t, in)
			}}
	}
	return collOp{ce: ce,
		run: func() error { return c.Alltoallv(s.b, scs, sds, s.t, r.b, rcs, rds, r.t) },
		start: func() (*mpi.Request, error) {
			return c.Ialltoallv(s.b, scs, sds, s.t, r.b, rcs, rds, r.t)
		},
		init: func(in *mpi.Info) (*mpi.Request, error) {
			return c.AlltoallvInit(s.b, scs, sds, s.t, r.b, rcs, rds, r.t, in)
		}}
}

func implAlltoallv(sendbuf, sendcounts, sdispls unsafe.Pointer, sendtype uintptr, recvbuf, recvcounts, rdispls unsafe.Pointer, recvtype uintptr, comm uintptr) int32 {
	const fn = "MPI_Alltoallv"
	return alltoallv(fn, sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm, false, false).block(fn)
}

func implAlltoallv_c(sendbuf, sendcounts, sdispls unsafe.Pointer, sendtype uintptr, recvbuf, recvcounts, rdispls unsafe.Pointer, recvtype uintptr, comm uintptr) int32 {
	const fn = "MPI_Alltoallv_c"
	return alltoallv(fn, sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm, true, false).block(fn)
}

func implIalltoallv(sendbuf, sendcounts, sdispls unsafe.Pointer, sendtype uintptr, recvbuf, recvcounts, rdispls unsafe.Pointer, recvtype uintptr, comm uintptr, request unsafe.Pointer) int32 {
	const fn = "MPI_Ialltoallv"
	return alltoallv(fn, sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm, false, false).post(fn, request)
}

func implIalltoallv_c(sendbuf, sendcounts, sdispls unsafe.Pointer, sendtype uintptr, recvbuf, recvcounts, rdispls unsafe.Pointer, recvtype uintptr, comm uintptr, request unsafe.Pointer) int32 {
	const fn = "MPI_Ialltoallv_c"
	return alltoallv(fn, sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm, true, false).post(fn, request)
}

func implNeighbor_alltoallv(sendbuf, sendcounts, sdispls unsafe.Pointer, sendtype uintptr, recvbuf, recvcounts, rdispls unsafe.Pointer, recvtype uintptr, comm uintptr) int32 {
	const fn = "MPI_Neighbor_alltoallv"
	return alltoallv(fn, sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm, false, true).block(fn)
}

func implNeighbor_alltoallv_c(sendbuf, sendcounts, sdispls unsafe.Pointer, sendtype uintptr, recvbuf, recvcounts, rdispls unsafe.Pointer, recvtype uintptr, comm uintptr) int32 {
	const fn = "MPI_Neighbor_alltoallv_c"
	return alltoallv(fn, sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm, true, true).block(fn)
}

func implIneighbor_alltoallv(sendbuf, sendcounts, sdispls unsafe.Pointer, sendtype uintptr, recvbuf, recvcounts, rdispls unsafe.Pointer, recvtype uintptr, comm uintptr, request unsafe.Pointer) int32 {
	const fn = "MPI_Ineighbor_alltoallv"
	return alltoallv(fn, sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm, false, true).post(fn, request)
}

func implIneighbor_alltoallv_c(sendbuf, sendcounts, sdispls unsafe.Pointer, sendtype uintptr, recvbuf, recvcounts, rdispls unsafe.Pointer, recvtype uintptr, comm uintptr, request unsafe.Pointer) int32 {
	const fn = "MPI_Ineighbor_alltoallv_c"
	return alltoallv(fn, sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm, true, true).post(fn, request)
}

// wside resolves a side of an alltoallw: counts, byte displacements and
// a datatype per peer.
func wside(fn string, ce *commEntry, p, counts, displs, ts unsafe.Pointer, n int, wide, neighbor bool) ([]byte, []int, []int, []*mpi.Datatype, int32) {
	if uintptr(p) == 1 {
		return mpi.InPlace, nil, nil, nil, 0
	}
	cs, rc := ints(fn, ce, counts, n, wide, "counts")
	if rc != 0 {
		return nil, nil, nil, nil, rc
	}
	// The neighbour forms take MPI_Aint displacements even where their
	// counts are ints.
	ds, rc := ints(fn, ce, displs, n, wide || neighbor, "displs")
	if rc != 0 {
		return nil, nil, nil, nil, rc
	}
	tv, rc := types(fn, ce, ts, n, "datatypes")
	if rc != 0 {
		return nil, nil, nil, nil, rc
	}
	b, ds, tv, rc := wbuf(fn, ce, p, cs, ds, tv)
	if rc != 0 {
		return nil, nil, nil, nil, rc
	}
	return b, cs, ds, tv, 0
}

// alltoallw is MPI_Alltoallw and, with neighbor, MPI_Neighbor_alltoallw.
func alltoallw(fn string, sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes unsafe.Pointer, comm uintptr, wide, neighbor bool) collOp {
	ce, rc := getComm(fn, comm)
	if ce == nil {
		return failed(rc)
	}
	c := ce.c
	in, out := peers(c), peers(c)
	if neighbor {
		var err error
		if in, out, err = degrees(c); err != nil {
			return failed(raiseOn(fn, ce, err))
		}
	}
	sb, scs, sds, sts, rc := wside(fn, ce, sendbuf, sendcounts, sdispls, sendtypes, out, wide, neighbor)
	if rc != 0 {
		return failed(rc)
	}
	rb, rcs, rds, rts, rc := wside(fn, ce, recvbuf, recvcounts, rdispls, recvtypes, in, wide, neighbor)
	if rc != 0 {
		return failed(rc)
	}
	if neighbor {
		return collOp{ce: ce,
			run: func() error { return c.NeighborAlltoallw(sb, scs, sds, sts, rb, rcs, rds, rts) },
			start: func() (*mpi.Request, error) {
				return c.IneighborAlltoallw(sb, scs, sds, sts, rb, rcs, rds, rts)
			},
			init: func(in *mpi.Info) (*mpi.Request, error) {
				return c.NeighborAlltoallwInit(sb, scs, sds, sts, rb, rcs, rds, rts, in)
			}}
	}
	return collOp{ce: ce,
		run: func() error { return c.Alltoallw(sb, scs, sds, sts, rb, rcs, rds, rts) },
		start: func() (*mpi.Request, error) {
			return c.Ialltoallw(sb, scs, sds, sts, rb, rcs, rds, rts)
		},
		init: func(in *mpi.Info) (*mpi.Request, error) {
			return c.AlltoallwInit(sb, scs, sds, sts, rb, rcs, rds, rts, in)
		}}
}

func implAlltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes unsafe.Pointer, comm uintptr) int32 {
	const fn = "MPI_Alltoallw"
	return alltoallw(fn, sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm, false, false).block(fn)
}

func implAlltoallw_c(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes unsafe.Pointer, comm uintptr) int32 {
	const fn = "MPI_Alltoallw_c"
	return alltoallw(fn, sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm, true, false).block(fn)
}

func implIalltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes unsafe.Pointer, comm uintptr, request unsafe.Pointer) int32 {
	const fn = "MPI_Ialltoallw"
	return alltoallw(fn, sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm, false, false).post(fn, request)
}

func implIalltoallw_c(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes unsafe.Pointer, comm uintptr, request unsafe.Pointer) int32 {
	const fn = "MPI_Ialltoallw_c"
	return alltoallw(fn, sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm, true, false).post(fn, request)
}

func implNeighbor_alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes unsafe.Pointer, comm uintptr) int32 {
	const fn = "MPI_Neighbor_alltoallw"
	return alltoallw(fn, sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm, false, true).block(fn)
}

func implNeighbor_alltoallw_c(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes unsafe.Pointer, comm uintptr) int32 {
	const fn = "MPI_Neighbor_alltoallw_c"
	return alltoallw(fn, sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm, true, true).block(fn)
}

func implIneighbor_alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes unsafe.Pointer, comm uintptr, request unsafe.Pointer) int32 {
	const fn = "MPI_Ineighbor_alltoallw"
	return alltoallw(fn, sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm, false, true).post(fn, request)
}

func implIneighbor_alltoallw_c(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes unsafe.Pointer, comm uintptr, request unsafe.Pointer) int32 {
	const fn = "MPI_Ineighbor_alltoallw_c"
	return alltoallw(fn, sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm, true, true).post(fn, request)
}
