package main

import (
	"fmt"
	"sync"
	"time"

	"github.com/mpigo/mpi"
)

// One-sided benchmarks, with the OSU micro-benchmarks' definitions in
// their flush form (osu_put_latency -s flush, ...): the window is
// allocated once, rank 0 locks rank 1's window once (shared), and each
// iteration is one operation towards rank 1 followed by Flush. The
// bandwidth tests issue 64 operations per Flush. Rank 1 does not take part
// until the final barrier: passive target.

// rmaTests lists the one-sided tests and whether each measures bandwidth.
var rmaTests = map[string]bool{
	"put_latency": false, "get_latency": false, "acc_latency": false,
	"fop_latency": false, "cas_latency": false, "put_bw": true, "get_bw": true,
}

// rmaState is one rank's window for the whole run (Run's goroutine ranks
// each have their own).
type rmaState struct {
	bytes *mpi.Window[byte]
	words *mpi.Window[int64]
	left  int // sizes still to measure
}

var (
	rmaMu     sync.Mutex
	rmaStates = map[*mpi.Comm]*rmaState{}
)

// rmaWindow returns c's benchmark state, making the windows (collectively)
// and taking rank 0's lock the first time.
func (b *benchConfig) rmaWindow(c *mpi.Comm) (*rmaState, error) {
	rmaMu.Lock()
	st := rmaStates[c]
	rmaMu.Unlock()
	if st != nil {
		return st, nil
	}
	largest := 0
	for _, s := range b.sizes {
		largest = max(largest, s)
	}
	st = &rmaState{left: len(b.sizes)}
	var err error
	if st.bytes, err = mpi.NewWindow[byte](c, largest); err != nil {
		return nil, err
	}
	if st.words, err = mpi.NewWindow[int64](c, 1); err != nil {
		return nil, err
	}
	if c.Rank() == 0 {
		if err := st.bytes.Lock(1, false); err != nil {
			return nil, err
		}
		if err := st.words.Lock(1, false); err != nil {
			return nil, err
		}
	}
	rmaMu.Lock()
	rmaStates[c] = st
	rmaMu.Unlock()
	return st, nil
}

// rma measures one size of a one-sided test.
func (b *benchConfig) rma(c *mpi.Comm, size int) (float64, error) {
	st, err := b.rmaWindow(c)
	if err != nil {
		return 0, err
	}
	bw := rmaTests[b.test]
	small, large := 10000, 1000
	if bw {
		small, large = 100, 20
	}
	warm, iters := b.iterations(size, small, large)
	per := 1
	if bw {
		per = window
	}
	var v float64
	if c.Rank() == 0 {
		buf := make([]byte, size)
		res := make([]byte, size)
		w, x := st.bytes, st.words
		var op func() error
		switch b.test {
		case "put_latency", "put_bw":
			op = func() error { return w.Put(buf, 1, 0) }
		case "get_latency", "get_bw":
			op = func() error { return w.Get(res, 1, 0) }
		case "acc_latency":
			sum := mpi.Sum[byte]()
			op = func() error { return w.Accumulate(buf, 1, 0, sum) }
		case "fop_latency":
			sum := mpi.Sum[int64]()
			op = func() error { _, err := x.FetchAndOp(1, 1, 0, sum); return err }
		case "cas_latency":
			op = func() error { _, err := x.CompareAndSwap(0, 0, 1, 0); return err }
		}
		flush := w.Flush
		if b.test == "fop_latency" || b.test == "cas_latency" {
			flush = x.Flush
		}
		var start time.Time
		for i := 0; i < warm+iters; i++ {
			if i == warm {
				start = time.Now()
			}
			for k := 0; k < per; k++ {
				if err := op(); err != nil {
					return 0, err
				}
			}
			if err := flush(1); err != nil {
				return 0, err
			}
		}
		el := time.Since(start).Seconds()
		if bw {
			v = float64(size) * float64(per) * float64(iters) / el / 1e6
		} else {
			v = el * 1e6 / float64(iters)
		}
	}
	if err := mpi.Barrier(c); err != nil {
		return 0, err
	}
	st.left--
	if st.left == 0 {
		if c.Rank() == 0 {
			if err := st.bytes.Unlock(1); err != nil {
				return 0, err
			}
			if err := st.words.Unlock(1); err != nil {
				return 0, err
			}
		}
		if err := st.bytes.Free(); err != nil {
			return 0, err
		}
		if err := st.words.Free(); err != nil {
			return 0, err
		}
		rmaMu.Lock()
		delete(rmaStates, c)
		rmaMu.Unlock()
	}
	return v, nil
}

// rmaSizes is the default size list of a one-sided test.
func rmaSizes(test string) (string, error) {
	bw, ok := rmaTests[test]
	if !ok {
		return "", fmt.Errorf("not a one-sided test: %s", test)
	}
	switch {
	case test == "fop_latency" || test == "cas_latency":
		return "8", nil
	case bw:
		return "1:4194304", nil
	}
	return "1:1048576", nil
}
