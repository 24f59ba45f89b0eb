package io_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"sync"
	"testing"

	"github.com/mpigo/mpi"
)

// The representations these tests register, once per process (a
// registration is for the whole process, and every transport of the
// matrix runs its ranks in this one).
var (
	registerOnce sync.Once
	registerErr  error
	errBoom      = errors.New("boom")
)

const (
	repBE64    = "conf-int32-as-be64" // int32 stored as a big-endian 8-byte integer
	repBadW    = "conf-write-fails"   // the write conversion fails
	repPanicR  = "conf-read-panics"   // the read conversion panics
	repPadded  = "conf-padded"        // no conversion: native bytes in 8-byte slots
	repTooNarr = "conf-too-narrow"    // no conversion, int32 given 2 bytes: unusable
)

// be64Write stores each int32 item of userbuf (a contiguous []int32) as
// a big-endian int64.
func be64Write(userbuf []byte, dt *mpi.Datatype, count int, filebuf []byte, position int) error {
	for i := 0; i < count; i++ {
		v := int32(binary.NativeEndian.Uint32(userbuf[4*(position+i):]))
		binary.BigEndian.PutUint64(filebuf[8*i:], uint64(int64(v)))
	}
	return nil
}

// be64Read is the reverse, refusing a number an int32 cannot hold.
func be64Read(userbuf []byte, dt *mpi.Datatype, count int, filebuf []byte, position int) error {
	for i := 0; i < count; i++ {
		v := int64(binary.BigEndian.Uint64(filebuf[8*i:]))
		if v < math.MinInt32 || v > math.MaxInt32 {
			return fmt.Errorf("item %d: %d does not fit in an int32", i, v)
		}
		binary.NativeEndian.PutUint32(userbuf[4*(position+i):], uint32(int32(v)))
	}
	return nil
}

func extentWith(int32Size int64) mpi.DatarepExtent {
	return func(dt *mpi.Datatype) (int64, error) {
		if dt == mpi.Int32 {
			return int32Size, nil
		}
		return int64(dt.Size()), nil
	}
}

func registerReps(t *testing.T) {
	t.Helper()
	registerOnce.Do(func() {
		failW := func([]byte, *mpi.Datatype, int, []byte, int) error { return errBoom }
		panicR := func([]byte, *mpi.Datatype, int, []byte, int) error { panic("conversion bug") }
		for _, r := range []struct {
			name        string
			read, write mpi.DatarepConversion
			ext         int64
		}{
			{repBE64, be64Read, be64Write, 8},
			{repBadW, be64Read, failW, 8},
			{repPanicR, panicR, be64Write, 8},
			{repPadded, nil, nil, 8},
			{repTooNarr, nil, nil, 2},
		} {
			if err := mpi.RegisterDatarep(r.name, r.read, r.write, extentWith(r.ext)); err != nil {
				registerErr = err
				return
			}
		}
	})
	if registerErr != nil {
		t.Fatal(registerErr)
	}
}

// be64Bytes is the file image of vals in repBE64.
func be64Bytes(vals []int32) []byte {
	b := make([]byte, 8*len(vals))
	for i, v := range vals {
		binary.BigEndian.PutUint64(b[8*i:], uint64(int64(v)))
	}
	return b
}

// TestDatarep writes int32s through a registered representation that
// stores each as 8 big-endian bytes, independently and collectively, with
// a contiguous view and with an interleaved vector view (whose stride
// scales with the 8-byte file extent), reads them back and checks the
// file byte for byte.
func TestDatarep(t *testing.T) {
	registerReps(t)
	for _, tc := range []struct {
		name          string
		coll, strided bool
	}{
		{"independent-contiguous", false, false},
		{"collective-contiguous", true, false},
		{"independent-strided", false, true},
		{"collective-strided", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			runFile(t, 2, "datarep", func(c *mpi.Comm, name string) error {
				f, err := open(c, name, mpi.ModeCreate|mpi.ModeRdwr)
				if err != nil {
					return err
				}
				r := c.Rank()
				vals := []int32{int32(100*r + 1), -int32(100*r + 2), int32(100*r + 3)}
				var off int64
				if tc.strided {
					// Every 2nd int32 of the file is this rank's: a vector
					// of stride 2 int32s, 16 bytes in the file.
					ft, err := mpi.NewVector(3, 1, 2, mpi.Int32)
					if err != nil {
						return err
					}
					if err := ft.Commit(); err != nil {
						return err
					}
					if err := f.SetView(int64(8*r), mpi.Int32, ft, repBE64, nil); err != nil {
						return err
					}
					if ext, err := f.TypeExtent(ft); err != nil || ext != 40 {
						return fmt.Errorf("rank %d: TypeExtent(vector) = %d, %v; want 40 (2 strides of 16 bytes and one of 8)", r, ext, err)
					}
				} else {
					if err := f.SetView(0, mpi.Int32, mpi.Int32, repBE64, nil); err != nil {
						return err
					}
					off = int64(3 * r)
				}
				if ext, err := f.TypeExtent(mpi.Int32); err != nil || ext != 8 {
					return fmt.Errorf("rank %d: TypeExtent(Int32) = %d, %v; want 8", r, ext, err)
				}
				write, read := mpi.WriteAt[int32], mpi.ReadAt[int32]
				if tc.coll {
					write, read = mpi.WriteAtAll[int32], mpi.ReadAtAll[int32]
				}
				st, err := write(f, off, vals)
				if err != nil {
					return err
				}
				if st.Count() != 3 {
					return fmt.Errorf("rank %d: wrote %d elements, want 3", r, st.Count())
				}
				if err := f.Sync(); err != nil {
					return err
				}
				if err := mpi.Barrier(c); err != nil {
					return err
				}
				if err := f.Sync(); err != nil {
					return err
				}
				back := make([]int32, 3)
				if st, err = read(f, off, back); err != nil {
					return err
				}
				if st.Count() != 3 || !slices.Equal(back, vals) {
					return fmt.Errorf("rank %d: read back %v (%d elements), want %v", r, back, st.Count(), vals)
				}
				if pos, err := f.ByteOffset(1); err != nil || pos != map[bool]int64{false: 8, true: int64(8*r) + 16}[tc.strided] {
					return fmt.Errorf("rank %d: ByteOffset(1) = %d, %v", r, pos, err)
				}
				if err := f.Close(); err != nil {
					return err
				}
				if r == 0 {
					want := be64Bytes([]int32{1, -2, 3, 101, -102, 103})
					if tc.strided {
						want = be64Bytes([]int32{1, 101, -2, -102, 3, 103})
					}
					got, _ := os.ReadFile(name)
					if !bytes.Equal(got, want) {
						return fmt.Errorf("file bytes\n% x\nwant\n% x", got, want)
					}
				}
				return nil
			})
		})
	}
}

// TestDatarepNoConversion: with nil conversion functions the file holds
// each item's native bytes at the start of its slot, zero-padded to the
// size the extent function gives; a size below the native one fails the
// access with ErrConversion.
func TestDatarepNoConversion(t *testing.T) {
	registerReps(t)
	runFile(t, 1, "datarep-null", func(c *mpi.Comm, name string) error {
		f, err := open(c, name, mpi.ModeCreate|mpi.ModeRdwr)
		if err != nil {
			return err
		}
		if err := f.SetView(0, mpi.Int32, mpi.Int32, repPadded, nil); err != nil {
			return err
		}
		vals := []int32{7, -1}
		if _, err := mpi.WriteAt(f, 0, vals); err != nil {
			return err
		}
		back := make([]int32, 2)
		if _, err := mpi.ReadAt(f, 0, back); err != nil || !slices.Equal(back, vals) {
			return fmt.Errorf("read back %v, %v; want %v", back, err, vals)
		}
		got, _ := os.ReadFile(name)
		want := append(append(le32([]int32{7}), 0, 0, 0, 0), append(le32([]int32{-1}), 0, 0, 0, 0)...)
		if !bytes.Equal(got, want) {
			return fmt.Errorf("file bytes % x, want % x", got, want)
		}
		if err := f.SetView(0, mpi.Int32, mpi.Int32, repTooNarr, nil); err != nil {
			return err
		}
		if _, err := mpi.WriteAt(f, 0, vals); !errors.Is(err, mpi.ErrConversion) {
			return fmt.Errorf("writing int32 into 2-byte slots without conversion: %v, want ErrConversion", err)
		}
		return f.Close()
	})
}

// TestDatarepErrors: a failing or panicking conversion is the access's
// error (ErrConversion, wrapping the function's error), on the
// independent and the collective path, and the process goes on; a value
// the read conversion refuses is an error too.
func TestDatarepErrors(t *testing.T) {
	registerReps(t)
	runFile(t, 2, "datarep-err", func(c *mpi.Comm, name string) error {
		f, err := open(c, name, mpi.ModeCreate|mpi.ModeRdwr)
		if err != nil {
			return err
		}
		r := c.Rank()
		vals := []int32{1, 2}
		if err := f.SetView(0, mpi.Int32, mpi.Int32, repBadW, nil); err != nil {
			return err
		}
		if _, err := mpi.WriteAt(f, int64(2*r), vals); !errors.Is(err, mpi.ErrConversion) || !errors.Is(err, errBoom) {
			return fmt.Errorf("rank %d: WriteAt with a failing conversion: %v, want ErrConversion wrapping boom", r, err)
		}
		if _, err := mpi.WriteAtAll(f, int64(2*r), vals); !errors.Is(err, mpi.ErrConversion) {
			return fmt.Errorf("rank %d: WriteAtAll with a failing conversion: %v, want ErrConversion", r, err)
		}
		if err := f.SetView(0, mpi.Int32, mpi.Int32, repPanicR, nil); err != nil {
			return err
		}
		if _, err := mpi.WriteAtAll(f, int64(2*r), vals); err != nil {
			return err
		}
		back := make([]int32, 2)
		if _, err := mpi.ReadAt(f, int64(2*r), back); !errors.Is(err, mpi.ErrConversion) {
			return fmt.Errorf("rank %d: ReadAt with a panicking conversion: %v, want ErrConversion", r, err)
		}
		if _, err := mpi.ReadAtAll(f, int64(2*r), back); !errors.Is(err, mpi.ErrConversion) {
			return fmt.Errorf("rank %d: ReadAtAll with a panicking conversion: %v, want ErrConversion", r, err)
		}
		// A number too big for an int32, put there through the
		// default view, is refused by be64Read.
		if err := f.SetView(0, mpi.Byte, mpi.Byte, "native", nil); err != nil {
			return err
		}
		if r == 0 {
			big := make([]byte, 8)
			binary.BigEndian.PutUint64(big, 1<<40)
			if _, err := mpi.WriteAt(f, 0, big); err != nil {
				return err
			}
		}
		if err := f.SetView(0, mpi.Int32, mpi.Int32, repBE64, nil); err != nil {
			return err
		}
		if _, err := mpi.ReadAtAll(f, 0, back[:1]); !errors.Is(err, mpi.ErrConversion) {
			return fmt.Errorf("rank %d: reading 2^40 as an int32: %v, want ErrConversion", r, err)
		}
		return f.Close()
	})
}

// TestDatarepRegistration: names registered twice (or predefined) give
// ErrDupDatarep, bad arguments ErrArg, and SetView with a name nobody
// registered ErrUnsupportedDatarep on every rank.
func TestDatarepRegistration(t *testing.T) {
	registerReps(t)
	ext := extentWith(4)
	for _, tc := range []struct {
		name        string
		rep         string
		read, write mpi.DatarepConversion
		ext         mpi.DatarepExtent
		want        error
	}{
		{"duplicate", repBE64, be64Read, be64Write, ext, mpi.ErrDupDatarep},
		{"duplicate-null", repPadded, nil, nil, ext, mpi.ErrDupDatarep},
		{"native", "native", nil, nil, ext, mpi.ErrDupDatarep},
		{"external32", "external32", nil, nil, ext, mpi.ErrDupDatarep},
		{"empty-name", "", nil, nil, ext, mpi.ErrArg},
		{"nil-extent", "conf-nil-extent", nil, nil, nil, mpi.ErrArg},
		{"long-name", string(make([]byte, 128)), nil, nil, ext, mpi.ErrArg},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := mpi.RegisterDatarep(tc.rep, tc.read, tc.write, tc.ext)
			if !errors.Is(err, tc.want) {
				t.Fatalf("RegisterDatarep(%q) = %v, want %v", tc.rep, err, tc.want)
			}
		})
	}
	runFile(t, 2, "datarep-unknown", func(c *mpi.Comm, name string) error {
		f, err := open(c, name, mpi.ModeCreate|mpi.ModeRdwr)
		if err != nil {
			return err
		}
		if err := f.SetView(0, mpi.Int32, mpi.Int32, "conf-never-registered", nil); !errors.Is(err, mpi.ErrUnsupportedDatarep) {
			return fmt.Errorf("rank %d: SetView with an unknown datarep: %v, want ErrUnsupportedDatarep", c.Rank(), err)
		}
		return f.Close()
	})
}

// TestDatarepPointers: the individual and shared file pointers count
// etypes of the view, which in repBE64 are 8 bytes in the file: ordered
// writes land one after another, a Seek and Write through the
// individual pointer land where the etype offset says, and both pointers
// advance by the elements moved.
func TestDatarepPointers(t *testing.T) {
	registerReps(t)
	runFile(t, 2, "datarep-ptr", func(c *mpi.Comm, name string) error {
		f, err := open(c, name, mpi.ModeCreate|mpi.ModeRdwr)
		if err != nil {
			return err
		}
		r := c.Rank()
		if err := f.SetView(0, mpi.Int32, mpi.Int32, repBE64, nil); err != nil {
			return err
		}
		if _, err := mpi.WriteOrdered(f, []int32{int32(10 + r), int32(20 + r)}); err != nil {
			return err
		}
		if pos, err := f.PositionShared(); err != nil || pos != 4 {
			return fmt.Errorf("rank %d: shared pointer at %d, %v; want 4", r, pos, err)
		}
		if _, err := f.Seek(int64(4+r), mpi.SeekSet); err != nil {
			return err
		}
		if _, err := f.Write(mpi.AsBytes([]int32{int32(30 + r)}), 1, mpi.Int32); err != nil {
			return err
		}
		if pos, err := f.Position(); err != nil || pos != int64(5+r) {
			return fmt.Errorf("rank %d: individual pointer at %d, %v; want %d", r, pos, err, 5+r)
		}
		if err := f.Close(); err != nil {
			return err
		}
		if r == 0 {
			want := be64Bytes([]int32{10, 20, 11, 21, 30, 31})
			got, _ := os.ReadFile(name)
			if !bytes.Equal(got, want) {
				return fmt.Errorf("file bytes\n% x\nwant\n% x", got, want)
			}
		}
		return nil
	})
}
