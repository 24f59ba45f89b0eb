package mpi

import (
	"maps"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/mpigo/mpi/internal/datatype"
)

// These tests run goroutine ranks that each believe the others have the
// opposite byte order (foreignRun): a sender passes values whose numbers
// are byte-reversed (foreign), as a machine of the other order would hold
// them, and the receiver must convert them back. The real test, with an
// s390x process under qemu, is cmd/mpigo's TestHeteroJob.

func otherRepr() repr {
	switch nativeRepr {
	case reprLE64:
		return reprBE64
	case reprBE64:
		return reprLE64
	case reprLE32:
		return reprBE32
	}
	return reprLE32
}

// foreignRun runs f on n goroutine ranks, each of which sees every other
// rank as a machine of the other byte order.
func foreignRun(t *testing.T, n int, f func(c *Comm) error) {
	t.Helper()
	err := Run(n, func(c *Comm) error {
		rs := make([]repr, n)
		for i := range rs {
			rs[i] = otherRepr()
		}
		rs[c.rank] = nativeRepr
		c.p.reprs = rs
		if err := Barrier(c); err != nil {
			return err
		}
		return f(c)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// foreign returns v with the byte order of its numbers reversed.
func foreign[T any](v T) T {
	b, err := datatype.Encode(nil, &v)
	if err != nil {
		panic(err)
	}
	var r T
	if err := datatype.DecodeSwapped(b, &r, false); err != nil {
		panic(err)
	}
	return r
}

type hetPlain struct {
	A int32
	B float64
	C [3]uint16
	D bool
	E complex64
	F int
}

type hetEnc struct {
	Name string
	Vals []float64
	M    map[int32]float32
	P    *hetPlain
	S    []hetPlain
}

func TestHeteroPointToPoint(t *testing.T) {
	p := hetPlain{A: -7, B: math.Pi, C: [3]uint16{1, 0x1234, 0xfedc}, D: true, E: complex(1.5, -2), F: -1 << 20}
	e := hetEnc{Name: "x", Vals: []float64{1, -2.5}, M: map[int32]float32{0x01020304: 0.5, -1: 2}, P: &p, S: []hetPlain{p, {A: 3}}}
	foreignRun(t, 2, func(c *Comm) error {
		if c.Rank() == 0 {
			for _, err := range []error{
				Send(c, foreign(int64(-5)<<33), 1, 1),
				Send(c, foreign(p), 1, 2),
				Send(c, foreign([]float64{1, 2.5, -1e300}), 1, 3),
				Send(c, "héllo", 1, 4),
				Send(c, foreign(e), 1, 5),
				Send(c, foreign([]int32{1, -2, 0x01020304}), 1, 6),
				Send(c, foreign([]uint16{0xbeef, 1}), 1, 7),
				c.Send(unsafe.Slice((*byte)(unsafe.Pointer(&[]int32{foreign(int32(9)), 0, foreign(int32(-9)), 0}[0])), 16), 1, hetVec(t), 1, 8),
			} {
				if err != nil {
					return err
				}
			}
			return nil
		}
		i, _, err := Recv[int64](c, 0, 1)
		if err != nil || i != -5<<33 {
			t.Errorf("int64: %v %v", i, err)
		}
		gp, _, err := Recv[hetPlain](c, 0, 2)
		if err != nil || gp != p {
			t.Errorf("plain: %+v %v", gp, err)
		}
		fs, _, err := Recv[[]float64](c, 0, 3)
		if err != nil || !slices.Equal(fs, []float64{1, 2.5, -1e300}) {
			t.Errorf("[]float64: %v %v", fs, err)
		}
		s, _, err := Recv[string](c, 0, 4)
		if err != nil || s != "héllo" {
			t.Errorf("string: %q %v", s, err)
		}
		ge, _, err := Recv[hetEnc](c, 0, 5)
		if err != nil || ge.Name != e.Name || !slices.Equal(ge.Vals, e.Vals) || !maps.Equal(ge.M, e.M) || *ge.P != p || !reflect.DeepEqual(ge.S, e.S) {
			t.Errorf("encoded: %+v %v", ge, err)
		}
		into := make([]int32, 3)
		if _, err := RecvInto(c, into, 0, 6); err != nil || !slices.Equal(into, []int32{1, -2, 0x01020304}) {
			t.Errorf("RecvInto: %v %v", into, err)
		}
		pend, err := Irecv[[]uint16](c, 0, 7)
		if err != nil {
			return err
		}
		u, _, err := pend.Wait()
		if err != nil || !slices.Equal(u, []uint16{0xbeef, 1}) {
			t.Errorf("Irecv: %v %v", u, err)
		}
		got := make([]int32, 4)
		if _, err := c.Recv(unsafe.Slice((*byte)(unsafe.Pointer(&got[0])), 16), 1, hetVec(t), 0, 8); err != nil || !slices.Equal(got, []int32{9, 0, -9, 0}) {
			t.Errorf("vector: %v %v", got, err)
		}
		return nil
	})
}

// hetVec is two int32 with a gap of one.
func hetVec(t *testing.T) *Datatype {
	dt, err := NewVector(2, 1, 2, Int32)
	if err != nil {
		t.Fatal(err)
	}
	if err := dt.Commit(); err != nil {
		t.Fatal(err)
	}
	return dt
}

// mixedRun runs f on n goroutine ranks where rank 0 is this machine and
// the others play machines of the other byte order: they hold their
// numbers byte-reversed (asOwn), and each side sees the other as foreign.
// Ranks of the foreign side must not compute on their values (their
// arithmetic would be this machine's), so the collectives tested are those
// whose arithmetic happens at rank 0.
func mixedRun(t *testing.T, n int, f func(c *Comm) error) {
	t.Helper()
	err := Run(n, func(c *Comm) error {
		rs := make([]repr, n)
		for i := range rs {
			if (i == 0) == (c.rank == 0) {
				rs[i] = nativeRepr
			} else {
				rs[i] = otherRepr()
			}
		}
		c.p.reprs = rs
		if err := Barrier(c); err != nil {
			return err
		}
		return f(c)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// asOwn returns v as rank c.rank of mixedRun holds it.
func asOwn[T any](c *Comm, v T) T {
	if c.rank == 0 {
		return v
	}
	return foreign(v)
}

func TestHeteroCollectives(t *testing.T) {
	const n = 3
	mixedRun(t, n, func(c *Comm) error {
		r := c.Rank()
		if !c.mixed() {
			t.Errorf("rank %d: the communicator is not mixed", r)
		}
		sum, err := Allreduce(c, asOwn(c, float64(r+1)), Sum[float64]())
		if err != nil || sum != asOwn(c, 6.0) {
			t.Errorf("rank %d: Allreduce %v %v", r, sum, err)
		}
		sl, err := AllreduceSlice(c, asOwn(c, []int64{int64(r), 1 << 40}), Sum[int64]())
		if err != nil || !slices.Equal(sl, asOwn(c, []int64{3, 3 << 40})) {
			t.Errorf("rank %d: AllreduceSlice %v %v", r, sl, err)
		}
		red, err := Reduce(c, asOwn(c, hetPlain{A: int32(r), B: float64(r)}), NewOp(func(a, b hetPlain) hetPlain {
			return hetPlain{A: a.A*10 + b.A, B: a.B + b.B}
		}, false), 0)
		if err != nil || r == 0 && red != (hetPlain{A: 12, B: 3}) {
			t.Errorf("rank %d: Reduce %+v %v", r, red, err)
		}
		p := hetPlain{A: 42, B: 0.5, F: -1 << 20}
		b, err := Bcast(c, asOwn(c, p), 1)
		if err != nil || b != asOwn(c, p) {
			t.Errorf("rank %d: Bcast %+v %v", r, b, err)
		}
		e := hetEnc{Name: "e", Vals: []float64{1.5}, M: map[int32]float32{0x01020304: 2}, P: &p}
		be, err := Bcast(c, asOwn(c, e), 2)
		if want := asOwn(c, e); err != nil || !reflect.DeepEqual(be, want) {
			t.Errorf("rank %d: Bcast encoded %+v %v", r, be, err)
		}
		g, err := Allgather(c, asOwn(c, int32(r*0x10000+1)))
		if err != nil || !slices.Equal(g, asOwn(c, []int32{1, 0x10001, 0x20001})) {
			t.Errorf("rank %d: Allgather %v %v", r, g, err)
		}
		ga, err := Gather(c, asOwn(c, []uint16{uint16(r), 0x0102}), 2)
		if err != nil || r == 2 && !reflect.DeepEqual(ga, asOwn(c, [][]uint16{{0, 0x0102}, {1, 0x0102}, {2, 0x0102}})) {
			t.Errorf("rank %d: Gather %v %v", r, ga, err)
		}
		outs := make([]int64, n)
		for i := range outs {
			outs[i] = int64(r*100+i) << 32
		}
		a2a, err := Alltoall(c, asOwn(c, outs))
		if err != nil || !slices.Equal(a2a, asOwn(c, []int64{int64(r) << 32, int64(100+r) << 32, int64(200+r) << 32})) {
			t.Errorf("rank %d: Alltoall %v %v", r, a2a, err)
		}
		var vs []float64
		if r == 1 {
			vs = asOwn(c, []float64{0.5, 1.5, 2.5})
		}
		sc, err := Scatter(c, vs, 1)
		if err != nil || sc != asOwn(c, float64(r)+0.5) {
			t.Errorf("rank %d: Scatter %v %v", r, sc, err)
		}
		in := asOwn(c, []float64{float64(r), 2})
		out := make([]float64, 2)
		if err := c.Allreduce(f64Bytes(in), f64Bytes(out), 2, Float64, OpSum); err != nil || !slices.Equal(out, asOwn(c, []float64{3, 6})) {
			t.Errorf("rank %d: low Allreduce %v %v", r, out, err)
		}
		vec := hetVec(t)
		lb := []int32{0, -1, 0, -1}
		if r == 1 {
			lb = []int32{asOwn(c, int32(0x01020304)), -1, asOwn(c, int32(-2)), -1}
		}
		if err := c.Bcast(i32Bytes(lb), 1, vec, 1); err != nil || lb[0] != asOwn(c, int32(0x01020304)) || lb[2] != asOwn(c, int32(-2)) || lb[1] != -1 {
			t.Errorf("rank %d: low Bcast %v %v", r, lb, err)
		}
		return nil
	})
}

func f64Bytes(s []float64) []byte { return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), 8*len(s)) }
func i32Bytes(s []int32) []byte   { return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), 4*len(s)) }

func TestHeteroRepresentations(t *testing.T) {
	err := Run(2, func(c *Comm) error {
		if c.Rank() != 0 {
			return nil
		}
		for _, tc := range []struct {
			parts [][]byte
			want  string // "" : accepted
		}{
			{[][]byte{[]byte(reprTokens[nativeRepr]), []byte(reprTokens[nativeRepr])}, ""},
			{[][]byte{nil, []byte(reprTokens[otherRepr()])}, ""},
			{[][]byte{nil, []byte("zz99")}, `rank 1 announced the data representation "zz99"`},
			{[][]byte{nil, []byte(strings.Repeat("x", 100))}, `"xxxxxxxxxxxxxxxx"...`},
			{[][]byte{nil, []byte(reprTokens[map[repr]repr{reprLE64: reprLE32, reprBE64: reprBE32, reprLE32: reprLE64, reprBE32: reprBE64}[nativeRepr]])}, "differs in size"},
		} {
			err := c.p.noteReprs(tc.parts, nil)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("%q: %v", tc.parts, err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("%q: got %v, want an error with %q", tc.parts, err, tc.want)
			}
		}
		c.p.reprs = nil
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
