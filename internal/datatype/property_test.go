package datatype

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// randomType builds a random type map of depth at most depth whose
// elements never overlap and never reach below offset 0, from every
// constructor that can nest: contiguous, vector, hvector, indexed,
// hindexed, indexed block, struct and resized.
func randomType(t *testing.T, rng *rand.Rand, depth int) *Type {
	m := must(t)
	basics := []Basic{BasicByte, BasicInt16, BasicInt32, BasicFloat64, BasicComplex128, BasicBool}
	if depth == 0 || rng.IntN(4) == 0 {
		return NewBasic(basics[rng.IntN(len(basics))])
	}
	old := randomType(t, rng, depth-1)
	ext := old.Extent()
	// increasing displacements (in units of old's extent) with gaps, so
	// that blocks of up to maxLen elements never overlap
	displs := func(n, maxLen int) []int {
		d := make([]int, n)
		at := rng.IntN(3)
		for i := range d {
			d[i] = at
			at += maxLen + rng.IntN(3)
		}
		return d
	}
	switch rng.IntN(8) {
	case 0:
		return m(NewContiguous(1+rng.IntN(4), old))
	case 1:
		bl := 1 + rng.IntN(3)
		return m(NewVector(1+rng.IntN(4), bl, bl+rng.IntN(3), old))
	case 2:
		bl := 1 + rng.IntN(3)
		return m(NewHvector(1+rng.IntN(4), bl, int64(bl)*ext+int64(rng.IntN(9)), old))
	case 3:
		n := 1 + rng.IntN(4)
		bls := make([]int, n)
		for i := range bls {
			bls[i] = 1 + rng.IntN(3)
		}
		return m(NewIndexed(bls, displs(n, 3), old))
	case 4:
		n := 1 + rng.IntN(4)
		bls := make([]int, n)
		hd := make([]int64, n)
		for i, d := range displs(n, 3) {
			bls[i] = 1 + rng.IntN(3)
			hd[i] = int64(d) * ext
		}
		return m(NewHindexed(bls, hd, old))
	case 5:
		n := 1 + rng.IntN(3)
		return m(NewIndexedBlock(1+rng.IntN(2), displs(n, 2), old))
	case 6:
		n := 1 + rng.IntN(3)
		types := make([]*Type, n)
		bls := make([]int, n)
		ds := make([]int64, n)
		at := int64(rng.IntN(8))
		for i := range types {
			types[i] = randomType(t, rng, depth-1)
			bls[i] = 1 + rng.IntN(2)
			ds[i] = at
			at += int64(bls[i])*types[i].Extent() + int64(rng.IntN(8))
		}
		return m(NewStruct(bls, ds, types))
	default:
		return m(NewResized(old, 0, old.UB+int64(rng.IntN(16))))
	}
}

// TestRandomTypeMaps is the property every type map must have: packing
// count elements and unpacking them into a zeroed buffer restores exactly
// the bytes the map covers, in any chunking, and packing again gives the
// same bytes.
func TestRandomTypeMaps(t *testing.T) {
	rng := rand.New(rand.NewPCG(42, 7))
	for i := 0; i < 400; i++ {
		ty := randomType(t, rng, 3)
		count := 1 + rng.IntN(3)
		lo, hi := ty.Span(count)
		if lo < 0 {
			t.Fatalf("type %d reaches below 0", i)
		}
		buf := make([]byte, hi)
		for k := range buf {
			buf[k] = byte(rng.Uint32())
		}
		n := int64(count) * ty.Size
		packed := make([]byte, n)
		ty.PackAt(packed, buf, 0)
		back := make([]byte, len(buf))
		for off := int64(0); off < n; {
			k := min(n-off, 1+rng.Int64N(64))
			ty.UnpackAt(packed[off:off+k], back, off)
			off += k
		}
		covered := make([]bool, len(buf))
		total := int64(0)
		for e := 0; e < count; e++ {
			for _, o := range offsets(ty) {
				covered[int64(e)*ty.Extent()+o] = true
				total++
			}
		}
		if total != n {
			t.Fatalf("type %d: the map covers %d bytes, its size is %d", i, total, n)
		}
		for k := range buf {
			if covered[k] && back[k] != buf[k] || !covered[k] && back[k] != 0 {
				t.Fatalf("type %d (count %d): byte %d came back %d (covered %v, was %d)", i, count, k, back[k], covered[k], buf[k])
			}
		}
		again := make([]byte, n)
		ty.PackAt(again, back, 0)
		if !bytes.Equal(again, packed) {
			t.Fatalf("type %d: pack(unpack(pack(x))) != pack(x)", i)
		}
	}
}
