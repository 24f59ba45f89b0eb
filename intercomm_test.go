package mpi_test

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/mpigo/mpi"
)

// interSetup splits world into group A (world ranks 0..a-1) and group B
// (the rest) and joins them with an intercommunicator. The leaders are
// the last rank of each group when lastLeader, else the first.
type interSetup struct {
	world, local, ic *mpi.Comm
	a, b             int
	inA              bool
}

// remoteWorld is the world rank of remote rank j.
func (s *interSetup) remoteWorld(j int) int {
	if s.inA {
		return s.a + j
	}
	return j
}

func makeInter(world *mpi.Comm, a int, lastLeader bool) (*interSetup, error) {
	s := &interSetup{world: world, a: a, b: world.Size() - a, inA: world.Rank() < a}
	color := 1
	if s.inA {
		color = 0
	}
	local, err := world.Split(color, world.Rank())
	if err != nil {
		return nil, err
	}
	s.local = local
	leader, remoteLeader := 0, a // local rank; world rank of the other leader
	if !s.inA {
		remoteLeader = 0
	}
	if lastLeader {
		leader = local.Size() - 1
		remoteLeader = world.Size() - 1
		if !s.inA {
			remoteLeader = a - 1
		}
	}
	ic, err := mpi.IntercommCreate(local, leader, world, remoteLeader, 77)
	if err != nil {
		return nil, err
	}
	s.ic = ic
	return s, nil
}

func (s *interSetup) free() error {
	if err := s.ic.Free(); err != nil {
		return err
	}
	return s.local.Free()
}

func TestIntercommP2PAndMerge(t *testing.T) {
	matrix(t, 5, func(world *mpi.Comm) error {
		for _, lastLeader := range []bool{false, true} {
			s, err := makeInter(world, 2, lastLeader)
			if err != nil {
				return err
			}
			if err := interP2P(s); err != nil {
				return err
			}
			if err := interMerge(s); err != nil {
				return err
			}
			d, err := s.ic.Dup()
			if err != nil {
				return err
			}
			if err := check(world, d.IsInter() && mpi.CompareComms(d, s.ic) == mpi.Congruent, "Dup of an intercommunicator"); err != nil {
				return err
			}
			old := s.ic
			s.ic = d
			if err := interP2P(s); err != nil {
				return err
			}
			if err := old.Free(); err != nil {
				return err
			}
			if err := s.free(); err != nil {
				return err
			}
		}
		return nil
	})
}

// interP2P: every rank of A sends to every rank of B, which receives with
// AnySource; B answers each A rank through the low-level layer.
func interP2P(s *interSetup) error {
	ic, w := s.ic, s.world
	local, remote := s.a, s.b
	if !s.inA {
		local, remote = s.b, s.a
	}
	rg, err := ic.RemoteGroup()
	if err != nil {
		return err
	}
	if err := check(w, ic.IsInter() && ic.Size() == local && ic.RemoteSize() == remote && rg.Size() == remote &&
		ic.Rank() == ic.Group().Rank() && rg.Rank() == mpi.Undefined && rg.WorldRanks()[0] == s.remoteWorld(0),
		"sizes: local %d remote %d rank %d", ic.Size(), ic.RemoteSize(), ic.Rank()); err != nil {
		return err
	}
	if s.inA {
		for j := 0; j < remote; j++ {
			if err := mpi.Send(ic, 1000*w.Rank()+j, j, 4); err != nil {
				return err
			}
		}
		buf := make([]byte, 8)
		for j := 0; j < remote; j++ {
			st, err := ic.Recv(buf, 1, mpi.Int64, j, 5)
			if err != nil {
				return err
			}
			v := int(binary.LittleEndian.Uint64(buf))
			if err := check(w, st.Source == j && v == 1000*s.remoteWorld(j)+ic.Rank(), "low-level from %d: %d (source %d)", j, v, st.Source); err != nil {
				return err
			}
		}
		return nil
	}
	seen := make([]bool, remote)
	for k := 0; k < remote; k++ {
		if _, err := mpi.Probe(ic, mpi.AnySource, 4); err != nil {
			return err
		}
		v, st, err := mpi.Recv[int](ic, mpi.AnySource, mpi.AnyTag)
		if err != nil {
			return err
		}
		if err := check(w, st.Source >= 0 && st.Source < remote && !seen[st.Source] && st.Tag == 4 &&
			v == 1000*s.remoteWorld(st.Source)+ic.Rank(), "AnySource got %d from %d", v, st.Source); err != nil {
			return err
		}
		seen[st.Source] = true
	}
	buf := make([]byte, 8)
	for j := 0; j < remote; j++ {
		binary.LittleEndian.PutUint64(buf, uint64(1000*w.Rank()+j))
		if err := ic.Send(buf, 1, mpi.Int64, j, 5); err != nil {
			return err
		}
	}
	// Ranks outside the remote group are refused.
	if err := mpi.Send(ic, 1, remote, 0); !errors.Is(err, mpi.ErrRank) {
		return check(w, false, "send to remote rank %d: %v", remote, err)
	}
	return nil
}

// interMerge checks the order IntercommMerge gives for each pair of flags.
func interMerge(s *interSetup) error {
	for _, hs := range [][2]bool{{false, true}, {true, false}, {false, false}, {true, true}} {
		high := hs[0]
		if !s.inA {
			high = hs[1]
		}
		m, err := s.ic.IntercommMerge(high)
		if err != nil {
			return err
		}
		got, err := membersOf(s.world, m)
		if err != nil {
			return err
		}
		var want []int
		aFirst := !(hs[0] && !hs[1]) // A first unless only A is high; A's leader has the lower world rank
		for r := 0; r < s.world.Size(); r++ {
			if (r < s.a) == aFirst {
				want = append(want, r)
			}
		}
		for r := 0; r < s.world.Size(); r++ {
			if (r < s.a) != aFirst {
				want = append(want, r)
			}
		}
		if err := check(s.world, slices.Equal(got, want) && !m.IsInter(), "merge(%v): %v, want %v", hs, got, want); err != nil {
			return err
		}
		if err := m.Free(); err != nil {
			return err
		}
	}
	return nil
}

// interColls runs the intercommunicator collectives and checks them.
func interColls(s *interSetup) error {
	ic, w := s.ic, s.world
	remote := ic.RemoteSize()
	me := w.Rank()
	fail := func(format string, args ...any) error { return check(w, false, format, args...) }
	sumRemote := 0
	var remoteVals []int
	for j := 0; j < remote; j++ {
		sumRemote += s.remoteWorld(j) + 1
		remoteVals = append(remoteVals, s.remoteWorld(j)+1)
	}
	// rootIn returns the root argument for a root at rank r of group A
	// (inA) or B.
	rootIn := func(rootInA bool, r int) (int, bool) {
		switch {
		case s.inA != rootInA:
			return r, false
		case ic.Rank() == r:
			return mpi.Root, true
		}
		return mpi.ProcNull, false
	}
	if err := mpi.Barrier(ic); err != nil {
		return err
	}
	for _, rootInA := range []bool{true, false} {
		rr := 0
		if rootInA {
			rr = s.a - 1
		}
		root, amRoot := rootIn(rootInA, rr)
		other := s.inA != rootInA
		// Bcast
		v, err := mpi.Bcast(ic, fmt.Sprintf("from %d", me), root)
		if err != nil {
			return err
		}
		rootWorld := rr
		if !rootInA {
			rootWorld = s.a + rr
		}
		if other && v != fmt.Sprintf("from %d", rootWorld) || amRoot && v != fmt.Sprintf("from %d", me) || root == mpi.ProcNull && v != "" {
			return fail("Bcast root %d: %q", root, v)
		}
		// Gather
		g, err := mpi.Gather(ic, me+1, root)
		if err != nil {
			return err
		}
		if amRoot && !slices.Equal(g, remoteVals) || !amRoot && g != nil {
			return fail("Gather root %d: %v", root, g)
		}
		// Scatter
		var vs []int
		if amRoot {
			for j := 0; j < remote; j++ {
				vs = append(vs, 500+s.remoteWorld(j))
			}
		}
		x, err := mpi.Scatter(ic, vs, root)
		if err != nil {
			return err
		}
		if other && x != 500+me || !other && x != 0 {
			return fail("Scatter root %d: %d", root, x)
		}
		// Reduce, commutative and not (concatenation shows the order)
		r, err := mpi.Reduce(ic, me+1, mpi.Sum[int](), root)
		if err != nil {
			return err
		}
		if amRoot && r != sumRemote || !amRoot && r != 0 {
			return fail("Reduce root %d: %d", root, r)
		}
		cat := mpi.NewOp(func(a, b string) string { return a + b }, false)
		str, err := mpi.Reduce(ic, fmt.Sprint(me), cat, root)
		if err != nil {
			return err
		}
		var want strings.Builder
		for j := 0; j < remote; j++ {
			fmt.Fprint(&want, s.remoteWorld(j))
		}
		if amRoot && str != want.String() {
			return fail("Reduce(concat) root %d: %q, want %q", root, str, want.String())
		}
		rs, err := mpi.ReduceSlice(ic, []float64{float64(me), 1}, mpi.Sum[float64](), root)
		if err != nil {
			return err
		}
		if amRoot && (len(rs) != 2 || rs[1] != float64(remote)) {
			return fail("ReduceSlice root %d: %v", root, rs)
		}
		into := make([]float64, 2)
		if err := mpi.ReduceSliceInto(ic, []float64{float64(me), 1}, into, mpi.Sum[float64](), root); err != nil {
			return err
		}
		if amRoot && !slices.Equal(into, rs) || !amRoot && !slices.Equal(into, []float64{0, 0}) {
			return fail("ReduceSliceInto root %d: %v, want %v at the root and nothing written elsewhere", root, into, rs)
		}
		// Low-level rooted calls.
		buf := make([]byte, 8*remote)
		one := make([]byte, 8)
		binary.LittleEndian.PutUint64(one, uint64(me+1))
		if err := ic.Gather(one, 1, mpi.Int64, buf, 1, mpi.Int64, root); err != nil {
			return err
		}
		if amRoot {
			for j := 0; j < remote; j++ {
				if got := int(binary.LittleEndian.Uint64(buf[8*j:])); got != remoteVals[j] {
					return fail("low-level Gather block %d: %d", j, got)
				}
			}
		}
		bc := make([]byte, 8)
		if amRoot {
			binary.LittleEndian.PutUint64(bc, 4242)
		}
		if err := ic.Bcast(bc, 1, mpi.Int64, root); err != nil {
			return err
		}
		if other && binary.LittleEndian.Uint64(bc) != 4242 {
			return fail("low-level Bcast")
		}
		if amRoot {
			for j := 0; j < remote; j++ {
				binary.LittleEndian.PutUint64(buf[8*j:], uint64(700+j))
			}
		}
		rb := make([]byte, 8)
		if err := ic.Scatter(buf, 1, mpi.Int64, rb, 1, mpi.Int64, root); err != nil {
			return err
		}
		if other && binary.LittleEndian.Uint64(rb) != uint64(700+ic.Rank()) {
			return fail("low-level Scatter: %d", binary.LittleEndian.Uint64(rb))
		}
		red := make([]byte, 8)
		if err := ic.Reduce(one, red, 1, mpi.Int64, mpi.OpSum, root); err != nil {
			return err
		}
		if amRoot && int(binary.LittleEndian.Uint64(red)) != sumRemote {
			return fail("low-level Reduce: %d", binary.LittleEndian.Uint64(red))
		}
	}
	// Allgather, Alltoall, Allreduce
	ag, err := mpi.Allgather(ic, me+1)
	if err != nil {
		return err
	}
	if !slices.Equal(ag, remoteVals) {
		return fail("Allgather: %v, want %v", ag, remoteVals)
	}
	vs := make([]int, remote)
	for j := range vs {
		vs[j] = 100*me + j
	}
	at, err := mpi.Alltoall(ic, vs)
	if err != nil {
		return err
	}
	for j, v := range at {
		if v != 100*s.remoteWorld(j)+ic.Rank() {
			return fail("Alltoall from %d: %d", j, v)
		}
	}
	ar, err := mpi.Allreduce(ic, me+1, mpi.Sum[int]())
	if err != nil || ar != sumRemote {
		return fail("Allreduce: %d %v, want %d", ar, err, sumRemote)
	}
	ars, err := mpi.AllreduceSlice(ic, []int{me + 1, 1}, mpi.Sum[int]())
	if err != nil || !slices.Equal(ars, []int{sumRemote, remote}) {
		return fail("AllreduceSlice: %v %v", ars, err)
	}
	one := make([]byte, 8)
	binary.LittleEndian.PutUint64(one, uint64(me+1))
	all := make([]byte, 8*remote)
	if err := ic.Allgather(one, 1, mpi.Int64, all, 1, mpi.Int64); err != nil {
		return err
	}
	send := make([]byte, 8*remote)
	for j := 0; j < remote; j++ {
		if got := int(binary.LittleEndian.Uint64(all[8*j:])); got != remoteVals[j] {
			return fail("low-level Allgather block %d: %d", j, got)
		}
		binary.LittleEndian.PutUint64(send[8*j:], uint64(100*me+j))
	}
	recv := make([]byte, 8*remote)
	if err := ic.Alltoall(send, 1, mpi.Int64, recv, 1, mpi.Int64); err != nil {
		return err
	}
	for j := 0; j < remote; j++ {
		if got := int(binary.LittleEndian.Uint64(recv[8*j:])); got != 100*s.remoteWorld(j)+ic.Rank() {
			return fail("low-level Alltoall from %d: %d", j, got)
		}
	}
	red := make([]byte, 8)
	if err := ic.Allreduce(one, red, 1, mpi.Int64, mpi.OpSum); err != nil {
		return err
	}
	if int(binary.LittleEndian.Uint64(red)) != sumRemote {
		return fail("low-level Allreduce: %d", binary.LittleEndian.Uint64(red))
	}
	// Non-blocking forms run through the same code.
	f, err := mpi.Iallreduce(ic, me+1, mpi.Sum[int]())
	if err != nil {
		return err
	}
	req, err := ic.Ibarrier()
	if err != nil {
		return err
	}
	if v, err := f.Wait(); err != nil || v != sumRemote {
		return fail("Iallreduce: %d %v", v, err)
	}
	if _, err := req.Wait(); err != nil {
		return err
	}
	// Intracommunicator-only calls are refused.
	if _, err := mpi.Scan(ic, 1, mpi.Sum[int]()); !errors.Is(err, mpi.ErrComm) {
		return fail("Scan on an intercommunicator: %v", err)
	}
	if _, err := mpi.Bcast(ic, 1, 99); !errors.Is(err, mpi.ErrRoot) {
		return fail("Bcast with a bad root: %v", err)
	}
	return mpi.Barrier(ic)
}

func TestIntercommCollectivesMatrix(t *testing.T) {
	matrix(t, 5, func(world *mpi.Comm) error {
		s, err := makeInter(world, 2, true)
		if err != nil {
			return err
		}
		if err := interColls(s); err != nil {
			return err
		}
		if err := interVColls(s); err != nil {
			return err
		}
		if err := interReduceScatter(s); err != nil {
			return err
		}
		return s.free()
	})
}

// TestIntercommCollectivesSizes runs every pair of group sizes from 1 to 4.
func TestIntercommCollectivesSizes(t *testing.T) {
	for a := 1; a <= 4; a++ {
		for b := 1; b <= 4; b++ {
			t.Run(fmt.Sprintf("%dx%d", a, b), func(t *testing.T) {
				err := mpi.Run(a+b, func(world *mpi.Comm) error {
					s, err := makeInter(world, a, (a+b)%2 == 0)
					if err != nil {
						return err
					}
					if err := interColls(s); err != nil {
						return err
					}
					if err := interVColls(s); err != nil {
						return err
					}
					if err := interReduceScatter(s); err != nil {
						return err
					}
					if err := interSplit(s); err != nil {
						return err
					}
					if err := interCreate(s); err != nil {
						return err
					}
					if err := interMerge(s); err != nil {
						return err
					}
					return s.free()
				})
				if err != nil {
					t.Fatal(err)
				}
			})
		}
	}
}

func TestIntercommCreateErrors(t *testing.T) {
	err := mpi.Run(3, func(world *mpi.Comm) error {
		// Overlapping groups: both "groups" are the whole world.
		_, err := mpi.IntercommCreate(world, 0, world, 0, 1)
		if !errors.Is(err, mpi.ErrRank) && world.Rank() == 0 {
			return check(world, false, "leader its own remote leader: %v", err)
		}
		if _, err := mpi.IntercommCreate(world, 5, world, 0, 1); !errors.Is(err, mpi.ErrRank) {
			return check(world, false, "bad local leader: %v", err)
		}
		if _, err := world.RemoteGroup(); !errors.Is(err, mpi.ErrComm) {
			return check(world, false, "RemoteGroup of an intracommunicator: %v", err)
		}
		if _, err := world.IntercommMerge(false); !errors.Is(err, mpi.ErrComm) {
			return check(world, false, "merging an intracommunicator: %v", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// interVColls checks the low-level v and w forms on an intercommunicator:
// remote rank j's block has j+1 elements, laid out in reverse order.
func interVColls(s *interSetup) error {
	ic, w := s.ic, s.world
	remote, me := ic.RemoteSize(), w.Rank()
	fail := func(format string, args ...any) error { return check(w, false, format, args...) }
	counts, displs := make([]int, remote), make([]int, remote)
	total := 0
	for j := remote - 1; j >= 0; j-- {
		counts[j], displs[j] = j+1, total
		total += j + 1
	}
	mine := func(n, v int) []byte {
		b := make([]byte, 8*n)
		for i := 0; i < n; i++ {
			binary.LittleEndian.PutUint64(b[8*i:], uint64(v))
		}
		return b
	}
	// checkBlocks: remote rank j's block holds val(j), j+1 times.
	checkBlocks := func(what string, buf []byte, val func(j int) int) error {
		for j := 0; j < remote; j++ {
			for i := 0; i < j+1; i++ {
				if got := int(binary.LittleEndian.Uint64(buf[8*(displs[j]+i):])); got != val(j) {
					return fail("%s: block %d element %d = %d, want %d", what, j, i, got, val(j))
				}
			}
		}
		return nil
	}
	// Allgatherv: each rank sends (its rank in its group + 1) copies.
	buf := make([]byte, 8*total)
	if err := ic.Allgatherv(mine(ic.Rank()+1, me), ic.Rank()+1, mpi.Int64, buf, counts, displs, mpi.Int64); err != nil {
		return err
	}
	if err := checkBlocks("Allgatherv", buf, s.remoteWorld); err != nil {
		return err
	}
	// Gatherv and Scatterv rooted at rank 0 of group B.
	root, amRoot := 0, false
	if !s.inA {
		root = mpi.ProcNull
		if ic.Rank() == 0 {
			root, amRoot = mpi.Root, true
		}
	}
	clear(buf)
	if err := ic.Gatherv(mine(ic.Rank()+1, me), ic.Rank()+1, mpi.Int64, buf, counts, displs, mpi.Int64, root); err != nil {
		return err
	}
	if amRoot {
		if err := checkBlocks("Gatherv", buf, s.remoteWorld); err != nil {
			return err
		}
		for j := 0; j < remote; j++ {
			copy(buf[8*displs[j]:], mine(j+1, 50+j))
		}
	}
	rb := make([]byte, 8*(ic.Rank()+1))
	if err := ic.Scatterv(buf, counts, displs, mpi.Int64, rb, ic.Rank()+1, mpi.Int64, root); err != nil {
		return err
	}
	if s.inA && string(rb) != string(mine(ic.Rank()+1, 50+ic.Rank())) {
		return fail("Scatterv got %v", rb)
	}
	// Alltoallv: to remote rank j send j+1 copies of 100*me+j; receive
	// (my rank + 1) copies from each.
	sbuf := make([]byte, 8*total)
	for j := 0; j < remote; j++ {
		copy(sbuf[8*displs[j]:], mine(j+1, 100*me+j))
	}
	rcounts, rdispls := make([]int, remote), make([]int, remote)
	for j := range rcounts {
		rcounts[j], rdispls[j] = ic.Rank()+1, j*(ic.Rank()+1)
	}
	rbuf := make([]byte, 8*remote*(ic.Rank()+1))
	if err := ic.Alltoallv(sbuf, counts, displs, mpi.Int64, rbuf, rcounts, rdispls, mpi.Int64); err != nil {
		return err
	}
	for j := 0; j < remote; j++ {
		if got := int(binary.LittleEndian.Uint64(rbuf[8*rdispls[j]:])); got != 100*s.remoteWorld(j)+ic.Rank() {
			return fail("Alltoallv from %d: %d", j, got)
		}
	}
	return nil
}

// interSplit splits the intercommunicator by the parity of world ranks,
// ordering by descending world rank.
func interSplit(s *interSetup) error {
	w := s.world
	color := w.Rank() % 2
	ns, err := s.ic.Split(color, -w.Rank())
	if err != nil {
		return err
	}
	var local, remote []int
	for r := w.Size() - 1; r >= 0; r-- {
		if r%2 == color {
			if (r < s.a) == s.inA {
				local = append(local, r)
			} else {
				remote = append(remote, r)
			}
		}
	}
	if len(remote) == 0 {
		return check(w, ns == nil, "Split with no remote members gave a communicator")
	}
	if ns == nil || !ns.IsInter() {
		return check(w, false, "Split gave %v", ns)
	}
	rg, _ := ns.RemoteGroup()
	if !slices.Equal(ns.Group().WorldRanks(), local) || !slices.Equal(rg.WorldRanks(), remote) || local[ns.Rank()] != w.Rank() {
		return check(w, false, "Split: local %v remote %v, want %v %v", ns.Group().WorldRanks(), rg.WorldRanks(), local, remote)
	}
	sum, err := mpi.Allreduce(ns, w.Rank(), mpi.Sum[int]())
	want := 0
	for _, r := range remote {
		want += r
	}
	if err != nil || sum != want {
		return check(w, false, "Allreduce on the split: %d %v, want %d", sum, err, want)
	}
	return ns.Free()
}

// subsetFor is the subgroup (world ranks) each group passes to Create: A
// its members in reverse without its local rank 1, B its first member.
func subsetFor(s *interSetup, groupA bool) []int {
	if !groupA {
		return []int{s.a}
	}
	var out []int
	for i := s.a - 1; i >= 0; i-- {
		if i != 1 {
			out = append(out, i)
		}
	}
	return out
}

// interCreate checks Create on an intercommunicator.
func interCreate(s *interSetup) error {
	w := s.world
	mine, theirs := subsetFor(s, s.inA), subsetFor(s, !s.inA)
	lg := s.ic.Group()
	var idx []int
	for _, wr := range mine {
		idx = append(idx, slices.Index(lg.WorldRanks(), wr))
	}
	g, err := lg.Incl(idx)
	if err != nil {
		return err
	}
	nc, err := s.ic.Create(g)
	if err != nil {
		return err
	}
	if !slices.Contains(mine, w.Rank()) {
		return check(w, nc == nil, "Create: a rank outside its subgroup got a communicator")
	}
	if nc == nil || !nc.IsInter() {
		return check(w, false, "Create gave %v", nc)
	}
	rg, _ := nc.RemoteGroup()
	if !slices.Equal(nc.Group().WorldRanks(), mine) || !slices.Equal(rg.WorldRanks(), theirs) {
		return check(w, false, "Create: local %v remote %v, want %v %v", nc.Group().WorldRanks(), rg.WorldRanks(), mine, theirs)
	}
	got, err := mpi.Allgather(nc, w.Rank())
	if err != nil || !slices.Equal(got, theirs) {
		return check(w, false, "Allgather on the created intercommunicator: %v %v", got, err)
	}
	return nc.Free()
}

// TestIntercommZeroAllocs: point-to-point across an intercommunicator
// costs what it costs on an intracommunicator: nothing allocated per
// message for plain data.
func TestIntercommZeroAllocs(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("allocation counts (not meaningful under the race detector)")
	}
	const runs = 200
	var got float64
	err := mpi.Run(2, func(world *mpi.Comm) error {
		local, err := world.Split(world.Rank(), 0)
		if err != nil {
			return err
		}
		ic, err := mpi.IntercommCreate(local, 0, world, 1-world.Rank(), 3)
		if err != nil {
			return err
		}
		xs := make([]float64, 16)
		if world.Rank() == 1 {
			for range runs + 1 {
				if _, err := mpi.RecvInto(ic, xs, 0, 0); err != nil {
					return err
				}
				if err := mpi.Send(ic, xs, 0, 1); err != nil {
					return err
				}
			}
			return nil
		}
		got = testing.AllocsPerRun(runs, func() {
			if e := mpi.Send(ic, xs, 0, 0); e != nil && err == nil {
				err = e
			}
			if _, e := mpi.RecvInto(ic, xs, 0, 1); e != nil && err == nil {
				err = e
			}
		})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if got != 0 {
		t.Fatalf("%v allocations per intercommunicator round trip, want 0", got)
	}
}

// interReduceScatter checks ReduceScatter and ReduceScatterBlock (and a
// non-blocking form) on an intercommunicator: each group gets the other
// group's reduction, scattered by its own counts.
func interReduceScatter(s *interSetup) error {
	const total = 12 // elements; the same in both groups, as MPI requires
	lsize, lrank := s.ic.Size(), s.ic.Rank()
	groupBase := func(inA bool) int64 {
		if inA {
			return 1000
		}
		return 2000
	}
	// Rank r of a group contributes base + 10*r + j at index j.
	reduced := func(inA bool, size int) []int64 {
		out := make([]int64, total)
		for r := 0; r < size; r++ {
			for j := range out {
				out[j] += groupBase(inA) + int64(10*r+j)
			}
		}
		return out
	}
	mine := make([]int64, total)
	for j := range mine {
		mine[j] = groupBase(s.inA) + int64(10*lrank+j)
	}
	remoteSize := s.b
	if !s.inA {
		remoteSize = s.a
	}
	want := reduced(!s.inA, remoteSize)
	// Uneven counts: rank i gets a block of its own size; the rest to rank 0.
	counts := make([]int, lsize)
	left := total
	for i := 1; i < lsize; i++ {
		counts[i] = min(i, left)
		left -= counts[i]
	}
	counts[0] = left
	off := 0
	for i := 0; i < lrank; i++ {
		off += counts[i]
	}
	got := make([]int64, counts[lrank])
	if err := s.ic.ReduceScatter(mpi.AsBytes(mine), mpi.AsBytes(got), counts, mpi.Int64, mpi.OpSum); err != nil {
		return err
	}
	if !slices.Equal(got, want[off:off+counts[lrank]]) {
		return fmt.Errorf("intercomm ReduceScatter on world rank %d: %v, want %v", s.world.Rank(), got, want[off:off+counts[lrank]])
	}
	if total%lsize == 0 {
		blk := total / lsize
		got := make([]int64, blk)
		req, err := s.ic.IreduceScatterBlock(mpi.AsBytes(mine), mpi.AsBytes(got), blk, mpi.Int64, mpi.OpSum)
		if err != nil {
			return err
		}
		if _, err := req.Wait(); err != nil {
			return err
		}
		if !slices.Equal(got, want[lrank*blk:(lrank+1)*blk]) {
			return fmt.Errorf("intercomm IreduceScatterBlock on world rank %d: %v, want %v", s.world.Rank(), got, want[lrank*blk:(lrank+1)*blk])
		}
	}
	if err := s.ic.ReduceScatter(mpi.InPlace, mpi.AsBytes(mine), counts, mpi.Int64, mpi.OpSum); !errors.Is(err, mpi.ErrArg) {
		return fmt.Errorf("intercomm ReduceScatter with InPlace: %v, want ErrArg", err)
	}
	return nil
}
