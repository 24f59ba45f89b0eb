package mpi_test

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/mpigo/mpi"
)

func TestErrorClassAndString(t *testing.T) {
	if mpi.ErrorClass(nil) != nil || mpi.ErrorString(nil) != "no error" {
		t.Fatalf("nil: %v %q", mpi.ErrorClass(nil), mpi.ErrorString(nil))
	}
	err := mpi.Run(2, func(c *mpi.Comm) error {
		_, _, err := mpi.Recv[int](c, 5, 0)
		if cl := mpi.ErrorClass(err); cl != mpi.ErrRank {
			return fmt.Errorf("class of %v: %v", err, cl)
		}
		if s := mpi.ErrorString(err); s != err.Error() || !strings.Contains(s, "invalid rank") {
			return fmt.Errorf("string %q", s)
		}
		// Wrapped further, the class is still found.
		if cl := mpi.ErrorClass(fmt.Errorf("context: %w", err)); cl != mpi.ErrRank {
			return fmt.Errorf("class of wrapped: %v", cl)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if mpi.ErrorClass(mpi.ErrTruncate) != mpi.ErrTruncate {
		t.Error("a class is its own class")
	}
	if mpi.ErrorClass(fmt.Errorf("x: %w", mpi.ErrTag)) != mpi.ErrTag {
		t.Error("a wrapped class")
	}
	// Any Class of an *Error is a class, also one this list does not know.
	novel := errors.New("novel class")
	if mpi.ErrorClass(fmt.Errorf("w: %w", &mpi.Error{Class: novel, Op: "X"})) != novel {
		t.Error("the Class of an *Error")
	}
	if mpi.ErrorClass(&mpi.Error{Op: "X"}) != mpi.ErrOther {
		t.Error("an *Error without a Class")
	}
	if mpi.ErrorClass(io.EOF) != mpi.ErrOther {
		t.Error("a foreign error is ErrOther")
	}
	if mpi.ErrorString(mpi.ErrTruncate) != "message truncated" {
		t.Errorf("ErrorString(ErrTruncate) = %q", mpi.ErrorString(mpi.ErrTruncate))
	}
}

func TestUserErrorClasses(t *testing.T) {
	class := mpi.AddErrorClass("solver diverged")
	other := mpi.AddErrorClass("solver diverged")
	if class == other || errors.Is(class, other) {
		t.Fatal("two classes with one message are the same")
	}
	code, err := mpi.AddErrorCode(class, "residual grew")
	if err != nil {
		t.Fatal(err)
	}
	code2, _ := mpi.AddErrorCode(class, "NaN in residual")
	if !errors.Is(code, class) || errors.Is(code, other) || errors.Is(code, code2) || errors.Is(class, code) {
		t.Fatal("errors.Is relations of codes and classes")
	}
	if mpi.ErrorClass(code) != class || mpi.ErrorClass(class) != class {
		t.Fatal("ErrorClass of a user code or class")
	}
	if mpi.ErrorString(code) != "residual grew" || mpi.ErrorString(class) != "solver diverged" {
		t.Fatalf("strings %q %q", mpi.ErrorString(code), mpi.ErrorString(class))
	}
	if err := mpi.AddErrorString(code, "residual grew by 1e3"); err != nil {
		t.Fatal(err)
	}
	if mpi.ErrorString(code) != "residual grew by 1e3" || code.Error() != "residual grew by 1e3" {
		t.Fatalf("after AddErrorString: %q", mpi.ErrorString(code))
	}
	// A user class inside an *Error.
	e := &mpi.Error{Class: code, Op: "Solve", Msg: "step 7"}
	if !errors.Is(e, class) || mpi.ErrorClass(e) != class || !strings.Contains(e.Error(), "residual grew by 1e3") {
		t.Fatalf("in an *Error: %v, class %v", e, mpi.ErrorClass(e))
	}
	// Refusals.
	if _, err := mpi.AddErrorCode(mpi.ErrOther, "x"); !errors.Is(err, mpi.ErrArg) {
		t.Errorf("code of a predefined class: %v", err)
	}
	if _, err := mpi.AddErrorCode(code, "x"); !errors.Is(err, mpi.ErrArg) {
		t.Errorf("code of a code: %v", err)
	}
	if _, err := mpi.AddErrorCode(nil, "x"); !errors.Is(err, mpi.ErrArg) {
		t.Errorf("code of nil: %v", err)
	}
	if err := mpi.AddErrorString(mpi.ErrTruncate, "x"); !errors.Is(err, mpi.ErrArg) || mpi.ErrTruncate.Error() != "message truncated" {
		t.Errorf("string of a predefined class: %v", err)
	}
	if err := mpi.AddErrorString(nil, "x"); !errors.Is(err, mpi.ErrArg) {
		t.Errorf("string of nil: %v", err)
	}
}

// CallErrHandler runs a communicator's handler as a failed call would, on
// every transport; communicators made from it inherit the handler.
func TestCallErrHandler(t *testing.T) {
	matrix(t, 3, func(c *mpi.Comm) error {
		if err := c.CallErrHandler(nil); err != nil {
			return err
		}
		// ErrorsReturn: the error comes back unchanged.
		mine := mpi.AddErrorClass("library failure")
		if err := c.CallErrHandler(mine); err != mine {
			return check(c, false, "ErrorsReturn changed the error: %v", err)
		}
		var calls atomic.Int32
		var mu sync.Mutex
		var seen []error
		h := mpi.NewErrHandler(func(hc *mpi.Comm, err error) {
			calls.Add(1)
			mu.Lock()
			seen = append(seen, err)
			mu.Unlock()
		})
		d, err := c.Dup()
		if err != nil {
			return err
		}
		d.SetErrHandler(h)
		e := &mpi.Error{Class: mine, Op: "MyLibraryCall", Rank: c.Rank()}
		if got := d.CallErrHandler(e); got != e {
			return check(c, false, "CallErrHandler returned %v", got)
		}
		// A real failure on d goes through the same handler.
		if err := mpi.Send(d, 1, d.Size()+3, 0); !errors.Is(err, mpi.ErrRank) {
			return check(c, false, "bad send: %v", err)
		}
		// A communicator made from d inherits it.
		s, err := d.Split(0, c.Rank())
		if err != nil {
			return err
		}
		if s.CallErrHandler(mpi.ErrOther) != mpi.ErrOther {
			return check(c, false, "on split")
		}
		if calls.Load() != 3 || seen[0] != e || !errors.Is(seen[1], mpi.ErrRank) || seen[2] != mpi.ErrOther {
			return check(c, false, "handler saw %d calls: %v", calls.Load(), seen)
		}
		// The handler's communicator is the one of the call, and c's own
		// handler is untouched.
		if c.ErrHandler() != mpi.ErrorsReturn || d.ErrHandler() != h {
			return check(c, false, "handlers changed")
		}
		return mpi.Barrier(c)
	})
}

func TestEnvelopeAndContents(t *testing.T) {
	vec, err := mpi.NewVector(3, 2, 5, mpi.Float64)
	if err != nil {
		t.Fatal(err)
	}
	type rec struct {
		A int32
		B float64
	}
	var r rec
	dB := mpi.AintDiff(mpi.GetAddress(&r.B), mpi.GetAddress(&r))
	st, err := mpi.NewStruct([]int{1, 2}, []int{0, dB}, []*mpi.Datatype{mpi.Int32, vec})
	if err != nil {
		t.Fatal(err)
	}
	res, _ := mpi.NewResized(vec, 0, 100)
	sub, _ := mpi.NewSubarray([]int{4, 6}, []int{2, 3}, []int{1, 2}, mpi.OrderFortran, mpi.Int8)
	dup, _ := vec.Dup()
	hib, _ := mpi.NewHindexedBlock(2, []int{0, 64}, mpi.Int16)
	goType, _ := mpi.DatatypeOf[rec]()
	cases := []struct {
		dt                  *mpi.Datatype
		comb                mpi.Combiner
		ints, addrs, ntypes string
	}{
		{vec, mpi.CombinerVector, "[3 2 5]", "[]", "[Float64]"},
		{st, mpi.CombinerStruct, "[2 1 2]", fmt.Sprint([]int{0, dB}), "[Int32 Vector(Float64)]"},
		{res, mpi.CombinerResized, "[]", "[0 100]", "[Vector(Float64)]"},
		{sub, mpi.CombinerSubarray, fmt.Sprint([]int{2, 4, 6, 2, 3, 1, 2, int(mpi.OrderFortran)}), "[]", "[Int8]"},
		{dup, mpi.CombinerDup, "[]", "[]", "[Vector(Float64)]"},
		{hib, mpi.CombinerHindexedBlock, "[2 2]", "[0 64]", "[Int16]"},
		{goType, mpi.CombinerStruct, "[2 1 1]", fmt.Sprint([]int{0, dB}), "[Int32 Float64]"},
	}
	for _, tc := range cases {
		comb, ni, na, nt := tc.dt.Envelope()
		ints, addrs, types, err := tc.dt.Contents()
		if err != nil {
			t.Errorf("%s: %v", tc.dt, err)
			continue
		}
		if comb != tc.comb || ni != len(ints) || na != len(addrs) || nt != len(types) ||
			fmt.Sprint(ints) != tc.ints || fmt.Sprint(addrs) != tc.addrs || fmt.Sprint(types) != tc.ntypes {
			t.Errorf("%s: %v %d %d %d, contents %v %v %v; want %v %s %s %s", tc.dt, comb, ni, na, nt, ints, addrs, types, tc.comb, tc.ints, tc.addrs, tc.ntypes)
		}
	}
	// Contents are copies.
	ints, _, _, _ := vec.Contents()
	ints[0] = 99
	if again, _, _, _ := vec.Contents(); again[0] != 3 {
		t.Error("Contents shares its slices")
	}
	// Named datatypes.
	for _, dt := range []*mpi.Datatype{mpi.Float64, mpi.Byte, mpi.IntLoc} {
		if c, ni, na, nt := dt.Envelope(); c != mpi.CombinerNamed || ni+na+nt != 0 {
			t.Errorf("%s: %v %d %d %d", dt, c, ni, na, nt)
		}
		if _, _, _, err := dt.Contents(); !errors.Is(err, mpi.ErrArg) {
			t.Errorf("%s: Contents of a named type: %v", dt, err)
		}
	}
	var nilType *mpi.Datatype
	if _, _, _, err := nilType.Contents(); err == nil {
		t.Error("Contents of nil")
	}
	// A type built from one its owner has freed since still answers
	// with a live equivalent of it (mpi4py's pickling of datatypes).
	d, _ := mpi.Int32.Dup()
	contig, _ := mpi.NewContiguous(2, d)
	if err := d.Free(); err != nil {
		t.Fatal(err)
	}
	_, _, types, err := contig.Contents()
	if err != nil || len(types) != 1 || types[0].Size() != 4 {
		t.Fatalf("Contents after the member was freed: %v, %v", types, err)
	}
	if c, _, _, nt := types[0].Envelope(); c != mpi.CombinerDup || nt != 1 {
		t.Errorf("the freed member's envelope: %v, %d types", c, nt)
	}
	if _, _, inner, err := types[0].Contents(); err != nil || len(inner) != 1 || inner[0] != mpi.Int32 {
		t.Errorf("the freed member's contents: %v, %v", inner, err)
	}
	if v, err := types[0].Dup(); err != nil || v.Size() != 4 {
		t.Errorf("the freed member is not usable: %v", err)
	}
}

// GetAddress displacements relative to a base value, with BytesOf of it as
// the buffer: MPI's struct-of-fields idiom without MPI_BOTTOM.
func TestGetAddressStruct(t *testing.T) {
	type particle struct {
		X, Y  float64
		Tag   int8
		Flags [3]uint16
		Mass  float32
	}
	err := mpi.Run(2, func(c *mpi.Comm) error {
		var p particle
		base := mpi.GetAddress(&p)
		displs := []int{
			mpi.GetAddress(&p.X) - base,
			mpi.AintDiff(mpi.GetAddress(&p.Flags), base),
			mpi.AintDiff(mpi.GetAddress(&p.Mass), base),
		}
		if displs[1] != int(unsafe.Offsetof(p.Flags)) || mpi.AintAdd(base, displs[2]) != mpi.GetAddress(&p.Mass) {
			return fmt.Errorf("displacements %v", displs)
		}
		dt, err := mpi.NewStruct([]int{2, 3, 1}, displs, []*mpi.Datatype{mpi.Float64, mpi.Uint16, mpi.Float32})
		if err != nil {
			return err
		}
		if err := dt.Commit(); err != nil {
			return err
		}
		buf, err := mpi.BytesOf(&p)
		if err != nil {
			return err
		}
		if c.Rank() == 0 {
			p = particle{X: 1, Y: 2, Tag: 9, Flags: [3]uint16{4, 5, 6}, Mass: 7}
			return c.Send(buf, 1, dt, 1, 0)
		}
		p.Tag = -1
		if _, err := c.Recv(buf, 1, dt, 0, 0); err != nil {
			return err
		}
		// Tag is not in the datatype: untouched.
		if want := (particle{X: 1, Y: 2, Tag: -1, Flags: [3]uint16{4, 5, 6}, Mass: 7}); p != want {
			return fmt.Errorf("received %+v, want %+v", p, want)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := mpi.BytesOf[string](new(string)); !errors.Is(err, mpi.ErrType) {
		t.Errorf("BytesOf a string: %v", err)
	}
	if _, err := mpi.BytesOf[int](nil); !errors.Is(err, mpi.ErrType) {
		t.Errorf("BytesOf nil: %v", err)
	}
}

func TestTypeMatchSizeAndF90(t *testing.T) {
	for _, tc := range []struct {
		class mpi.TypeClass
		size  int
		want  *mpi.Datatype
	}{
		{mpi.TypeClassInteger, 1, mpi.Int8}, {mpi.TypeClassInteger, 2, mpi.Int16},
		{mpi.TypeClassInteger, 4, mpi.Int32}, {mpi.TypeClassInteger, 8, mpi.Int64},
		{mpi.TypeClassReal, 4, mpi.Float32}, {mpi.TypeClassReal, 8, mpi.Float64},
		{mpi.TypeClassComplex, 8, mpi.Complex64}, {mpi.TypeClassComplex, 16, mpi.Complex128},
	} {
		if got, err := mpi.TypeMatchSize(tc.class, tc.size); got != tc.want || err != nil {
			t.Errorf("TypeMatchSize(%d, %d) = %v, %v", tc.class, tc.size, got, err)
		}
	}
	for _, bad := range [][2]int{{int(mpi.TypeClassInteger), 3}, {int(mpi.TypeClassReal), 16}, {int(mpi.TypeClassComplex), 4}, {99, 4}, {0, 8}} {
		if _, err := mpi.TypeMatchSize(mpi.TypeClass(bad[0]), bad[1]); !errors.Is(err, mpi.ErrArg) {
			t.Errorf("TypeMatchSize(%d, %d): %v", bad[0], bad[1], err)
		}
	}
	check := func(dt *mpi.Datatype, err error, size int, comb mpi.Combiner, ints string) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		c, _, _, _ := dt.Envelope()
		got, _, _, _ := dt.Contents()
		if dt.Size() != size || c != comb || fmt.Sprint(got) != ints || !dt.Committed() {
			t.Errorf("%s: size %d, %v %v", dt, dt.Size(), c, got)
		}
	}
	dt, err := mpi.TypeCreateF90Real(6, 30)
	check(dt, err, 4, mpi.CombinerF90Real, "[6 30]")
	dt, err = mpi.TypeCreateF90Real(10, mpi.Undefined)
	check(dt, err, 8, mpi.CombinerF90Real, fmt.Sprint([]int{10, mpi.Undefined}))
	dt, err = mpi.TypeCreateF90Complex(15, 300)
	check(dt, err, 16, mpi.CombinerF90Complex, "[15 300]")
	dt, err = mpi.TypeCreateF90Integer(9)
	check(dt, err, 4, mpi.CombinerF90Integer, "[9]")
	dt, err = mpi.TypeCreateF90Integer(2)
	check(dt, err, 1, mpi.CombinerF90Integer, "[2]")
	if _, err := mpi.TypeCreateF90Real(16, 0); !errors.Is(err, mpi.ErrArg) {
		t.Errorf("p=16: %v", err)
	}
	if _, err := mpi.TypeCreateF90Integer(19); !errors.Is(err, mpi.ErrArg) {
		t.Errorf("r=19: %v", err)
	}
	if err := dt.Free(); err == nil {
		t.Error("an F90 datatype is predefined and cannot be freed")
	}
	// They communicate and reduce like their base type.
	err = mpi.Run(2, func(c *mpi.Comm) error {
		i32, _ := mpi.TypeCreateF90Integer(9)
		in, out := []int32{int32(c.Rank() + 1)}, []int32{0}
		if err := c.Allreduce(mpi.AsBytes(in), mpi.AsBytes(out), 1, i32, mpi.OpSum); err != nil || out[0] != 3 {
			return fmt.Errorf("Allreduce over F90Integer(9): %v %v", out, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestEnvironment(t *testing.T) {
	if v, s := mpi.GetVersion(); v != 4 || s != 1 {
		t.Errorf("GetVersion %d.%d", v, s)
	}
	if lv := mpi.GetLibraryVersion(); !strings.Contains(lv, "mpigo "+mpi.Version) {
		t.Errorf("GetLibraryVersion %q", lv)
	}
	host, _ := os.Hostname()
	if name, err := mpi.GetProcessorName(); err != nil || name != host || name == "" {
		t.Errorf("GetProcessorName %q %v", name, err)
	}
	if tick := mpi.Wtick(); tick <= 0 || tick > 0.01 {
		t.Errorf("Wtick %g", tick)
	}
	t0 := mpi.Wtime()
	time.Sleep(20 * time.Millisecond)
	if d := mpi.Wtime() - t0; d < 0.019 || d > 5 {
		t.Errorf("Wtime measured %g s for a 20 ms sleep", d)
	}
	if mpi.QueryThread() != mpi.ThreadMultiple || !(mpi.ThreadSingle < mpi.ThreadFunneled && mpi.ThreadFunneled < mpi.ThreadSerialized && mpi.ThreadSerialized < mpi.ThreadMultiple) {
		t.Error("thread levels")
	}
	if mpi.IsThreadMain() {
		t.Error("the test's goroutine is no rank's main goroutine")
	}
	err := mpi.Run(3, func(c *mpi.Comm) error {
		if !mpi.Initialized() || mpi.Finalized() {
			return fmt.Errorf("inside a job: Initialized %v Finalized %v", mpi.Initialized(), mpi.Finalized())
		}
		if !mpi.IsThreadMain() {
			return fmt.Errorf("rank %d: its function's goroutine is not main", c.Rank())
		}
		other := make(chan bool)
		go func() { other <- mpi.IsThreadMain() }()
		if <-other {
			return fmt.Errorf("rank %d: a goroutine it started is main", c.Rank())
		}
		return mpi.Barrier(c)
	})
	if err != nil {
		t.Fatal(err)
	}
	if !mpi.Initialized() || !mpi.Finalized() || mpi.IsThreadMain() {
		t.Errorf("after the job: Initialized %v Finalized %v", mpi.Initialized(), mpi.Finalized())
	}
}

func TestPcontrol(t *testing.T) {
	defer mpi.SetPcontrolHook(nil)
	defer mpi.Pcontrol(1)
	var got []string
	mpi.SetPcontrolHook(func(level int, args ...any) { got = append(got, fmt.Sprint(level, args)) })
	mpi.Pcontrol(0)
	if mpi.PcontrolLevel() != 0 {
		t.Errorf("level %d", mpi.PcontrolLevel())
	}
	mpi.Pcontrol(2, "phase", 3)
	mpi.SetPcontrolHook(nil)
	mpi.Pcontrol(1)
	if fmt.Sprint(got) != "[0 [] 2 [phase 3]]" || mpi.PcontrolLevel() != 1 {
		t.Errorf("hook saw %v, level %d", got, mpi.PcontrolLevel())
	}
}

// CallErrHandler with ErrorsAreFatal aborts the job, naming the error:
// Run returns it and the other rank's call fails.
func TestCallErrHandlerFatal(t *testing.T) {
	err := mpi.Run(2, func(world *mpi.Comm) error {
		world.SetErrHandler(mpi.ErrorsAreFatal)
		if world.Rank() == 0 {
			return world.CallErrHandler(mpi.AddErrorClass("checksum mismatch in layer 3"))
		}
		_, _, err := mpi.Recv[int](world, 0, 0)
		if !errors.Is(err, mpi.ErrProcFailed) {
			return fmt.Errorf("rank 1's Recv: %v, want ErrProcFailed", err)
		}
		return nil
	})
	if err == nil || !strings.Contains(err.Error(), "checksum mismatch in layer 3") {
		t.Fatalf("Run returned %v", err)
	}
}
