package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/mpigo/mpi"
)

// MPI-IO benchmarks (issue 44), in the style of IOR: every rank writes
// (or reads) its part of one shared file in dir, collectively or
// independently, and the value is the bandwidth of all ranks together
// (MB/s, MB = 10^6 bytes) from the first operation to the end of the
// last, a write's File.Sync included (the data reaches the file system
// before the clock stops). SIZE is the bytes of one piece:
//
//	io_seg_*             segmented: each rank one contiguous block of
//	                     SIZE bytes, rank r's at r·SIZE (WriteAtAll /
//	                     ReadAtAll, which write such blocks directly)
//	io_strided_*_coll    strided: each rank owns every n-th piece of SIZE
//	                     bytes (a vector filetype view), ioPieces pieces
//	                     per rank per operation; collective, so two-phase
//	                     I/O through the aggregators
//	io_strided_*_ind     the same pattern with independent WriteAt /
//	                     ReadAt: data sieving
//
// A read test writes the file once, untimed, then reads it (from the
// page cache when it fits there, as IOR's read phase usually does).
// Every iteration rewrites the same region, so the Sync at the end
// flushes one operation's data: the write numbers are the write path's
// speed, not the disk's. The files are removed after each repetition. "mpigo bench io" runs them
// all, one after another.

// ioPieces is the pieces of one rank in one strided operation.
const ioPieces = 16

// ioTests lists the I/O tests in the order "mpigo bench io" runs them.
var ioTests = []string{"io_seg_write", "io_seg_read", "io_strided_write_coll", "io_strided_write_ind", "io_strided_read_coll", "io_strided_read_ind"}

func isIOTest(test string) bool {
	for _, t := range ioTests {
		if t == test {
			return true
		}
	}
	return false
}

var ioSeq atomic.Int64

// ioOpBytes is the bytes all n ranks move in one operation of test.
func ioOpBytes(test string, n, size int) int64 {
	if strings.HasPrefix(test, "io_strided") {
		return int64(n) * ioPieces * int64(size)
	}
	return int64(n) * int64(size)
}

// io measures one repetition of one size of an I/O test.
func (b *benchConfig) io(c *mpi.Comm, size int) (bw float64, err error) {
	if size <= 0 {
		return 0, errors.New("I/O tests need a piece size of at least 1 byte")
	}
	n, r := c.Size(), c.Rank()
	write := strings.Contains(b.test, "_write")
	strided := strings.HasPrefix(b.test, "io_strided")
	coll := !strings.HasSuffix(b.test, "_ind")
	opBytes := ioOpBytes(b.test, n, size)
	mine := opBytes / int64(n)
	iters := int(max(2, min(50, (64<<20)/max(opBytes, 1))))
	if b.iters > 0 {
		iters = b.iters
	}
	b.lastIters.Store(int64(iters))

	name := ""
	if r == 0 {
		name = filepath.Join(b.dir, fmt.Sprintf("mpigo-bench-io-%d-%d", os.Getpid(), ioSeq.Add(1)))
	}
	if name, err = mpi.Bcast(c, name, 0); err != nil {
		return 0, err
	}
	f, err := mpi.OpenFile(c, name, mpi.ModeCreate|mpi.ModeRdwr, nil)
	if err != nil {
		return 0, err
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if r == 0 {
			os.Remove(name)
		}
	}()
	var off int64
	if strided {
		// Rank r's pieces are r, r+n, r+2n, ... of the file.
		ft, err := mpi.NewVector(ioPieces, size, size*n, mpi.Byte)
		if err != nil {
			return 0, err
		}
		if err := ft.Commit(); err != nil {
			return 0, err
		}
		if err := f.SetView(int64(r*size), mpi.Byte, ft, "native", nil); err != nil {
			return 0, err
		}
	} else {
		off = int64(r) * int64(size)
	}
	buf := make([]byte, mine)
	for i := range buf {
		buf[i] = byte(r + i)
	}
	op := func(write bool) error {
		var err error
		switch {
		case write && coll:
			_, err = f.WriteAtAll(off, buf, len(buf), mpi.Byte)
		case write:
			_, err = f.WriteAt(off, buf, len(buf), mpi.Byte)
		case coll:
			_, err = f.ReadAtAll(off, buf, len(buf), mpi.Byte)
		default:
			_, err = f.ReadAt(off, buf, len(buf), mpi.Byte)
		}
		return err
	}
	// Warm-up, and for a read the data to read.
	if err := op(true); err != nil {
		return 0, err
	}
	if err := f.Sync(); err != nil {
		return 0, err
	}
	if !write {
		if err := op(false); err != nil {
			return 0, err
		}
	}
	if err := mpi.Barrier(c); err != nil {
		return 0, err
	}
	t0 := time.Now()
	for range iters {
		if err := op(write); err != nil {
			return 0, err
		}
	}
	if write {
		if err := f.Sync(); err != nil {
			return 0, err
		}
	}
	if err := mpi.Barrier(c); err != nil {
		return 0, err
	}
	us := float64(time.Since(t0).Nanoseconds()) / 1e3
	if r == 0 {
		b.extraVals = []float64{us / float64(iters)}
	}
	return float64(opBytes) * float64(iters) / us, nil
}

// benchIO runs every I/O test as "mpigo bench io" does: text blocks one
// after another, or one csv table or json array of all of them.
func benchIO(cfg *benchConfig) error {
	var runs []*benchRun
	var err error
	format := cfg.format
	plot := cfg.plotFile
	for _, test := range ioTests {
		b := &benchConfig{errOut: cfg.errOut, test: test, n: cfg.n, transport: cfg.transport, sizes: cfg.sizes, sizeSpec: cfg.sizeSpec,
			iters: cfg.iters, api: cfg.api, out: cfg.out, reps: cfg.reps, format: format, progress: cfg.progress, dir: cfg.dir}
		if cfg.sizeSpec == "" {
			// Each test its own default sizes: pieces of a strided
			// pattern are smaller than segmented blocks.
			if b.sizes, err = parseSizes(defaultSizes(test)); err != nil {
				return err
			}
		}
		body, run, perr := b.prepare()
		if perr != nil {
			return perr
		}
		prog := newProgress(b.errOut, b.progress)
		out := &benchOutput{cfg: b, run: run, prog: prog}
		if format != "text" {
			b.format = "collect" // nothing printed until all are measured
		}
		err = b.runBench(body, out)
		prog.done()
		if err != nil {
			return fmt.Errorf("%s: %w", test, err)
		}
		if format == "text" {
			if err := out.finish(); err != nil {
				return err
			}
		}
		runs = append(runs, run)
	}
	switch format {
	case "csv":
		if err := writeCSV(cfg.out, runs); err != nil {
			return err
		}
	case "json":
		if err := writeJSON(cfg.out, runs, true); err != nil {
			return err
		}
	}
	if plot == "" {
		return nil
	}
	refs, err := cfg.refs.load()
	if err != nil {
		return err
	}
	if err := writePlot(plot, runs, refs); err != nil {
		return err
	}
	fmt.Fprintf(cfg.errOut, "mpigo bench: wrote %s\n", plot)
	return nil
}
