package mpi_test

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/mpigo/mpi"
)

// Checkpoint a 4x6 array of float64 block-distributed over a 2x2 grid of
// 4 ranks with one collective write through a subarray view, then
// restart on 2 ranks that each read a band of rows: the file is the
// global array in row-major order, whatever the decomposition.
func ExampleSetViewBlock() {
	const rows, cols = 4, 6
	dir, _ := os.MkdirTemp("", "checkpoint")
	defer os.RemoveAll(dir)
	name := filepath.Join(dir, "state.bin")

	// Write: 4 ranks, each a 2x3 block.
	err := mpi.Run(4, func(world *mpi.Comm) error {
		r := world.Rank()
		sub := []int{rows / 2, cols / 2}
		start := []int{(r / 2) * sub[0], (r % 2) * sub[1]}
		block := make([]float64, sub[0]*sub[1])
		for i := range block {
			block[i] = float64(10*(start[0]+i/sub[1]) + start[1] + i%sub[1]) // 10*row + column
		}
		f, err := mpi.OpenFile(world, name, mpi.ModeCreate|mpi.ModeWronly, nil)
		if err != nil {
			return err
		}
		if err := mpi.SetViewBlock[float64](f, 0, []int{rows, cols}, sub, start, "native"); err != nil {
			return err
		}
		if _, err := mpi.WriteAtAll(f, 0, block); err != nil {
			return err // every rank gets the error; see docs/io.md for what the file holds then
		}
		return f.Close()
	})
	if err != nil {
		fmt.Println(err)
		return
	}

	// Read back on 2 ranks: each gets 2 whole rows.
	err = mpi.Run(2, func(world *mpi.Comm) error {
		r := world.Rank()
		f, err := mpi.OpenFile(world, name, mpi.ModeRdonly, nil)
		if err != nil {
			return err
		}
		if err := mpi.SetViewBlock[float64](f, 0, []int{rows, cols}, []int{rows / 2, cols}, []int{r * rows / 2, 0}, "native"); err != nil {
			return err
		}
		band := make([]float64, rows/2*cols)
		st, err := mpi.ReadAtAll(f, 0, band)
		if err != nil {
			return err
		}
		for q := 0; q < world.Size(); q++ {
			if q == r {
				fmt.Println("rank", r, "read", st.Count(), "values:", band)
			}
			mpi.Barrier(world)
		}
		return f.Close()
	})
	if err != nil {
		fmt.Println(err)
	}
	// Output:
	// rank 0 read 12 values: [0 1 2 3 4 5 10 11 12 13 14 15]
	// rank 1 read 12 values: [20 21 22 23 24 25 30 31 32 33 34 35]
}

// A data representation of one's own: every int32 is stored in the file
// as 8 big-endian bytes (say, to match an old code's files). Once it is
// registered, a view in it converts on every write and read, and the
// offsets and strides of the view count in the 8-byte file items.
func ExampleRegisterDatarep() {
	toFile := func(user []byte, dt *mpi.Datatype, count int, file []byte, pos int) error {
		for i := 0; i < count; i++ {
			v := int32(binary.NativeEndian.Uint32(user[4*(pos+i):]))
			binary.BigEndian.PutUint64(file[8*i:], uint64(int64(v)))
		}
		return nil
	}
	fromFile := func(user []byte, dt *mpi.Datatype, count int, file []byte, pos int) error {
		for i := 0; i < count; i++ {
			v := int64(binary.BigEndian.Uint64(file[8*i:]))
			if v != int64(int32(v)) {
				return fmt.Errorf("%d is no int32", v)
			}
			binary.NativeEndian.PutUint32(user[4*(pos+i):], uint32(int32(v)))
		}
		return nil
	}
	extent := func(dt *mpi.Datatype) (int64, error) {
		if dt != mpi.Int32 {
			return 0, fmt.Errorf("only int32 is stored in this representation, not %s", dt.Name())
		}
		return 8, nil
	}
	// Once per process, before the ranks use it.
	if err := mpi.RegisterDatarep("int32-as-be64", fromFile, toFile, extent); err != nil {
		fmt.Println(err)
		return
	}
	dir, _ := os.MkdirTemp("", "datarep")
	defer os.RemoveAll(dir)
	name := filepath.Join(dir, "legacy.bin")

	err := mpi.Run(2, func(world *mpi.Comm) error {
		f, err := mpi.OpenFile(world, name, mpi.ModeCreate|mpi.ModeRdwr, nil)
		if err != nil {
			return err
		}
		if err := f.SetView(0, mpi.Int32, mpi.Int32, "int32-as-be64", nil); err != nil {
			return err
		}
		r := world.Rank()
		if _, err := mpi.WriteAtAll(f, int64(2*r), []int32{int32(r + 1), -int32(r + 1)}); err != nil {
			return err
		}
		if err := f.Sync(); err != nil {
			return err
		}
		mpi.Barrier(world)
		back := make([]int32, 4)
		if _, err := mpi.ReadAtAll(f, 0, back); err != nil {
			return err
		}
		if r == 0 {
			fmt.Println("read back:", back)
		}
		return f.Close()
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	raw, _ := os.ReadFile(name)
	fmt.Printf("%d bytes in the file; the second item: % x\n", len(raw), raw[8:16])
	fmt.Println(errors.Is(mpi.RegisterDatarep("int32-as-be64", fromFile, toFile, extent), mpi.ErrDupDatarep))
	// Output:
	// read back: [1 -1 2 -2]
	// 32 bytes in the file; the second item: ff ff ff ff ff ff ff ff
	// true
}
