package main

import (
	"unsafe"

	"github.com/mpigo/mpi"
)

// raw is the memory of s.
func raw[E any](s []E) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), len(s)*int(unsafe.Sizeof(s[0])))
}

// more runs the collectives of hetero_collv.go, the intercommunicator ones and the
// one-sided calls.
func more(w *mpi.Comm, say func(string, ...any)) error {
	r, n := w.Rank(), w.Size()

	// Typed reduce-scatters, ScanSlice, Into forms, non-blocking.
	v := make([]int64, n)
	for i := range v {
		v[i] = int64(r+1)<<(8*i) | int64(i)<<40
	}
	rsb, err := mpi.ReduceScatterBlock(w, v, mpi.Sum[int64]())
	if err != nil {
		return err
	}
	ss, err := mpi.ScanSlice(w, []float64{float64(r) + 0.5, -1e10}, mpi.Sum[float64]())
	if err != nil {
		return err
	}
	agi := make([]int32, 2*n)
	if err := mpi.AllgatherInto(w, []int32{int32(r) << 20, -int32(r)}, agi); err != nil {
		return err
	}
	a2i := make([]uint64, n)
	send := make([]uint64, n)
	for i := range send {
		send[i] = uint64(r)<<48 | uint64(i)
	}
	if err := mpi.AlltoallInto(w, send, a2i); err != nil {
		return err
	}
	say("ReduceScatterBlock %v ScanSlice %v AllgatherInto %v AlltoallInto %v", rsb, ss, agi, a2i)
	f, err := mpi.IallreduceSlice(w, []float32{float32(r) * 1.5, 1e30}, mpi.Max[float32]())
	if err != nil {
		return err
	}
	g, err := mpi.IreduceScatter(w, v, fill(n, 1), mpi.Max[int64]())
	if err != nil {
		return err
	}
	fv, err := f.Wait()
	if err != nil {
		return err
	}
	gv, err := g.Wait()
	if err != nil {
		return err
	}
	say("IallreduceSlice %v IreduceScatter %v", fv, gv)

	// Low level: v and w forms, reduce-scatter, scans.
	counts, displs := make([]int, n), make([]int, n)
	total := 0
	for i := range n {
		counts[i], displs[i] = i+1, total
		total += i + 1
	}
	mine := make([]float64, r+1)
	for i := range mine {
		mine[i] = float64(r*10+i) + 0.125
	}
	agv := make([]float64, total)
	if err := w.Allgatherv(raw(mine), r+1, mpi.Float64, raw(agv), counts, displs, mpi.Float64); err != nil {
		return err
	}
	gv2 := make([]float64, total)
	if err := w.Gatherv(raw(mine), r+1, mpi.Float64, raw(gv2), counts, displs, mpi.Float64, n-1); err != nil {
		return err
	}
	sv := make([]float64, r+1)
	if err := w.Scatterv(raw(agv), counts, displs, mpi.Float64, raw(sv), r+1, mpi.Float64, 0); err != nil {
		return err
	}
	say("Allgatherv %v Gatherv %v Scatterv %v", agv, gv2, sv)
	a2v := make([]int32, n)
	sd := make([]int, n)
	for i := range sd {
		sd[i] = n - 1 - i
	}
	s32 := make([]int32, n)
	for i := range s32 {
		s32[i] = int32(r)<<24 | int32(i)
	}
	if err := w.Alltoallv(raw(s32), fill(n, 1), sd, mpi.Int32, raw(a2v), fill(n, 1), seq(n), mpi.Int32); err != nil {
		return err
	}
	rsl := make([]int64, 1)
	if err := w.ReduceScatterBlock(raw(v), raw(rsl), 1, mpi.Int64, mpi.OpSum); err != nil {
		return err
	}
	lsc := make([]int64, 2)
	if err := w.Scan(raw([]int64{int64(r+1) << 33, -1}), raw(lsc), 2, mpi.Int64, mpi.OpSum); err != nil {
		return err
	}
	vec, err := mpi.NewVector(2, 1, 2, mpi.Int32)
	if err == nil {
		err = vec.Commit()
	}
	if err != nil {
		return err
	}
	ga := make([]int32, 2*n)
	if err := w.Allgather(raw([]int32{int32(r) << 16, 0, -int32(r), 0}), 1, vec, raw(ga), 2, mpi.Int32); err != nil {
		return err
	}
	say("Alltoallv %v ReduceScatterBlock %v Scan %v Allgather vector %v", a2v, rsl, lsc, ga)

	// Neighbours on a ring.
	ring, err := w.CartCreate([]int{n}, []bool{true}, false)
	if err != nil {
		return err
	}
	nb := make([]int64, 2)
	if err := ring.NeighborAllgather(raw([]int64{int64(r+1) << 36}), 1, mpi.Int64, raw(nb), 1, mpi.Int64); err != nil {
		return err
	}
	nt, err := mpi.NeighborAlltoall(ring, []float64{float64(r) - 0.5, float64(r) + 0.5})
	if err != nil {
		return err
	}
	say("NeighborAllgather %v NeighborAlltoall %v", nb, nt)
	if err := ring.Free(); err != nil {
		return err
	}

	// An intercommunicator between rank 0 and the others.
	color := min(r, 1)
	local, err := w.Split(color, r)
	if err != nil {
		return err
	}
	remote := 1
	if color == 1 {
		remote = 0
	}
	ic, err := mpi.IntercommCreate(local, 0, w, remote, 5)
	if err != nil {
		return err
	}
	ia, err := mpi.AllreduceSlice(ic, []int64{int64(r+1) << 34, int64(r)}, mpi.Sum[int64]())
	if err != nil {
		return err
	}
	ig, err := mpi.Allgather(ic, plainOf(r))
	if err != nil {
		return err
	}
	ib := make([]float64, 2)
	if err := ic.Allreduce(raw([]float64{float64(r) * 0.75, 3}), raw(ib), 2, mpi.Float64, mpi.OpSum); err != nil {
		return err
	}
	say("inter AllreduceSlice %v Allgather %+v low Allreduce %v", ia, ig, ib)
	if err := ic.Free(); err != nil {
		return err
	}
	if err := local.Free(); err != nil {
		return err
	}

	// One-sided: typed and low-level, every rank towards every other.
	// Slots: 0..n-1 Put by rank i, n+2i and n+2i+1 PutBuf by rank i,
	// 3n sums, 3n+1 fetch-and-op and a user operation at rank 0.
	v64, err := mpi.NewVector(2, 1, 2, mpi.Int64)
	if err == nil {
		err = v64.Commit()
	}
	if err != nil {
		return err
	}
	win, err := mpi.NewWindow[int64](w, 3*n+2)
	if err != nil {
		return err
	}
	if err := win.Fence(); err != nil {
		return err
	}
	for t := range n {
		if err := win.Put([]int64{int64(r+1)<<40 | int64(t)}, t, r); err != nil {
			return err
		}
		if err := win.Accumulate([]int64{int64(r+1) << 20}, t, 3*n, mpi.Sum[int64]()); err != nil {
			return err
		}
		if err := win.PutBuf(raw([]int64{int64(r) << 36, -1, -int64(t) << 12, -1}), 1, v64, t, n+2*r, 2, mpi.Int64); err != nil {
			return err
		}
	}
	if err := win.Fence(); err != nil {
		return err
	}
	got := make([]int64, 3*n+2)
	if err := win.Get(got, (r+1)%n, 0); err != nil {
		return err
	}
	if err := win.Fence(); err != nil {
		return err
	}
	if err := win.Lock(0, true); err != nil {
		return err
	}
	old, err := win.FetchAndOp(int64(r+1)<<33, 0, 3*n+1, mpi.Sum[int64]())
	if err != nil {
		return err
	}
	if err := win.Accumulate([]int64{1 << (8 * r)}, 0, 3*n+1, mpi.NewOp(func(a, b int64) int64 { return a ^ b }, true)); err != nil {
		return err
	}
	if err := win.Unlock(0); err != nil {
		return err
	}
	if err := win.Fence(); err != nil {
		return err
	}
	if r == 0 {
		say("window Get %v local %v", got, win.Local())
	} else {
		say("window Get %v", got)
	}
	_ = old // its value depends on the order the ranks come in
	return win.Free()
}

func fill(n, v int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = v
	}
	return s
}

func seq(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}
