// heteroprog exchanges every kind of value between the ranks of a ring and
// runs the collectives that convert data, then prints what every rank got
// at rank 0 (and its own architecture on standard error). The mixed-
// architecture test runs it with ranks built for amd64 and for s390x and
// expects the output of a run where every rank is built for one machine.
package main

import (
	"fmt"
	"math"
	"os"
	"runtime"
	"slices"
	"strings"
	"unsafe"

	"github.com/mpigo/mpi"
)

// Plain is a struct of fixed size: it travels as its memory.
type Plain struct {
	A int32
	B float64
	C [3]uint16
	D bool
	E complex64
	F int
}

// Enc holds strings, slices, maps and pointers: it travels encoded.
type Enc struct {
	Name   string
	Vals   []float64
	M      map[string]int
	K      map[int32]float32
	P      *Plain
	Nested []Plain
	Words  []string
}

func plainOf(r int) Plain {
	return Plain{A: int32(-1000 * (r + 1)), B: math.Pi * float64(r+1), C: [3]uint16{uint16(r), 0x1234, 0xfedc},
		D: r%2 == 1, E: complex(float32(r)+0.5, -float32(r)), F: -(r + 1) << 40}
}

func encOf(r int) Enc {
	p := plainOf(r + 7)
	return Enc{Name: fmt.Sprintf("rank %d", r), Vals: []float64{1.5 * float64(r), -2, math.Inf(1)},
		M: map[string]int{"a": r, "b": -r << 33}, K: map[int32]float32{int32(r): 0.25, 0x01020304: -1},
		P: &p, Nested: []Plain{plainOf(r), plainOf(r + 1)}, Words: []string{"x", strings.Repeat("y", r+1)}}
}

func main() {
	fmt.Fprintf(os.Stderr, "rank %s runs on %s (%d-byte int)\n", os.Getenv("MPIGO_RANK"), runtime.GOARCH, unsafe.Sizeof(0))
	mpi.Main(run)
}

func run(w *mpi.Comm) error {
	r, n := w.Rank(), w.Size()
	next, prev := (r+1)%n, (r+n-1)%n
	var lines []string
	say := func(format string, args ...any) {
		lines = append(lines, fmt.Sprintf("%d: ", r)+fmt.Sprintf(format, args...))
	}

	// Point to point, typed: every kind of value around the ring.
	if err := ring(w, next, prev, say); err != nil {
		return err
	}
	// Point to point, low level, with datatypes.
	if err := lowLevel(w, next, prev, say); err != nil {
		return err
	}
	// Collectives.
	if err := collectives(w, say); err != nil {
		return err
	}
	// The v and w forms, reduce-scatters, neighbours, non-blocking,
	// intercommunicator collectives and windows (more.go).
	if err := more(w, say); err != nil {
		return err
	}
	all, err := mpi.Gather(w, strings.Join(lines, "\n"), 0)
	if err != nil {
		return err
	}
	if r == 0 {
		for _, s := range all {
			fmt.Println(s)
		}
	}
	return nil
}

func exchange[T any](w *mpi.Comm, v T, next, prev, tag int) (T, error) {
	got, _, err := mpi.Sendrecv[T](w, v, next, tag, prev, tag)
	return got, err
}

func ring(w *mpi.Comm, next, prev int, say func(string, ...any)) error {
	r := w.Rank()
	var err error
	check := func(e error) {
		if err == nil {
			err = e
		}
	}
	i, e := exchange(w, -(r+1)<<35, next, prev, 1)
	check(e)
	i32, e := exchange(w, int32(-r-0x10000), next, prev, 2)
	check(e)
	u16, e := exchange(w, uint16(0xbeef+r), next, prev, 3)
	check(e)
	f64, e := exchange(w, 1/float64(r+3), next, prev, 4)
	check(e)
	c128, e := exchange(w, complex(float64(r), -1e300), next, prev, 5)
	check(e)
	b, e := exchange(w, r%2 == 0, next, prev, 6)
	check(e)
	say("scalars %d %d %#x %v %v %v", i, i32, u16, f64, c128, b)
	p, e := exchange(w, plainOf(r), next, prev, 7)
	check(e)
	say("plain %+v", p)
	fs, e := exchange(w, []float64{float64(r), -0.125, math.MaxFloat64, math.SmallestNonzeroFloat64}, next, prev, 8)
	check(e)
	say("[]float64 %v", fs)
	ps, e := exchange(w, []Plain{plainOf(r), plainOf(r + 10)}, next, prev, 9)
	check(e)
	say("[]Plain %+v", ps)
	s, e := exchange(w, fmt.Sprintf("héllo from %d", r), next, prev, 10)
	check(e)
	say("string %q", s)
	en, e := exchange(w, encOf(r), next, prev, 11)
	check(e)
	say("encoded %s", showEnc(en))
	m, e := exchange(w, map[int64]uint32{int64(r) << 40: 0xdeadbeef, -1: uint32(r)}, next, prev, 12)
	check(e)
	say("map %v", m)
	if err != nil {
		return err
	}
	// RecvInto, Irecv, IrecvInto.
	into := make([]int64, 4)
	req, err := mpi.IrecvInto(w, into, prev, 13)
	if err != nil {
		return err
	}
	pend, err := mpi.Irecv[[]uint32](w, prev, 14)
	if err != nil {
		return err
	}
	if err := mpi.Send(w, []int64{int64(r), -int64(r) << 50, 7, math.MinInt64}, next, 13); err != nil {
		return err
	}
	if err := mpi.Send(w, []uint32{uint32(r), 0x01020304}, next, 14); err != nil {
		return err
	}
	if _, err := req.Wait(); err != nil {
		return err
	}
	u32, _, err := pend.Wait()
	if err != nil {
		return err
	}
	say("IrecvInto %v Irecv %v", into, u32)
	buf := make([]Plain, 3)
	if err := mpi.Send(w, []Plain{plainOf(r + 20)}, next, 15); err != nil {
		return err
	}
	st, err := mpi.RecvInto(w, buf, prev, 15)
	if err != nil {
		return err
	}
	say("RecvInto %d %+v", st.Count(), buf[0])
	return nil
}

func showEnc(e Enc) string {
	keys := make([]string, 0, len(e.M))
	for k, v := range e.M {
		keys = append(keys, fmt.Sprintf("%s=%d", k, v))
	}
	slices.Sort(keys)
	ks := make([]string, 0, len(e.K))
	for k, v := range e.K {
		ks = append(ks, fmt.Sprintf("%d=%v", k, v))
	}
	slices.Sort(ks)
	return fmt.Sprintf("%s %v %v %v %+v %+v %q", e.Name, e.Vals, keys, ks, *e.P, e.Nested, e.Words)
}

func lowLevel(w *mpi.Comm, next, prev int, say func(string, ...any)) error {
	r := w.Rank()
	// Contiguous float64.
	out := []float64{float64(r) + 0.5, -1e-300, 42}
	in := make([]float64, 3)
	if _, err := w.Sendrecv(f64bytes(out), 3, mpi.Float64, next, 20, f64bytes(in), 3, mpi.Float64, prev, 20); err != nil {
		return err
	}
	say("low float64 %v", in)
	// A vector of int32: every other element of 8.
	vec, err := mpi.NewVector(4, 1, 2, mpi.Int32)
	if err != nil {
		return err
	}
	if err := vec.Commit(); err != nil {
		return err
	}
	src := make([]int32, 8)
	for i := range src {
		src[i] = int32(r*1000000 + i*0x10101)
	}
	dst := make([]int32, 8)
	rq, err := w.Irecv(i32bytes(dst), 1, vec, prev, 21)
	if err != nil {
		return err
	}
	if err := w.Send(i32bytes(src), 1, vec, next, 21); err != nil {
		return err
	}
	if _, err := rq.Wait(); err != nil {
		return err
	}
	say("low vector %v", dst)
	// DatatypeOf a struct.
	dt, err := mpi.DatatypeOf[Plain]()
	if err != nil {
		return err
	}
	ps := []Plain{plainOf(r + 30), plainOf(r + 31)}
	got := make([]Plain, 2)
	if _, err := w.Sendrecv(plainBytes(ps), 2, dt, next, 22, plainBytes(got), 2, dt, prev, 22); err != nil {
		return err
	}
	say("low struct %+v", got)
	return nil
}

func f64bytes(s []float64) []byte { return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), 8*len(s)) }
func i32bytes(s []int32) []byte   { return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), 4*len(s)) }
func plainBytes(s []Plain) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), int(unsafe.Sizeof(Plain{}))*len(s))
}

func collectives(w *mpi.Comm, say func(string, ...any)) error {
	r, n := w.Rank(), w.Size()
	root := n - 1
	bp, err := mpi.Bcast(w, plainOf(r+40), root)
	if err != nil {
		return err
	}
	be, err := mpi.Bcast(w, encOf(r+40), root)
	if err != nil {
		return err
	}
	bs, err := mpi.Bcast(w, []float64{float64(r), 1e10}, root)
	if err != nil {
		return err
	}
	say("Bcast %+v %s %v", bp, showEnc(be), bs)
	into := make([]float64, 3)
	if r == 0 {
		into = []float64{-1, 2.5, 1e-5}
	}
	if err := mpi.BcastInto(w, into, 0); err != nil {
		return err
	}
	say("BcastInto %v", into)
	sf, err := mpi.Allreduce(w, 1/float64(r+1), mpi.Sum[float64]())
	if err != nil {
		return err
	}
	si, err := mpi.Allreduce(w, int64(r+1)<<40, mpi.Sum[int64]())
	if err != nil {
		return err
	}
	mx, err := mpi.AllreduceSlice(w, []float64{float64(r), -float64(r), 3}, mpi.Max[float64]())
	if err != nil {
		return err
	}
	sm, err := mpi.ReduceSlice(w, []int32{int32(r), 0x01000000, -5}, mpi.Sum[int32](), 0)
	if err != nil {
		return err
	}
	say("Allreduce %v %d %v Reduce %v", sf, si, mx, sm)
	pick := mpi.NewOp(func(a, b Plain) Plain {
		return Plain{A: a.A + b.A, B: max(a.B, b.B), C: [3]uint16{a.C[0] + b.C[0], a.C[1] ^ b.C[1], b.C[2]}, D: a.D || b.D, E: a.E * b.E, F: a.F - b.F}
	}, false)
	rp, err := mpi.Reduce(w, plainOf(r), pick, 0)
	if err != nil {
		return err
	}
	ap, err := mpi.Allreduce(w, plainOf(r), pick)
	if err != nil {
		return err
	}
	say("Reduce op %+v Allreduce op %+v", rp, ap)
	into2 := make([]float64, 2)
	if err := mpi.AllreduceSliceInto(w, []float64{float64(r) * 0.5, 1}, into2, mpi.Sum[float64]()); err != nil {
		return err
	}
	say("AllreduceSliceInto %v", into2)
	g, err := mpi.Gather(w, plainOf(r+50), 1%n)
	if err != nil {
		return err
	}
	ag, err := mpi.Allgather(w, []int32{int32(r), int32(-r) << 20})
	if err != nil {
		return err
	}
	say("Gather %+v Allgather %v", g, ag)
	var vs []float64
	if r == 0 {
		for i := range n {
			vs = append(vs, float64(i)*1.25)
		}
	}
	sc, err := mpi.Scatter(w, vs, 0)
	if err != nil {
		return err
	}
	outs := make([]int64, n)
	for i := range outs {
		outs[i] = int64(r*100+i) << 33
	}
	a2a, err := mpi.Alltoall(w, outs)
	if err != nil {
		return err
	}
	say("Scatter %v Alltoall %v", sc, a2a)
	scan, err := mpi.Scan(w, int64(r+1)<<36, mpi.Sum[int64]())
	if err != nil {
		return err
	}
	ex, err := mpi.Exscan(w, float64(r+1), mpi.Sum[float64]())
	if err != nil {
		return err
	}
	say("Scan %d Exscan %v %v", scan, ex, r > 0) // rank 0 has no prefix
	// Low level.
	lin := []float64{float64(r) + 0.25, 1e100}
	lout := make([]float64, 2)
	if err := w.Allreduce(f64bytes(lin), f64bytes(lout), 2, mpi.Float64, mpi.OpSum); err != nil {
		return err
	}
	lr := make([]float64, 2)
	if err := w.Reduce(f64bytes(lin), f64bytes(lr), 2, mpi.Float64, mpi.OpSum, 0); err != nil {
		return err
	}
	vec, err := mpi.NewVector(3, 1, 2, mpi.Int32)
	if err != nil {
		return err
	}
	if err := vec.Commit(); err != nil {
		return err
	}
	lb := make([]int32, 6)
	if r == 0 {
		for i := range lb {
			lb[i] = int32(0x01020300 + i)
		}
	}
	if err := w.Bcast(i32bytes(lb), 1, vec, 0); err != nil {
		return err
	}
	say("low Allreduce %v Reduce %v Bcast %v", lout, lr, lb)
	return nil
}
