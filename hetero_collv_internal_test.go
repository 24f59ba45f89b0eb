package mpi

import (
	"fmt"
	"reflect"
	"testing"
	"unsafe"
)

// These tests cover the collectives whose mixed forms are in hetero_collv.go, on
// mixedRun's ranks (rank 0 this machine, the others the other byte
// order). A rank's expected result is asOwn of the value: what it holds
// once the data is converted to its own order. Reductions either happen
// at rank 0 or use bitwise operations, which give the same bytes in
// either order, so the foreign ranks' arithmetic is right too.

// rawBytes is the memory of s.
func rawBytes[E any](s []E) []byte {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), len(s)*int(unsafe.Sizeof(s[0])))
}

// expect reports got != want for case name.
func expect(name string, got, want any) error {
	if !reflect.DeepEqual(got, want) {
		return fmt.Errorf("%s: got %v, want %v", name, got, want)
	}
	return nil
}

// hetCase is one collective call on a mixed communicator of 3 ranks.
type hetCase struct {
	name string
	run  func(c *Comm) error // nil or an error that says what went wrong
}

var hetCases = []hetCase{
	// Typed.
	{"ReduceScatterBlock", func(c *Comm) error {
		r := int64(c.Rank())
		got, err := ReduceScatterBlock(c, asOwn(c, []int64{r + 1, 10 * (r + 1), 100 * (r + 1) << 32}), Sum[int64]())
		if err != nil {
			return err
		}
		return expect("ReduceScatterBlock", got, asOwn(c, [][]int64{{6}, {60}, {600 << 32}}[r]))
	}},
	{"ReduceScatter", func(c *Comm) error {
		r := c.Rank()
		v := asOwn(c, []float64{float64(r), 0.5, float64(r) * 1e10})
		got, err := ReduceScatter(c, v, []int{2, 0, 1}, Sum[float64]())
		if err != nil {
			return err
		}
		want := [][]float64{{3, 1.5}, {}, {3e10}}[r]
		if len(want) == 0 && len(got) == 0 {
			return nil
		}
		return expect("ReduceScatter", got, asOwn(c, want))
	}},
	{"ScanSlice", func(c *Comm) error {
		r := c.Rank()
		got, err := ScanSlice(c, asOwn(c, []uint32{1 << r, 0x0100_0000 << r}), Bor[uint32]())
		if err != nil {
			return err
		}
		m := uint32(1)<<(r+1) - 1
		return expect("ScanSlice", got, asOwn(c, []uint32{m, m << 24}))
	}},
	{"AllgatherInto", func(c *Comm) error {
		r := int32(c.Rank())
		out := make([]int32, 6)
		if err := AllgatherInto(c, asOwn(c, []int32{r*0x10000 + 1, -r}), out); err != nil {
			return err
		}
		return expect("AllgatherInto", out, asOwn(c, []int32{1, 0, 0x10001, -1, 0x20001, -2}))
	}},
	{"AlltoallInto", func(c *Comm) error {
		r := int64(c.Rank())
		recv := make([]int64, 3)
		if err := AlltoallInto(c, asOwn(c, []int64{r << 32, (r + 100) << 32, (r + 200) << 32}), recv); err != nil {
			return err
		}
		return expect("AlltoallInto", recv, asOwn(c, []int64{r * 100 << 32, (1 + r*100) << 32, (2 + r*100) << 32}))
	}},
	{"Iallreduce+IreduceScatterBlock", func(c *Comm) error {
		r := c.Rank()
		f, err := IallreduceSlice(c, asOwn(c, []float64{float64(r), 1e300}), Max[float64]())
		if err != nil {
			return err
		}
		g, err := IreduceScatterBlock(c, asOwn(c, []int32{int32(r), int32(r) << 16, -int32(r)}), Sum[int32]())
		if err != nil {
			return err
		}
		a, err := f.Wait()
		if err != nil {
			return err
		}
		b, err := g.Wait()
		if err != nil {
			return err
		}
		if err := expect("IallreduceSlice", a, asOwn(c, []float64{2, 1e300})); err != nil {
			return err
		}
		return expect("IreduceScatterBlock", b, asOwn(c, [][]int32{{3}, {3 << 16}, {-3}}[r]))
	}},
	{"NeighborAllgather typed", func(c *Comm) error {
		ring, err := c.CartCreate([]int{3}, []bool{true}, false)
		if err != nil {
			return err
		}
		defer ring.Free()
		r := int32(c.Rank())
		got, err := NeighborAllgather(ring, asOwn(c, hetPlain{A: r << 20, B: float64(r)}))
		if err != nil {
			return err
		}
		lo, hi := (r+2)%3, (r+1)%3
		return expect("NeighborAllgather", got, asOwn(c, []hetPlain{{A: lo << 20, B: float64(lo)}, {A: hi << 20, B: float64(hi)}}))
	}},

	// Low-level.
	{"Gatherv", func(c *Comm) error {
		r := int32(c.Rank())
		send := asOwn(c, []int32{r<<16 + 1, r<<16 + 2})[:r%2+1]
		recv := make([]int32, 5)
		if err := c.Gatherv(rawBytes(send), len(send), Int32, rawBytes(recv), []int{1, 2, 1}, []int{3, 0, 2}, Int32, 1); err != nil {
			return err
		}
		if r != 1 {
			return expect("Gatherv (not root)", recv, make([]int32, 5))
		}
		return expect("Gatherv", recv, asOwn(c, []int32{1<<16 + 1, 1<<16 + 2, 2<<16 + 1, 1, 0}))
	}},
	{"Gather derived", func(c *Comm) error {
		r := int32(c.Rank())
		vec := mustVec()
		send := asOwn(c, []int32{r << 8, -1, -r, -1})
		recv := make([]int32, 12)
		if err := c.Gather(rawBytes(send), 1, vec, rawBytes(recv), 1, Int32x2(), 0); err != nil {
			return err
		}
		if r != 0 {
			return nil
		}
		return expect("Gather derived", recv[:6], []int32{0, 0, 1 << 8, -1, 2 << 8, -2})
	}},
	{"Scatterv", func(c *Comm) error {
		r := c.Rank()
		var send []float64
		if r == 2 {
			send = asOwn(c, []float64{9, 1.25, 2.5, 1e-300})
		}
		recv := make([]float64, 2)
		if err := c.Scatterv(rawBytes(send), []int{1, 2, 1}, []int{3, 1, 0}, Float64, rawBytes(recv), []int{1, 2, 1}[r], Float64, 2); err != nil {
			return err
		}
		return expect("Scatterv", recv, asOwn(c, [][]float64{{1e-300, 0}, {1.25, 2.5}, {9, 0}}[r]))
	}},
	{"Allgatherv in place", func(c *Comm) error {
		r := c.Rank()
		buf := make([]int64, 4)
		displs := []int{0, 1, 3}
		own := asOwn(c, []int64{-1 << 40, 5 << 40, 7, 8})
		copy(buf[displs[r]:], own[displs[r]:displs[r]+[]int{1, 2, 1}[r]])
		if err := c.Allgatherv(InPlace, 0, nil, rawBytes(buf), []int{1, 2, 1}, displs, Int64); err != nil {
			return err
		}
		return expect("Allgatherv", buf, own)
	}},
	{"Allgather", func(c *Comm) error {
		r := uint32(c.Rank())
		out := make([]uint32, 3)
		if err := c.Allgather(rawBytes(asOwn(c, []uint32{r<<24 | 1})), 1, Uint32, rawBytes(out), 1, Uint32); err != nil {
			return err
		}
		return expect("Allgather", out, asOwn(c, []uint32{1, 1<<24 | 1, 2<<24 | 1}))
	}},
	{"Alltoall in place", func(c *Comm) error {
		r := int32(c.Rank())
		buf := asOwn(c, []int32{r << 16, r<<16 | 1, r<<16 | 2})
		if err := c.Alltoall(InPlace, 0, nil, rawBytes(buf), 1, Int32); err != nil {
			return err
		}
		return expect("Alltoall", buf, asOwn(c, []int32{r, 1<<16 | r, 2<<16 | r}))
	}},
	{"Alltoallv", func(c *Comm) error {
		r := c.Rank()
		// Rank r sends j+1 values r*10+j to rank j.
		var send []float64
		var sc, sd []int
		for j := range 3 {
			sd = append(sd, len(send))
			sc = append(sc, j+1)
			for range j + 1 {
				send = append(send, float64(r*10+j)+0.5)
			}
		}
		recv := make([]float64, 3*(r+1))
		rc := fill(3, r+1)
		rd := []int{0, r + 1, 2 * (r + 1)}
		if err := c.Alltoallv(rawBytes(asOwn(c, send)), sc, sd, Float64, rawBytes(recv), rc, rd, Float64); err != nil {
			return err
		}
		var want []float64
		for i := range 3 {
			for range r + 1 {
				want = append(want, float64(i*10+r)+0.5)
			}
		}
		return expect("Alltoallv", recv, asOwn(c, want))
	}},
	{"Alltoallw", func(c *Comm) error {
		r := int64(c.Rank())
		send := asOwn(c, []int64{r << 32, r<<32 | 1, r<<32 | 2})
		recv := make([]int64, 3)
		types := []*Datatype{Int64, Int64, Int64}
		if err := c.Alltoallw(rawBytes(send), []int{1, 1, 1}, []int{0, 8, 16}, types, rawBytes(recv), []int{1, 1, 1}, []int{16, 8, 0}, types); err != nil {
			return err
		}
		return expect("Alltoallw", recv, asOwn(c, []int64{2<<32 | r, 1<<32 | r, r}))
	}},
	{"ReduceScatterBlock low", func(c *Comm) error {
		r := c.Rank()
		out := make([]float64, 1)
		in := asOwn(c, []float64{float64(r), 1e10 * float64(r), -0.5})
		if err := c.ReduceScatterBlock(rawBytes(in), rawBytes(out), 1, Float64, OpSum); err != nil {
			return err
		}
		return expect("ReduceScatterBlock", out, asOwn(c, [][]float64{{3}, {3e10}, {-1.5}}[r]))
	}},
	{"ReduceScatter low", func(c *Comm) error {
		r := c.Rank()
		out := make([]int32, 2)
		in := asOwn(c, []int32{int32(r), int32(r) << 20, 7})
		if err := c.ReduceScatter(rawBytes(in), rawBytes(out), []int{1, 2, 0}, Int32, OpMax); err != nil {
			return err
		}
		return expect("ReduceScatter", out, asOwn(c, [][]int32{{2, 0}, {2 << 20, 7}, {0, 0}}[r]))
	}},
	{"Scan+Exscan low", func(c *Comm) error {
		r := c.Rank()
		in := asOwn(c, []int64{1 << (8 * r), 0x0101 << (16 * r)})
		out := make([]int64, 2)
		if err := c.Scan(rawBytes(in), rawBytes(out), 2, Int64, OpBor); err != nil {
			return err
		}
		var want [2]int64
		for i := range r + 1 {
			want[0] |= 1 << (8 * i)
			want[1] |= 0x0101 << (16 * i)
		}
		if err := expect("Scan", out, asOwn(c, want[:])); err != nil {
			return err
		}
		ex := []int64{-9, -9}
		if err := c.Exscan(rawBytes(in), rawBytes(ex), 2, Int64, OpBor); err != nil {
			return err
		}
		if r == 0 {
			return expect("Exscan (rank 0 untouched)", ex, []int64{-9, -9})
		}
		want = [2]int64{}
		for i := range r {
			want[0] |= 1 << (8 * i)
			want[1] |= 0x0101 << (16 * i)
		}
		return expect("Exscan", ex, asOwn(c, want[:]))
	}},
	{"NeighborAllgather low", func(c *Comm) error {
		ring, err := c.CartCreate([]int{3}, []bool{true}, false)
		if err != nil {
			return err
		}
		defer ring.Free()
		r := int32(c.Rank())
		out := make([]int32, 4)
		if err := ring.NeighborAllgather(rawBytes(asOwn(c, []int32{r << 16, -r})), 2, Int32, rawBytes(out), 2, Int32); err != nil {
			return err
		}
		lo, hi := (r+2)%3, (r+1)%3
		return expect("NeighborAllgather", out, asOwn(c, []int32{lo << 16, -lo, hi << 16, -hi}))
	}},
	{"Ialltoallv+Igatherv", func(c *Comm) error {
		r := int32(c.Rank())
		send := asOwn(c, []int32{r << 8, r<<8 | 1, r<<8 | 2})
		recv := make([]int32, 3)
		q1, err := c.Ialltoallv(rawBytes(send), fill(3, 1), []int{0, 1, 2}, Int32, rawBytes(recv), fill(3, 1), []int{0, 1, 2}, Int32)
		if err != nil {
			return err
		}
		g := make([]int32, 3)
		q2, err := c.Igatherv(rawBytes(send[:1]), 1, Int32, rawBytes(g), fill(3, 1), nil, Int32, 0)
		if err != nil {
			return err
		}
		if _, err := q1.Wait(); err != nil {
			return err
		}
		if _, err := q2.Wait(); err != nil {
			return err
		}
		if err := expect("Ialltoallv", recv, asOwn(c, []int32{r, 1<<8 | r, 2<<8 | r})); err != nil {
			return err
		}
		if r == 0 {
			return expect("Igatherv", g, []int32{0, 1 << 8, 2 << 8})
		}
		return nil
	}},
}

// mustVec is hetVec without a test to fail: two int32 with a gap of one.
func mustVec() *Datatype {
	dt, err := NewVector(2, 1, 2, Int32)
	if err == nil {
		err = dt.Commit()
	}
	if err != nil {
		panic(err)
	}
	return dt
}

// Int32x2 is two contiguous int32.
func Int32x2() *Datatype {
	dt, err := NewContiguous(2, Int32)
	if err == nil {
		err = dt.Commit()
	}
	if err != nil {
		panic(err)
	}
	return dt
}

func TestHeteroCollectivesV(t *testing.T) {
	for _, tc := range hetCases {
		t.Run(tc.name, func(t *testing.T) {
			mixedRun(t, 3, func(c *Comm) error {
				c.SetErrHandler(ErrorsReturn)
				if err := tc.run(c); err != nil {
					t.Errorf("rank %d: %v", c.Rank(), err)
				}
				return nil
			})
		})
	}
}

// hetInterCases run on an intercommunicator between world ranks {0, 1}
// (group A: this machine and the other order) and {2, 3} (group B: both
// the other order). Reductions use Bor, right in either order.
var hetInterCases = []struct {
	name string
	run  func(c, ic *Comm, inA bool) error
}{
	{"Bcast", func(c, ic *Comm, inA bool) error {
		// Root: world rank 1 (rank 1 of A).
		v := hetPlain{A: -5 << 16, B: 1e200, F: 3<<20 | 7}
		root := 1
		switch {
		case c.Rank() == 1:
			root = Root
		case inA:
			root = ProcNull
		}
		got, err := Bcast(ic, asOwn(c, v), root)
		if err != nil || inA {
			return err
		}
		return expect("Bcast", got, asOwn(c, v))
	}},
	{"Gather+Scatter", func(c, ic *Comm, inA bool) error {
		// Root: world rank 0 (rank 0 of A), gathering from B.
		r := int64(c.Rank())
		root := 0
		if inA {
			root = ProcNull
			if r == 0 {
				root = Root
			}
		}
		g, err := Gather(ic, asOwn(c, []int64{r << 32, -r}), root)
		if err != nil {
			return err
		}
		if root == Root {
			if err := expect("Gather", g, [][]int64{{2 << 32, -2}, {3 << 32, -3}}); err != nil {
				return err
			}
		}
		var vs []float32
		if root == Root {
			vs = []float32{1.5, -2.5e30}
		}
		s, err := Scatter(ic, vs, root)
		if err != nil || inA {
			return err
		}
		return expect("Scatter", s, asOwn(c, []float32{1.5, -2.5e30}[r-2]))
	}},
	{"Allgather+Alltoall", func(c, ic *Comm, inA bool) error {
		r := int32(c.Rank())
		g, err := Allgather(ic, asOwn(c, r<<20|1))
		if err != nil {
			return err
		}
		other := []int32{2<<20 | 1, 3<<20 | 1}
		if !inA {
			other = []int32{1, 1<<20 | 1}
		}
		if err := expect("Allgather", g, asOwn(c, other)); err != nil {
			return err
		}
		a, err := Alltoall(ic, asOwn(c, []uint64{uint64(r) << 40, uint64(r)<<40 | 1}))
		if err != nil {
			return err
		}
		me := uint64(r % 2)
		base := uint64(2)
		if !inA {
			base = 0
		}
		return expect("Alltoall", a, asOwn(c, []uint64{base<<40 | me, (base+1)<<40 | me}))
	}},
	{"Allreduce+Reduce", func(c, ic *Comm, inA bool) error {
		r := c.Rank()
		v := asOwn(c, []uint32{1 << r, 0x0100_0000 << r})
		got, err := AllreduceSlice(ic, v, Bor[uint32]())
		if err != nil {
			return err
		}
		want := []uint32{0b1100, 0b1100 << 24}
		if !inA {
			want = []uint32{0b11, 0b11 << 24}
		}
		if err := expect("AllreduceSlice", got, asOwn(c, want)); err != nil {
			return err
		}
		root := 0
		if inA {
			root = ProcNull
			if r == 0 {
				root = Root
			}
		}
		red, err := Reduce(ic, asOwn(c, uint64(1)<<(8*r)), Bor[uint64](), root)
		if err != nil || root != Root {
			return err
		}
		return expect("Reduce", red, uint64(1)<<16|1<<24)
	}},
	{"low Bcast+Allgather+Alltoall", func(c, ic *Comm, inA bool) error {
		r := int32(c.Rank())
		buf := []int32{0, -1, 0, -1}
		root := 1
		switch {
		case r == 1:
			root, buf = Root, asOwn(c, []int32{0x01020304, -1, -7, -1})
		case inA:
			root = ProcNull
		}
		if err := ic.Bcast(rawBytes(buf), 1, mustVec(), root); err != nil {
			return err
		}
		if !inA {
			if err := expect("Bcast vector", buf, []int32{asOwn(c, int32(0x01020304)), -1, asOwn(c, int32(-7)), -1}); err != nil {
				return err
			}
		}
		out := make([]float64, 2)
		if err := ic.Allgather(rawBytes(asOwn(c, []float64{float64(r) + 0.25})), 1, Float64, rawBytes(out), 1, Float64); err != nil {
			return err
		}
		want := []float64{2.25, 3.25}
		if !inA {
			want = []float64{0.25, 1.25}
		}
		if err := expect("low Allgather", out, asOwn(c, want)); err != nil {
			return err
		}
		a := make([]int64, 2)
		if err := ic.Alltoall(rawBytes(asOwn(c, []int64{int64(r) << 33, int64(r)<<33 | 1})), 1, Int64, rawBytes(a), 1, Int64); err != nil {
			return err
		}
		me, base := int64(r%2), int64(2)
		if !inA {
			base = 0
		}
		return expect("low Alltoall", a, asOwn(c, []int64{base<<33 | me, (base+1)<<33 | me}))
	}},
	{"low Allreduce+ReduceScatterBlock+Gatherv", func(c, ic *Comm, inA bool) error {
		r := c.Rank()
		in := asOwn(c, []int64{1 << (8 * r), 1 << (8*r + 4)})
		out := make([]int64, 2)
		if err := ic.Allreduce(rawBytes(in), rawBytes(out), 2, Int64, OpBor); err != nil {
			return err
		}
		want := []int64{1<<16 | 1<<24, 1<<20 | 1<<28}
		if !inA {
			want = []int64{1 | 1<<8, 1<<4 | 1<<12}
		}
		if err := expect("low Allreduce", out, asOwn(c, want)); err != nil {
			return err
		}
		one := make([]int64, 1)
		if err := ic.ReduceScatterBlock(rawBytes(in), rawBytes(one), 1, Int64, OpBor); err != nil {
			return err
		}
		if err := expect("low ReduceScatterBlock", one, asOwn(c, want[r%2:r%2+1])); err != nil {
			return err
		}
		root := 0
		if inA {
			root = ProcNull
			if r == 0 {
				root = Root
			}
		}
		g := make([]int32, 3)
		send := asOwn(c, []int32{int32(r) << 24, int32(r)<<24 | 1})
		if err := ic.Gatherv(rawBytes(send), r-1, Int32, rawBytes(g), []int{1, 2}, []int{2, 0}, Int32, root); err != nil {
			return err
		}
		if root == Root {
			return expect("low Gatherv", g, []int32{3 << 24, 3<<24 | 1, 2 << 24})
		}
		return nil
	}},
}

func TestHeteroInterCollectives(t *testing.T) {
	for _, tc := range hetInterCases {
		t.Run(tc.name, func(t *testing.T) {
			mixedRun(t, 4, func(c *Comm) error {
				c.SetErrHandler(ErrorsReturn)
				inA := c.Rank() < 2
				local, err := c.Split(map[bool]int{true: 0, false: 1}[inA], c.Rank())
				if err != nil {
					return err
				}
				defer local.Free()
				ic, err := IntercommCreate(local, 0, c, map[bool]int{true: 2, false: 0}[inA], 7)
				if err != nil {
					return err
				}
				defer ic.Free()
				ic.SetErrHandler(ErrorsReturn)
				if err := tc.run(c, ic, inA); err != nil {
					t.Errorf("rank %d: %v", c.Rank(), err)
				}
				return nil
			})
		})
	}
}
