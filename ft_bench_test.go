package mpi_test

import (
	"fmt"
	"testing"

	"github.com/mpigo/mpi"
)

// BenchmarkFTLatency is the 8-byte round trip and the 8-byte Allreduce
// with fault tolerance off and on, side by side, over inproc and shared
// memory (on: every rank keeps a control receive posted and checks for
// failures and revocations).
func BenchmarkFTLatency(b *testing.B) {
	for _, tr := range []string{"inproc", "shm"} {
		for _, ft := range []bool{false, true} {
			cfg := mpi.DefaultConfig()
			cfg.FT = ft
			if tr != "inproc" {
				cfg.Transport = tr
			}
			name := fmt.Sprintf("%s/ft=%v", tr, ft)
			b.Run("pingpong/"+name, func(b *testing.B) {
				mpi.RunConfig(2, cfg, func(c *mpi.Comm) error { return roundTrips(b, c, make([]byte, 8)) })
			})
			b.Run("allreduce/"+name, func(b *testing.B) {
				mpi.RunConfig(2, cfg, func(c *mpi.Comm) error {
					mpi.Barrier(c)
					if c.Rank() == 0 {
						b.ResetTimer()
					}
					for i := 0; i < b.N; i++ {
						if _, err := mpi.Allreduce(c, int64(i), mpi.Sum[int64]()); err != nil {
							return err
						}
					}
					return nil
				})
			})
		}
	}
}

// BenchmarkFTShrink is the time of Shrink on 2, 4, 8 and 16 goroutine
// ranks after one of them failed (the agreement on who failed, then on a
// context id).
func BenchmarkFTShrink(b *testing.B) {
	for _, n := range []int{2, 4, 8, 16} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			cfg := mpi.DefaultConfig()
			cfg.FT = true
			mpi.RunConfig(n, cfg, func(c *mpi.Comm) error {
				if c.Rank() == n-1 {
					return errDied
				}
				if _, err := c.Agree(1); err == nil { // everyone knows of the failure
					return fmt.Errorf("Agree did not report the failure")
				}
				c.AckFailed(1)
				if c.Rank() == 0 {
					b.ResetTimer()
				}
				for i := 0; i < b.N; i++ {
					s, err := c.Shrink()
					if err != nil {
						return err
					}
					if s.Size() != n-1 {
						return fmt.Errorf("shrunk to %d", s.Size())
					}
					s.Free()
				}
				if c.Rank() == 0 {
					b.StopTimer()
				}
				return nil
			})
		})
	}
}
