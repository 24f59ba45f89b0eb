package mpi

import "testing"

// BenchmarkEnterColl is what the check for concurrent collectives on one
// communicator adds to every blocking collective (enterColl, exitColl),
// and what the root check adds to a rooted one (atRoot), with the defer
// the entries use: to set beside the collectives' own cost
// (BenchmarkAllreduce8Entry, BenchmarkBcast8).
func BenchmarkEnterColl(b *testing.B) {
	Run(1, func(c *Comm) error {
		b.ResetTimer()
		for range b.N {
			func() (err error) {
				if err = c.enterColl("Allreduce"); err != nil {
					return
				}
				defer c.exitColl()
				return nil
			}()
		}
		return nil
	})
}

// BenchmarkAtRoot is atRoot's cost on a call, for the root check.
func BenchmarkAtRoot(b *testing.B) {
	Run(1, func(c *Comm) error {
		cc := c.typedCall(typeOf[float64](), -1)
		sig := cc.sig
		b.ResetTimer()
		for i := range b.N {
			cc.sig = sig
			cc.atRoot(i & 3)
		}
		return nil
	})
}
