package mpi_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/mpigo/mpi"
)

// Neighbourhood collectives, modelled on MPICH's test/mpi/topo
// neighb_coll.c and the Cartesian cases of the MPI-3.1 errata (a periodic
// dimension of size 1 or 2, where one rank is both neighbours).

var testGrids = []struct {
	dims    []int
	periods []bool
}{
	{[]int{2, 2}, []bool{true, false}},
	{[]int{2, 2}, []bool{true, true}},            // size 2 periodic: both neighbours the same rank
	{[]int{4, 1}, []bool{true, true}},            // size 1 periodic: the rank itself, twice
	{[]int{4}, []bool{false}},                    // ProcNull at both ends
	{[]int{1, 4, 1}, []bool{false, true, true}},  // ProcNull twice, self twice
	{[]int{2, 1, 2}, []bool{false, true, false}}, // everything at once
	manyDims(), // more slots than a call has tags
}

// manyDims is a 2x2 grid with 130 more dimensions of size 1, alternately
// periodic (the rank itself, twice) and not (ProcNull, twice): 264 slots,
// more than the 256 tags a call takes, so that tags repeat.
func manyDims() (g struct {
	dims    []int
	periods []bool
}) {
	g.dims, g.periods = []int{2, 2}, []bool{true, false}
	for d := range 130 {
		g.dims, g.periods = append(g.dims, 1), append(g.periods, d%2 == 0)
	}
	return g
}

// cartNeighbors returns the in/out neighbours of a Cartesian rank in
// MPI's order.
func cartNeighbors(c *mpi.Comm) ([]int, error) {
	nd, err := c.CartDim()
	if err != nil {
		return nil, err
	}
	var nb []int
	for d := range nd {
		s, t, err := c.CartShift(d, 1)
		if err != nil {
			return nil, err
		}
		nb = append(nb, s, t)
	}
	return nb, nil
}

// partner returns the slot of the sender whose message lands in slot i:
// the lower neighbour's upward slot, the upper one's downward slot.
func partner(i int) int { return i ^ 1 }

func TestNeighborCart(t *testing.T) {
	matrix(t, 4, func(world *mpi.Comm) error {
		for _, g := range testGrids {
			cart, err := world.CartCreate(g.dims, g.periods, false)
			if err != nil {
				return err
			}
			if err := neighborCart(cart); err != nil {
				return fmt.Errorf("grid %v periods %v: %w", g.dims, g.periods, err)
			}
			if err := cart.Free(); err != nil {
				return err
			}
		}
		return nil
	})
}

func neighborCart(cart *mpi.Comm) error {
	r := cart.Rank()
	nb, err := cartNeighbors(cart)
	if err != nil {
		return err
	}
	n := len(nb)
	// Typed alltoall: slot j carries (sender, j).
	vs := make([][2]int, n)
	for j := range vs {
		vs[j] = [2]int{r, j}
	}
	got, err := mpi.NeighborAlltoall(cart, vs)
	if err != nil {
		return err
	}
	for i, q := range nb {
		want := [2]int{}
		if q != mpi.ProcNull {
			want = [2]int{q, partner(i)}
		}
		if got[i] != want {
			return check(cart, false, "typed alltoall slot %d: %v, want %v", i, got[i], want)
		}
	}
	// Typed allgather of a value that is encoded.
	all, err := mpi.NeighborAllgather(cart, map[string]int{"rank": r})
	if err != nil {
		return err
	}
	for i, q := range nb {
		if q == mpi.ProcNull && all[i] != nil || q != mpi.ProcNull && all[i]["rank"] != q {
			return check(cart, false, "typed allgather slot %d: %v", i, all[i])
		}
	}
	// Low-level alltoall; ProcNull slots keep their sentinel.
	send := make([]int64, 2*n)
	for j := range n {
		send[2*j], send[2*j+1] = int64(r), int64(j)
	}
	recv := slices.Repeat([]int64{-1}, 2*n)
	if err := cart.NeighborAlltoall(mpi.AsBytes(send), 2, mpi.Int64, mpi.AsBytes(recv), 2, mpi.Int64); err != nil {
		return err
	}
	for i, q := range nb {
		want := []int64{-1, -1}
		if q != mpi.ProcNull {
			want = []int64{int64(q), int64(partner(i))}
		}
		if !slices.Equal(recv[2*i:2*i+2], want) {
			return check(cart, false, "alltoall slot %d: %v, want %v", i, recv[2*i:2*i+2], want)
		}
	}
	// Allgather and allgatherv (reversed slots with gaps).
	mine := []int64{int64(r), int64(r + 100)}
	recv = slices.Repeat([]int64{-1}, 2*n)
	if err := cart.NeighborAllgather(mpi.AsBytes(mine), 2, mpi.Int64, mpi.AsBytes(recv), 2, mpi.Int64); err != nil {
		return err
	}
	for i, q := range nb {
		want := []int64{-1, -1}
		if q != mpi.ProcNull {
			want = []int64{int64(q), int64(q + 100)}
		}
		if !slices.Equal(recv[2*i:2*i+2], want) {
			return check(cart, false, "allgather slot %d: %v, want %v", i, recv[2*i:2*i+2], want)
		}
	}
	displs := make([]int, n)
	for i := range displs {
		displs[i] = 3 * (n - 1 - i)
	}
	recv = slices.Repeat([]int64{-1}, 3*n)
	if err := cart.NeighborAllgatherv(mpi.AsBytes(mine), 2, mpi.Int64, mpi.AsBytes(recv), slices.Repeat([]int{2}, n), displs, mpi.Int64); err != nil {
		return err
	}
	for i, q := range nb {
		want := []int64{-1, -1, -1}
		if q != mpi.ProcNull {
			want = []int64{int64(q), int64(q + 100), -1}
		}
		if !slices.Equal(recv[displs[i]:displs[i]+3], want) {
			return check(cart, false, "allgatherv slot %d: %v, want %v", i, recv[displs[i]:displs[i]+3], want)
		}
	}
	// Alltoallv: slot j sends j%2+1 elements, so slot i receives 2-i%2.
	var sbuf []int64
	scounts, sdispls := make([]int, n), make([]int, n)
	for j := range n {
		scounts[j], sdispls[j] = j%2+1, len(sbuf)
		for k := range scounts[j] {
			sbuf = append(sbuf, int64(1000*r+10*j+k))
		}
	}
	rcounts, rdispls := make([]int, n), make([]int, n)
	for i := range n {
		rcounts[i], rdispls[i] = 2-i%2, 2*i
	}
	recv = slices.Repeat([]int64{-1}, 2*n)
	if err := cart.NeighborAlltoallv(mpi.AsBytes(sbuf), scounts, sdispls, mpi.Int64, mpi.AsBytes(recv), rcounts, rdispls, mpi.Int64); err != nil {
		return err
	}
	for i, q := range nb {
		want := []int64{-1, -1}
		if q != mpi.ProcNull {
			for k := range rcounts[i] {
				want[k] = int64(1000*q + 10*partner(i) + k)
			}
		}
		if !slices.Equal(recv[2*i:2*i+2], want) {
			return check(cart, false, "alltoallv slot %d: %v, want %v", i, recv[2*i:2*i+2], want)
		}
	}
	// Alltoallw with a strided send type: slot j sends elements 4j and 4j+2.
	vec, err := mpi.NewVector(2, 1, 2, mpi.Int64)
	if err != nil {
		return err
	}
	if err := vec.Commit(); err != nil {
		return err
	}
	sbuf = make([]int64, 4*n)
	for k := range sbuf {
		sbuf[k] = int64(100*r + k)
	}
	sd, rd := make([]int, n), make([]int, n)
	for j := range n {
		sd[j], rd[j] = 32*j, 16*j
	}
	recv = slices.Repeat([]int64{-1}, 2*n)
	if err := cart.NeighborAlltoallw(mpi.AsBytes(sbuf), slices.Repeat([]int{1}, n), sd, slices.Repeat([]*mpi.Datatype{vec}, n),
		mpi.AsBytes(recv), slices.Repeat([]int{2}, n), rd, slices.Repeat([]*mpi.Datatype{mpi.Int64}, n)); err != nil {
		return err
	}
	for i, q := range nb {
		want := []int64{-1, -1}
		if q != mpi.ProcNull {
			s := 4 * partner(i)
			want = []int64{int64(100*q + s), int64(100*q + s + 2)}
		}
		if !slices.Equal(recv[2*i:2*i+2], want) {
			return check(cart, false, "alltoallw slot %d: %v, want %v", i, recv[2*i:2*i+2], want)
		}
	}
	return vec.Free()
}

// Non-blocking forms overlap with each other and with a blocking
// collective, and neighbour traffic never matches a user's wildcard
// receive.
func TestNeighborNonblocking(t *testing.T) {
	matrix(t, 4, func(world *mpi.Comm) error {
		cart, err := world.CartCreate([]int{2, 2}, []bool{true, false}, false)
		if err != nil {
			return err
		}
		r := cart.Rank()
		nb, err := cartNeighbors(cart)
		if err != nil {
			return err
		}
		user, err := mpi.Irecv[int](cart, mpi.AnySource, mpi.AnyTag)
		if err != nil {
			return err
		}
		send := make([]int64, len(nb))
		for j := range send {
			send[j] = int64(10*r + j)
		}
		recv := slices.Repeat([]int64{-1}, len(nb))
		req, err := cart.IneighborAlltoall(mpi.AsBytes(send), 1, mpi.Int64, mpi.AsBytes(recv), 1, mpi.Int64)
		if err != nil {
			return err
		}
		fut, err := mpi.IneighborAllgather(cart, []int{r, r})
		if err != nil {
			return err
		}
		strs := make([]string, len(nb))
		for j := range strs {
			strs[j] = fmt.Sprint(r, "/", j)
		}
		fut2, err := mpi.IneighborAlltoall(cart, strs)
		if err != nil {
			return err
		}
		sum, err := mpi.Allreduce(cart, r, mpi.Sum[int]())
		if err != nil || sum != 6 {
			return check(world, false, "allreduce in between: %d %v", sum, err)
		}
		gv := slices.Repeat([]int64{-1}, 2*len(nb))
		req2, err := cart.IneighborAllgatherv(mpi.AsBytes([]int64{int64(r)}), 1, mpi.Int64, mpi.AsBytes(gv), slices.Repeat([]int{1}, len(nb)), []int{0, 2, 4, 6}, mpi.Int64)
		if err != nil {
			return err
		}
		rv := slices.Repeat([]int64{-1}, len(nb))
		one := slices.Repeat([]int{1}, len(nb))
		idx := []int{0, 1, 2, 3}
		req3, err := cart.IneighborAlltoallv(mpi.AsBytes(send), one, idx, mpi.Int64, mpi.AsBytes(rv), one, idx, mpi.Int64)
		if err != nil {
			return err
		}
		ww := slices.Repeat([]int64{-1}, len(nb))
		bidx := []int{0, 8, 16, 24}
		types := slices.Repeat([]*mpi.Datatype{mpi.Int64}, len(nb))
		req4, err := cart.IneighborAlltoallw(mpi.AsBytes(send), one, bidx, types, mpi.AsBytes(ww), one, bidx, types)
		if err != nil {
			return err
		}
		gathered, err := fut.Wait()
		if err != nil {
			return err
		}
		strsGot, err := fut2.Wait()
		if err != nil {
			return err
		}
		if err := mpi.WaitAll(req, req2, req3, req4); err != nil {
			return err
		}
		for i, q := range nb {
			want, wantG, wantS := int64(-1), []int(nil), ""
			if q != mpi.ProcNull {
				want, wantG, wantS = int64(10*q+partner(i)), []int{q, q}, fmt.Sprint(q, "/", partner(i))
			}
			if recv[i] != want || rv[i] != want || ww[i] != want || !slices.Equal(gathered[i], wantG) || strsGot[i] != wantS {
				return check(world, false, "slot %d: %d %d %d %v %q", i, recv[i], rv[i], ww[i], gathered[i], strsGot[i])
			}
			wg := int64(-1)
			if q != mpi.ProcNull {
				wg = int64(q)
			}
			if gv[2*i] != wg || gv[2*i+1] != -1 {
				return check(world, false, "allgatherv slot %d: %v", i, gv[2*i:2*i+2])
			}
		}
		// Only now does the user's receive get a message.
		if done, _, _, _ := user.Test(); done {
			return check(world, false, "a neighbour message matched the user's AnySource receive")
		}
		if err := mpi.Send(cart, 42, r, 9); err != nil {
			return err
		}
		v, st, err := user.Wait()
		if err != nil || v != 42 || st.Tag != 9 || st.Source != r {
			return check(world, false, "user receive got %d %+v %v", v, st, err)
		}
		return nil
	})
}

// Neighbour collectives on a graph and a distributed graph through the
// low-level layer, a node being its own neighbour and an edge repeated.
func TestNeighborGraphLowLevel(t *testing.T) {
	matrix(t, 3, func(world *mpi.Comm) error {
		r := world.Rank()
		g, err := world.GraphCreate([]int{3, 6, 9}, []int{1, 1, 2, 0, 0, 2, 0, 1, 2}, false)
		if err != nil {
			return err
		}
		nb, err := g.GraphNeighbors(r)
		if err != nil {
			return err
		}
		send := []int64{int64(r*10 + 0), int64(r*10 + 1), int64(r*10 + 2)}
		recv := make([]int64, 3)
		if err := g.NeighborAlltoall(mpi.AsBytes(send), 1, mpi.Int64, mpi.AsBytes(recv), 1, mpi.Int64); err != nil {
			return err
		}
		for i, q := range nb {
			// The k-th occurrence of r among q's neighbours.
			qn := [][]int{{1, 1, 2}, {0, 0, 2}, {0, 1, 2}}[q]
			k, slot := occ(nb, i), -1
			for j, x := range qn {
				if x == r {
					if k == 0 {
						slot = j
						break
					}
					k--
				}
			}
			if recv[i] != int64(q*10+slot) {
				return check(world, false, "graph slot %d from %d: %d, want %d", i, q, recv[i], q*10+slot)
			}
		}
		// A distributed graph: rank r sends to r+1 and r+2 (mod 3), and
		// receives accordingly.
		p := world.Size()
		dg, err := world.DistGraphCreateAdjacent([]int{(r + p - 1) % p, (r + p - 2) % p}, nil, []int{(r + 1) % p, (r + 2) % p}, nil, nil, false)
		if err != nil {
			return err
		}
		recv = []int64{-1, -1}
		req, err := dg.IneighborAllgather(mpi.AsBytes([]int64{int64(r)}), 1, mpi.Int64, mpi.AsBytes(recv), 1, mpi.Int64)
		if err != nil {
			return err
		}
		if _, err := req.Wait(); err != nil {
			return err
		}
		if recv[0] != int64((r+p-1)%p) || recv[1] != int64((r+p-2)%p) {
			return check(world, false, "dist graph allgather %v", recv)
		}
		return nil
	})
}

func TestNeighborErrors(t *testing.T) {
	err := mpi.Run(4, func(world *mpi.Comm) error {
		b := make([]byte, 64)
		if err := world.NeighborAllgather(b, 1, mpi.Int64, b, 1, mpi.Int64); !errors.Is(err, mpi.ErrTopology) {
			return fmt.Errorf("no topology: %v", err)
		}
		if _, err := mpi.NeighborAllgather(world, 1); !errors.Is(err, mpi.ErrTopology) {
			return fmt.Errorf("typed, no topology: %v", err)
		}
		if _, err := world.IneighborAlltoall(b, 1, mpi.Int64, b, 1, mpi.Int64); !errors.Is(err, mpi.ErrTopology) {
			return fmt.Errorf("non-blocking, no topology: %v", err)
		}
		ring, err := world.CartCreate([]int{4}, []bool{true}, false)
		if err != nil {
			return err
		}
		if _, err := mpi.NeighborAlltoall(ring, []int{1}); !errors.Is(err, mpi.ErrCount) {
			return fmt.Errorf("1 value for 2 neighbours: %v", err)
		}
		if err := ring.NeighborAllgather(b, 1, mpi.Int64, b[:8], 1, mpi.Int64); !errors.Is(err, mpi.ErrBuffer) {
			return fmt.Errorf("short receive buffer: %v", err)
		}
		if err := ring.NeighborAlltoallv(b, []int{1}, []int{0}, mpi.Int64, b, []int{1, 1}, []int{0, 1}, mpi.Int64); !errors.Is(err, mpi.ErrCount) {
			return fmt.Errorf("1 count for 2 neighbours: %v", err)
		}
		if err := ring.NeighborAllgather(b, 1, nil, b, 1, mpi.Int64); !errors.Is(err, mpi.ErrType) {
			return fmt.Errorf("nil datatype: %v", err)
		}
		// Every rank sends two elements into one-element slots.
		err = ring.NeighborAllgather(b, 2, mpi.Int64, b[16:], 1, mpi.Int64)
		if !errors.Is(err, mpi.ErrTruncate) {
			return fmt.Errorf("truncation: %v", err)
		}
		var e *mpi.Error
		if !errors.As(err, &e) || e.Op != "NeighborAllgather" {
			return fmt.Errorf("truncation error names %v", err)
		}
		// The communicator still works.
		got, err := mpi.NeighborAllgather(ring, world.Rank())
		if err != nil || got[0] != (world.Rank()+3)%4 || got[1] != (world.Rank()+1)%4 {
			return fmt.Errorf("after the error: %v %v", got, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
