package mpi

import "testing"

// BenchmarkCollCallOverhead is what carrying a type signature adds to
// every typed collective call: taking a collCall from its pool and
// putting it back.
func BenchmarkCollCallOverhead(b *testing.B) {
	c := &Comm{shadow: &Comm{}}
	t := typeOf[float64]()
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		cc := c.typedCall(t, 1)
		if err := cc.done("Allreduce", nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSlotPool is the pooled request every collective message
// already takes, for scale.
func BenchmarkSlotPool(b *testing.B) {
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		putSlot(getSlot())
	}
}
