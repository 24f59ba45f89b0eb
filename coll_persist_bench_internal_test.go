package mpi

import (
	"fmt"
	"testing"
)

// BenchmarkPersistentInproc times the 2-rank Allreduce of goroutine
// ranks, plain against the persistent form (Start and Wait), at the
// sizes of issue 43.
func BenchmarkPersistentInproc(b *testing.B) {
	benchPersistent(b, 2, []int{8, 1 << 10, 4 << 10, 64 << 10, 1 << 20})
}

// BenchmarkAllreduceInit compares a persistent Allreduce (AllreduceInit
// once, then Start and Wait) with the plain AllreduceSliceInto, 8 bytes,
// 1 KiB and 1 MiB on 2 and 4 goroutine ranks.
func BenchmarkAllreduceInit(b *testing.B) {
	for _, n := range []int{2, 4} {
		for _, size := range []int{8, 1024, 1 << 20} {
			for _, form := range []string{"plain", "persistent"} {
				b.Run(fmt.Sprintf("%dranks/%d/%s", n, size, form), func(b *testing.B) {
					b.ReportAllocs()
					err := Run(n, func(c *Comm) error {
						return allreduceBenchRank(b, c, size, form == "persistent", nil)
					})
					if err != nil {
						b.Fatal(err)
					}
				})
			}
		}
	}
}

// BenchmarkPersistentOne times the same on one rank, where nothing waits
// for a peer: what the request's own steps cost beside the call's.
func BenchmarkPersistentOne(b *testing.B) {
	benchPersistent(b, 1, []int{8, 1 << 10})
}

func benchPersistent(b *testing.B, ranks int, sizes []int) {
	for _, size := range sizes {
		for _, form := range []string{"plain", "persistent"} {
			b.Run(fmt.Sprintf("%d/%s", size, form), func(b *testing.B) {
				b.ReportAllocs()
				err := Run(ranks, func(c *Comm) error {
					return allreduceBenchRank(b, c, size, form == "persistent", nil)
				})
				if err != nil {
					b.Fatal(err)
				}
			})
		}
	}
}

// allreduceBenchRank is one rank of an Allreduce benchmark of size bytes
// of float64: b.N plain calls, or b.N Starts and Waits of one
// AllreduceInit (persistent), which check, if not nil, looks at first.
func allreduceBenchRank(b *testing.B, c *Comm, size int, persistent bool, check func(*Comm, *Request) error) error {
	v, out := make([]float64, size/8), make([]float64, size/8)
	var req *Request
	if persistent {
		var err error
		if req, err = AllreduceInit(c, v, out, Sum[float64]()); err != nil {
			return err
		}
		if check != nil {
			if err := check(c, req); err != nil {
				return err
			}
		}
	}
	if err := Barrier(c); err != nil {
		return err
	}
	if c.Rank() == 0 {
		b.ResetTimer()
	}
	for range b.N {
		if req == nil {
			if err := AllreduceSliceInto(c, v, out, Sum[float64]()); err != nil {
				return err
			}
			continue
		}
		if err := req.Start(); err != nil {
			return err
		}
		if _, err := req.Wait(); err != nil {
			return err
		}
	}
	if req != nil {
		return req.Free()
	}
	return nil
}
