package mpi_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"runtime"
	"testing"

	"github.com/mpigo/mpi"
)

// mustType returns a function that commits a new datatype and panics on
// error: it runs on rank goroutines, where t.Fatal must not be called; a
// panicking rank fails the job, and so the test.
func mustType(testing.TB) func(*mpi.Datatype, error) *mpi.Datatype {
	return func(dt *mpi.Datatype, err error) *mpi.Datatype {
		if err != nil {
			panic(err)
		}
		if err := dt.Commit(); err != nil {
			panic(err)
		}
		return dt
	}
}

// column returns the datatype of one column of a rows x cols matrix of
// float64 in row-major order.
func column(t testing.TB, rows, cols int) *mpi.Datatype {
	return mustType(t)(mpi.NewVector(rows, 1, cols, mpi.Float64))
}

// TestDerivedSendRecv sends columns of matrices with derived datatypes over
// every transport: small (eager) and large (rendezvous, several chunks)
// messages, derived on the sending side, the receiving side or both, with
// blocking, non-blocking, persistent, buffered and matched-probe calls.
func TestDerivedSendRecv(t *testing.T) {
	for _, rows := range []int{5, 70000} { // 40 bytes; 560 KB: more than two 256 KiB chunks
		const cols = 3
		matrix(t, 2, func(world *mpi.Comm) error {
			col := column(t, rows, cols)
			m := make([]float64, rows*cols)
			buf := mpi.AsBytes(m)
			want := func(i int) float64 { return float64(i*10 + 1) }
			switch world.Rank() {
			case 0:
				for i := 0; i < rows; i++ {
					m[i*cols+1] = want(i)
				}
				src := buf[8:] // column 1
				// 1: derived to contiguous.
				if err := world.Send(src, 1, col, 1, 1); err != nil {
					return err
				}
				// 2: derived to derived (column 2 on the receiver), non-blocking.
				r, err := world.Isend(src, 1, col, 1, 2)
				if err != nil {
					return err
				}
				if _, err := r.Wait(); err != nil {
					return err
				}
				// 3: contiguous to derived.
				flat := make([]float64, rows)
				for i := range flat {
					flat[i] = want(i)
				}
				if err := world.Send(mpi.AsBytes(flat), rows, mpi.Float64, 1, 3); err != nil {
					return err
				}
				// 4: persistent, twice.
				p, err := world.SendInit(src, 1, col, 1, 4)
				if err != nil {
					return err
				}
				for range 2 {
					if err := p.Start(); err != nil {
						return err
					}
					if _, err := p.Wait(); err != nil {
						return err
					}
				}
				// 5: buffered.
				if err := world.BufferAttach(make([]byte, rows*8+mpi.BsendOverhead)); err != nil {
					return err
				}
				if err := world.Bsend(src, 1, col, 1, 5); err != nil {
					return err
				}
				if _, err := world.BufferDetach(); err != nil {
					return err
				}
				// 6: synchronous, received through Mprobe.
				return world.Ssend(src, 1, col, 1, 6)
			case 1:
				checkCol := func(step string, b []float64, stride, off int) error {
					for i := 0; i < rows; i++ {
						if b[i*stride+off] != want(i) {
							return fmt.Errorf("%s: element %d is %v, want %v", step, i, b[i*stride+off], want(i))
						}
					}
					return nil
				}
				flat := make([]float64, rows)
				st, err := world.Recv(mpi.AsBytes(flat), rows, mpi.Float64, 0, 1)
				if err != nil {
					return err
				}
				if st.Count() != rows || st.GetCount(col) != 1 || st.GetElements(col) != rows {
					return fmt.Errorf("status: count %d, GetCount(col) %d, GetElements %d", st.Count(), st.GetCount(col), st.GetElements(col))
				}
				if err := checkCol("1", flat, 1, 0); err != nil {
					return err
				}
				for tag := 2; tag <= 5; tag++ {
					got := make([]float64, rows*cols)
					r, err := world.Irecv(mpi.AsBytes(got)[16:], 1, col, 0, tag)
					if err != nil {
						return err
					}
					if _, err := r.Wait(); err != nil {
						return err
					}
					if err := checkCol(fmt.Sprint(tag), got, cols, 2); err != nil {
						return err
					}
					for i, v := range got {
						if i%cols != 2 && v != 0 {
							return fmt.Errorf("tag %d: element %d outside the column written", tag, i)
						}
					}
					if tag == 4 { // the second persistent send
						if _, err := world.Recv(mpi.AsBytes(got)[16:], 1, col, 0, tag); err != nil {
							return err
						}
					}
				}
				msg, _, err := world.Mprobe(0, 6)
				if err != nil {
					return err
				}
				got := make([]float64, rows*cols)
				if _, err := msg.Recv(mpi.AsBytes(got), 1, col); err != nil {
					return err
				}
				return checkCol("6", got, cols, 0)
			}
			return nil
		})
	}
}

// TestDerivedTruncate: a message longer than a derived receive fills its
// elements, touches nothing else, and fails with ErrTruncate; GetElements
// counts the basic elements that arrived.
func TestDerivedTruncate(t *testing.T) {
	matrix(t, 2, func(world *mpi.Comm) error {
		if world.Rank() == 0 {
			v := make([]int32, 20000)
			for i := range v {
				v[i] = int32(i + 1)
			}
			return world.Send(mpi.AsBytes(v), len(v), mpi.Int32, 1, 0)
		}
		// Every other int32 of 15000 pairs: room for 15000 of the 20000.
		every := mustType(t)(mpi.NewVector(15000, 1, 2, mpi.Int32))
		got := make([]int32, 30000)
		st, err := world.Recv(mpi.AsBytes(got), 1, every, 0, 0)
		if !errors.Is(err, mpi.ErrTruncate) {
			return fmt.Errorf("err %v, want ErrTruncate", err)
		}
		if st.GetElements(every) != 15000 || st.GetCount(every) != 1 {
			return fmt.Errorf("elements %d, count %d", st.GetElements(every), st.GetCount(every))
		}
		for i, x := range got {
			want := int32(0)
			if i%2 == 0 {
				want = int32(i/2 + 1)
			}
			if x != want {
				return fmt.Errorf("element %d is %d, want %d", i, x, want)
			}
		}
		return nil
	})
}

type particle struct {
	Alive bool
	Pos   [3]float64
	ID    int32
}

type vec3 struct{ X, Y, Z float64 }

// TestDatatypeOfStruct: DatatypeOf gives a Go struct's type map. Without
// padding its messages are the typed API's []T, both ways; with padding
// they are the fields' data only, refused by a typed receive. A partial
// element counts its basic elements.
func TestDatatypeOfStruct(t *testing.T) {
	matrix(t, 2, func(world *mpi.Comm) error {
		dt, err := mpi.DatatypeOf[particle]()
		if err != nil {
			return err
		}
		if dt.Size() != 1+24+4 {
			return fmt.Errorf("size %d", dt.Size())
		}
		if lb, ext := dt.Extent(); lb != 0 || ext != 40 {
			return fmt.Errorf("extent %d %d", lb, ext)
		}
		vt, err := mpi.DatatypeOf[vec3]()
		if err != nil {
			return err
		}
		ps := []particle{{false, [3]float64{1, 2, 3}, 7}, {true, [3]float64{4, 5, 6}, 8}}
		vs := []vec3{{1, 2, 3}, {4, 5, 6}}
		if world.Rank() == 0 {
			if err := world.Send(mpi.AsBytes(vs), 2, vt, 1, 0); err != nil {
				return err
			}
			if err := mpi.Send(world, vs, 1, 1); err != nil {
				return err
			}
			if err := world.Send(mpi.AsBytes(ps), 2, dt, 1, 2); err != nil {
				return err
			}
			// The whole first element and the first field of the second.
			part := mustType(t)(mpi.NewStruct([]int{1, 1}, []int{0, 40}, []*mpi.Datatype{dt, mpi.Bool}))
			if err := world.Send(mpi.AsBytes(ps), 1, part, 1, 3); err != nil {
				return err
			}
			return world.Send(mpi.AsBytes(ps), 2, dt, 1, 4)
		}
		got, st, err := mpi.Recv[[]vec3](world, 0, 0)
		if err != nil || fmt.Sprint(got) != fmt.Sprint(vs) || st.Count() != 2 {
			return fmt.Errorf("typed receive of DatatypeOf[vec3]: %v %d %v", got, st.Count(), err)
		}
		vbuf := make([]vec3, 2)
		if st, err := world.Recv(mpi.AsBytes(vbuf), 2, vt, 0, 1); err != nil || vbuf[1] != vs[1] || st.GetCount(vt) != 2 {
			return fmt.Errorf("DatatypeOf[vec3] receive of a typed send: %v %v", vbuf, err)
		}
		buf := make([]particle, 2)
		if _, err := world.Recv(mpi.AsBytes(buf), 2, dt, 0, 2); err != nil || buf[0] != ps[0] || buf[1] != ps[1] {
			return fmt.Errorf("particles: %+v %v", buf, err)
		}
		clear(buf)
		st, err = world.Recv(mpi.AsBytes(buf), 2, dt, 0, 3)
		if err != nil {
			return err
		}
		if st.GetCount(dt) != mpi.Undefined || st.GetElements(dt) != 6 || buf[0] != ps[0] || !buf[1].Alive || buf[1].ID != 0 {
			return fmt.Errorf("partial: count %d elements %d %+v", st.GetCount(dt), st.GetElements(dt), buf)
		}
		if _, _, err := mpi.Recv[[]particle](world, 0, 4); !errors.Is(err, mpi.ErrType) {
			return fmt.Errorf("packed particles received as []particle: %v", err)
		}
		return nil
	})
}

func TestDatatypeErrors(t *testing.T) {
	if _, err := mpi.DatatypeOf[string](); !errors.Is(err, mpi.ErrType) {
		t.Errorf("DatatypeOf[string]: %v", err)
	}
	if err := mpi.Float64.Free(); !errors.Is(err, mpi.ErrType) {
		t.Errorf("freeing Float64: %v", err)
	}
	if _, err := mpi.NewVector(-1, 1, 1, mpi.Float64); !errors.Is(err, mpi.ErrArg) {
		t.Errorf("negative count: %v", err)
	}
	if _, err := mpi.NewContiguous(1, nil); !errors.Is(err, mpi.ErrType) {
		t.Errorf("nil old type: %v", err)
	}
	err := mpi.Run(2, func(world *mpi.Comm) error {
		if world.Rank() == 1 {
			return nil
		}
		v, _ := mpi.NewVector(2, 1, 2, mpi.Float64)
		buf := make([]byte, 64)
		if err := world.Send(buf, 1, v, 1, 0); !errors.Is(err, mpi.ErrType) || !bytes.Contains([]byte(err.Error()), []byte("not committed")) {
			return fmt.Errorf("uncommitted: %v", err)
		}
		v.Commit()
		if err := world.Send(buf[:16], 1, v, 1, 0); !errors.Is(err, mpi.ErrBuffer) {
			return fmt.Errorf("short buffer: %v", err)
		}
		back, _ := mpi.NewHvector(2, 1, -8, mpi.Float64)
		back.Commit()
		if err := world.Send(buf, 1, back, 1, 0); !errors.Is(err, mpi.ErrBuffer) {
			return fmt.Errorf("negative offsets: %v", err)
		}
		d, err := v.Dup()
		if err != nil || !d.Committed() || d.Size() != 16 {
			return fmt.Errorf("dup: %v %v", d, err)
		}
		v.Free()
		if err := world.Send(buf, 1, v, 1, 0); !errors.Is(err, mpi.ErrType) {
			return fmt.Errorf("freed: %v", err)
		}
		if _, err := v.Dup(); !errors.Is(err, mpi.ErrType) {
			return fmt.Errorf("dup of freed: %v", err)
		}
		if _, err := mpi.Pack(buf, 1, v, make([]byte, 16), 0); !errors.Is(err, mpi.ErrType) {
			return fmt.Errorf("pack with freed: %v", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestPackUnpack packs several datatypes one after another into one
// buffer, sends it as Packed, and unpacks on the other side.
func TestPackUnpack(t *testing.T) {
	matrix(t, 2, func(world *mpi.Comm) error {
		col := column(t, 4, 3)
		sub := mustType(t)(mpi.NewSubarray([]int{4, 3}, []int{2, 2}, []int{1, 1}, mpi.OrderFortran, mpi.Int16))
		nCol, _ := mpi.PackSize(1, col)
		nSub, _ := mpi.PackSize(1, sub)
		nInt, _ := mpi.PackSize(2, mpi.Int32)
		total := nCol + nSub + nInt
		if total != 32+8+8 {
			return fmt.Errorf("pack sizes %d %d %d", nCol, nSub, nInt)
		}
		if world.Rank() == 0 {
			m := []float64{0, 1, 0, 0, 2, 0, 0, 3, 0, 0, 4, 0}
			s := []int16{0, 0, 0, 0, 0, 5, 6, 0, 0, 7, 8, 0} // Fortran 4x3: (1,1)=5 (2,1)=6 (1,2)=7 (2,2)=8
			out := make([]byte, total)
			pos, err := mpi.Pack(mpi.AsBytes(m)[8:], 1, col, out, 0)
			if err != nil {
				return err
			}
			if pos, err = mpi.Pack(mpi.AsBytes(s), 1, sub, out, pos); err != nil {
				return err
			}
			if pos, err = mpi.Pack(mpi.AsBytes([]int32{9, 10}), 2, mpi.Int32, out, pos); err != nil {
				return err
			}
			if _, err := mpi.Pack(mpi.AsBytes(m), 1, col, out, pos); !errors.Is(err, mpi.ErrBuffer) {
				return fmt.Errorf("packing past the end: %v", err)
			}
			return world.Send(out, pos, mpi.Packed, 1, 0)
		}
		in := make([]byte, total)
		if _, err := world.Recv(in, total, mpi.Packed, 0, 0); err != nil {
			return err
		}
		m := make([]float64, 12)
		s := make([]int16, 12)
		ints := make([]int32, 2)
		pos, err := mpi.Unpack(in, 0, mpi.AsBytes(m), 1, col)
		if err != nil {
			return err
		}
		if pos, err = mpi.Unpack(in, pos, mpi.AsBytes(s), 1, sub); err != nil {
			return err
		}
		if pos, err = mpi.Unpack(in, pos, mpi.AsBytes(ints), 2, mpi.Int32); err != nil || pos != total {
			return fmt.Errorf("pos %d: %v", pos, err)
		}
		if fmt.Sprint(m, s, ints) != "[1 0 0 2 0 0 3 0 0 4 0 0] [0 0 0 0 0 5 6 0 0 7 8 0] [9 10]" {
			return fmt.Errorf("unpacked %v %v %v", m, s, ints)
		}
		return nil
	})
}

// TestPackExternal checks the external32 bytes through the public calls.
func TestPackExternal(t *testing.T) {
	dt := mustType(t)(mpi.NewStruct([]int{1, 1}, []int{0, 4}, []*mpi.Datatype{mpi.Int16, mpi.Float32}))
	v := make([]byte, 8) // int16 0x0102, pad, float32 1.0, in the machine's byte order
	binary.NativeEndian.PutUint16(v, 0x0102)
	binary.NativeEndian.PutUint32(v[4:], math.Float32bits(1))
	n, _ := mpi.PackExternalSize(1, dt)
	out := make([]byte, n)
	if _, err := mpi.PackExternal(v, 1, dt, out, 0); err != nil {
		t.Fatal(err)
	}
	if want := []byte{1, 2, 0x3f, 0x80, 0, 0}; !bytes.Equal(out, want) {
		t.Fatalf("external32 % x, want % x", out, want)
	}
	back := make([]byte, 8)
	if pos, err := mpi.UnpackExternal(out, 0, back, 1, dt); err != nil || pos != 6 || !bytes.Equal(back[:2], v[:2]) || !bytes.Equal(back[4:], v[4:]) {
		t.Fatalf("unpack: % x %d %v", back, pos, err)
	}
	bad := []byte{2}
	if _, err := mpi.UnpackExternal(bad, 0, make([]byte, 1), 1, mpi.Bool); !errors.Is(err, mpi.ErrType) {
		t.Fatalf("bool 2: %v", err)
	}
}

// A column of a row-major matrix travels as a derived datatype: the
// sender gathers it and the receiver scatters it into another column, with
// no packing by the program.
func ExampleNewVector() {
	mpi.Run(2, func(world *mpi.Comm) error {
		const rows, cols = 3, 4
		col, _ := mpi.NewVector(rows, 1, cols, mpi.Float64) // every cols-th float64
		col.Commit()
		m := make([]float64, rows*cols)
		if world.Rank() == 0 {
			for i := range m {
				m[i] = float64(i)
			}
			return world.Send(mpi.AsBytes(m)[1*8:], 1, col, 1, 0) // column 1
		}
		st, err := world.Recv(mpi.AsBytes(m)[3*8:], 1, col, 0, 0) // into column 3
		fmt.Println(m, st.GetElements(col), err)
		return nil
	})
	// Output: [0 0 0 1 0 0 0 5 0 0 0 9] 3 <nil>
}

// DatatypeOf turns a Go struct into a datatype for the low-level calls.
func ExampleDatatypeOf() {
	type point struct {
		X, Y float64
		Hit  bool
	}
	dt, _ := mpi.DatatypeOf[point]()
	lb, extent := dt.Extent()
	fmt.Println(dt.Size(), lb, extent)
	// Output: 17 0 24
}

// Pack several pieces into one buffer, then unpack them in the same order.
func ExamplePack() {
	sub, _ := mpi.NewSubarray([]int{3, 3}, []int{2, 2}, []int{1, 1}, mpi.OrderC, mpi.Int32)
	sub.Commit()
	grid := []int32{1, 2, 3, 4, 5, 6, 7, 8, 9}
	packed := make([]byte, 64)
	pos, _ := mpi.Pack(mpi.AsBytes(grid), 1, sub, packed, 0)
	pos, _ = mpi.Pack(mpi.AsBytes([]int32{42}), 1, mpi.Int32, packed, pos)

	out := make([]int32, 9)
	var answer [1]int32
	p, _ := mpi.Unpack(packed, 0, mpi.AsBytes(out), 1, sub)
	p, _ = mpi.Unpack(packed, p, mpi.AsBytes(answer[:]), 1, mpi.Int32)
	fmt.Println(pos, p, out, answer[0])
	// Output: 20 20 [0 0 0 0 5 6 0 8 9] 42
}

// PackExternal writes the portable external32 format: big-endian.
func ExamplePackExternal() {
	out := make([]byte, 4)
	mpi.PackExternal(mpi.AsBytes([]int32{258}), 1, mpi.Int32, out, 0)
	fmt.Printf("% x\n", out)
	// Output: 00 00 01 02
}

// NewDarray gives each rank its block of a distributed global array.
func ExampleNewDarray() {
	for rank := range 4 {
		dt, _ := mpi.NewDarray(4, rank, []int{4, 4},
			[]mpi.Distribution{mpi.DistributeBlock, mpi.DistributeCyclic},
			[]int{mpi.DistributeDfltDarg, 1}, []int{2, 2}, mpi.OrderC, mpi.Int8)
		dt.Commit()
		global := []byte("abcdefghijklmnop") // 4x4, row-major
		local := make([]byte, 4)
		mpi.Pack(global, 1, dt, local, 0)
		fmt.Printf("rank %d: %s\n", rank, local)
	}
	// Output:
	// rank 0: aceg
	// rank 1: bdfh
	// rank 2: ikmo
	// rank 3: jlnp
}

// TestDerivedStreams: sending and receiving a 4 MiB message with derived
// datatypes never stages the whole message: over every transport, the
// bytes allocated per message stay far below its size (chunks are pooled).
func TestDerivedStreams(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under the race detector")
	}
	const n = 1 << 19 // float64s: 4 MiB of data in an 8 MiB buffer
	for _, tc := range transports() {
		t.Run(tc.name, func(t *testing.T) {
			var perMsg uint64
			err := mpi.RunConfig(2, tc.cfg, func(world *mpi.Comm) error {
				every := mustType(t)(mpi.NewVector(n, 1, 2, mpi.Float64))
				buf := make([]byte, 2*8*n)
				const rounds = 6
				var before, after runtime.MemStats
				for i := 0; i < rounds+1; i++ {
					if i == 1 && world.Rank() == 0 {
						runtime.ReadMemStats(&before)
					}
					if world.Rank() == 0 {
						if err := world.Send(buf, 1, every, 1, 0); err != nil {
							return err
						}
						if _, err := world.Recv(buf, 1, every, 1, 0); err != nil {
							return err
						}
					} else {
						if _, err := world.Recv(buf, 1, every, 0, 0); err != nil {
							return err
						}
						if err := world.Send(buf, 1, every, 0, 0); err != nil {
							return err
						}
					}
				}
				if world.Rank() == 0 {
					runtime.ReadMemStats(&after)
					perMsg = (after.TotalAlloc - before.TotalAlloc) / (2 * rounds)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if perMsg > 1<<20 { // tcp's reader may allocate a chunk or two
				t.Fatalf("%d bytes allocated per 4 MiB message", perMsg)
			}
			t.Logf("%d bytes allocated per 4 MiB message", perMsg)
		})
	}
}

// TestDerivedSendrecvReplace exchanges strided data round a ring with
// SendrecvReplace and Sendrecv, small and large.
func TestDerivedSendrecvReplace(t *testing.T) {
	for _, n := range []int{3, 50000} {
		matrix(t, 3, func(world *mpi.Comm) error {
			every := mustType(t)(mpi.NewVector(n, 1, 3, mpi.Int32))
			me, size := world.Rank(), world.Size()
			right, left := (me+1)%size, (me+size-1)%size
			buf := make([]int32, 3*n)
			for i := range n {
				buf[3*i] = int32(me*1000000 + i)
				buf[3*i+1] = -1
			}
			if _, err := world.SendrecvReplace(mpi.AsBytes(buf), 1, every, right, 0, left, 0); err != nil {
				return err
			}
			for i := range n {
				if buf[3*i] != int32(left*1000000+i) || buf[3*i+1] != -1 {
					return fmt.Errorf("SendrecvReplace: element %d is %d (gap %d)", i, buf[3*i], buf[3*i+1])
				}
			}
			out := make([]int32, n)
			st, err := world.Sendrecv(mpi.AsBytes(buf), 1, every, right, 1, mpi.AsBytes(out), n, mpi.Int32, left, 1)
			if err != nil {
				return err
			}
			if st.Count() != n || out[n-1] != int32(((left+size-1)%size)*1000000+n-1) {
				return fmt.Errorf("Sendrecv: count %d, last %d", st.Count(), out[n-1])
			}
			return nil
		})
	}
}

// A block of a Fortran-ordered (column-major) array, received into a
// contiguous buffer.
func ExampleNewSubarray() {
	mpi.Run(2, func(world *mpi.Comm) error {
		if world.Rank() == 0 {
			// A 3x4 array in column-major order: a[i][j] at i + 3*j.
			a := []int16{11, 21, 31, 12, 22, 32, 13, 23, 33, 14, 24, 34}
			block, _ := mpi.NewSubarray([]int{3, 4}, []int{2, 2}, []int{1, 2}, mpi.OrderFortran, mpi.Int16)
			block.Commit()
			return world.Send(mpi.AsBytes(a), 1, block, 1, 0) // rows 1-2, columns 2-3
		}
		got := make([]int16, 4)
		_, err := world.Recv(mpi.AsBytes(got), 4, mpi.Int16, 0, 0)
		fmt.Println(got, err)
		return nil
	})
	// Output: [23 33 24 34] <nil>
}

// NewStruct describes records by hand; GetElements counts the basic
// elements of a partly received record.
func ExampleStatus_GetElements() {
	rec, _ := mpi.NewStruct([]int{1, 2}, []int{0, 8}, []*mpi.Datatype{mpi.Int32, mpi.Float64}) // {int32; pad; [2]float64}
	rec.Commit()
	mpi.Run(2, func(world *mpi.Comm) error {
		if world.Rank() == 0 {
			return world.Send(make([]byte, 12), 12, mpi.Byte, 1, 0) // an int32 and one float64
		}
		buf := make([]byte, 24)
		st, err := world.Recv(buf, 1, rec, 0, 0)
		fmt.Println(st.GetCount(rec) == mpi.Undefined, st.GetElements(rec), err)
		return nil
	})
	// Output: true 2 <nil>
}

// TestCommitPredefinedAtOnce: goroutine ranks share the predefined
// datatypes, and Commit of one (which does nothing) may come from all of
// them at once; it wrote the datatype's committed flag each time, a data
// race that the race detector reports (TestPartitionedShortMessage found
// it).
func TestCommitPredefinedAtOnce(t *testing.T) {
	err := mpi.Run(4, func(c *mpi.Comm) error {
		for range 2000 {
			for _, dt := range []*mpi.Datatype{mpi.Float64, mpi.Int32, mpi.Byte} {
				if err := dt.Commit(); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
