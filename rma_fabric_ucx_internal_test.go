//go:build cgo && mpigo_ucx

package mpi

import (
	"fmt"
	"testing"
)

// ucxConfig is a goroutine job over the UCX transports tls names: tcp as
// ranks on two nodes would talk, or shared memory and cross-memory
// attach, which reach a peer's memory directly.
func ucxConfig(t testing.TB, tls string) Config {
	t.Helper()
	t.Setenv("UCX_TLS", tls)
	cfg := DefaultConfig()
	cfg.Transport = "ucx"
	return cfg
}

// Windows over UCX put and get through the fabric (fabricRMAJob); with
// MPIGO_FABRIC_RMA=0 every one goes by message, and by default only
// where UCX reaches the target's memory directly (not over its tcp).
func TestFabricRMA(t *testing.T) {
	for _, tc := range []struct {
		tls  string
		mode int8
		fab  bool
	}{
		{"tcp", rmaAlways, true},
		{"tcp", rmaOff, false},
		{"tcp", rmaAuto, false},
		{"posix,cma,self", rmaAuto, true},
	} {
		t.Run(fmt.Sprintf("%s/%d", tc.tls, tc.mode), func(t *testing.T) {
			cfg := ucxConfig(t, tc.tls)
			cfg.fabricRMA = tc.mode
			err := RunConfig(2, cfg, fabricRMAJob(!tc.fab))
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}

// The cost of a strided PutBuf and Flush, and of a strided GetBuf, of 64
// KiB in blocks of 8 bytes to 16 KiB, through UCX's puts and gets one per
// run (fabRuns) and by message, between two goroutine ranks over UCX's
// shared memory: what fabMinRun is set from.
func BenchmarkFabricRuns(b *testing.B) {
	cfg := ucxConfig(b, "posix,cma,self")
	cfg.fabricRMA = rmaAlways
	defer func(n int64) { fabMinRun = n }(fabMinRun)
	for _, block := range []int{8, 64, 256, 1024, 4096, 16384} {
		for _, road := range []string{"fabric", "message"} {
			b.Run(fmt.Sprintf("%dB/%s", block, road), func(b *testing.B) {
				fabMinRun = 0
				if road == "message" {
					fabMinRun = 1 << 40
				}
				blocks, bl := 65536/block, block/8
				err := RunConfig(2, cfg, func(c *Comm) error {
					w, err := NewWindow[int64](c, 2*65536/8)
					if err != nil {
						return err
					}
					if c.Rank() == 0 {
						vt, err := NewVector(blocks, bl, 2*bl, Int64)
						if err != nil {
							return err
						}
						if err := vt.Commit(); err != nil {
							return err
						}
						if err := w.Lock(1, false); err != nil {
							return err
						}
						buf := make([]byte, 65536)
						b.ResetTimer()
						for i := 0; i < b.N; i++ {
							if err := w.PutBuf(buf, 65536/8, Int64, 1, 0, 1, vt); err != nil {
								return err
							}
							if err := w.Flush(1); err != nil {
								return err
							}
							if err := w.GetBuf(buf, 65536/8, Int64, 1, 0, 1, vt); err != nil {
								return err
							}
						}
						b.StopTimer()
						if err := w.Unlock(1); err != nil {
							return err
						}
					}
					if err := Barrier(c); err != nil {
						return err
					}
					return w.Free()
				})
				if err != nil {
					b.Fatal(err)
				}
			})
		}
	}
}

// Windows over UCX take its atomic operations, with
// MPIGO_FABRIC_ATOMICS=1, when every member reaches every other's part
// through it (rma_atomic.go): fetch-and-adds from
// every rank, the target's own included, hand out every ticket once; a
// compare-and-swap loop, accumulates with MPI_SUM, MPI_BOR, MPI_REPLACE
// and reads with MPI_NO_OP, typed and low-level, leave exact results;
// MPI_MAX (which the fabric has not) takes the target's road; and a
// low-level call whose integers are partly misaligned is split, its
// aligned integers through the fabric, the others by the target. The
// same job by message (MPIGO_FABRIC_RMA=0) must give the same results,
// and the target's server must then have applied the calls the fabric
// took.
func TestFabricAtomics(t *testing.T) {
	for _, tc := range []struct {
		tls       string
		mode      int8
		atom, fab bool
	}{
		{"tcp", rmaAlways, true, true},
		{"tcp", rmaOff, true, false},
		{"tcp", rmaAuto, true, false},
		{"posix,cma,self", rmaAuto, true, true},
		{"posix,cma,self", rmaAuto, false, false}, // MPIGO_FABRIC_ATOMICS unset
	} {
		t.Run(fmt.Sprintf("%s/%d/%v", tc.tls, tc.mode, tc.atom), func(t *testing.T) {
			cfg := ucxConfig(t, tc.tls)
			cfg.fabricRMA = tc.mode
			cfg.fabricAtomics = tc.atom
			if err := RunConfig(3, cfg, fabricAtomicsJob(tc.fab)); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// The cost of a low-level FetchAndOpBuf and Flush (MPI_Fetch_and_op and
// MPI_Win_flush from C) of an int64 through UCX's atomics, between two
// goroutine ranks over UCX's shared memory, and its allocations.
func BenchmarkFabricFetchAndOp(b *testing.B) {
	cfg := ucxConfig(b, "posix,cma,self")
	cfg.fabricAtomics = true
	benchFetchAndOp(b, cfg)
}
