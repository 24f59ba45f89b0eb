package mpi

import "testing"

// The signature of count elements of a datatype depends on its sequence
// of basic types only: layouts, and how the sequence is cut into
// elements, do not matter.
func TestLowSigUnits(t *testing.T) {
	must := func(d *Datatype, err error) *Datatype {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		if err := d.Commit(); err != nil {
			t.Fatal(err)
		}
		return d
	}
	vec := must(NewVector(2, 1, 2, Int32))
	pair := must(NewStruct([]int{1, 1}, []int{0, 8}, []*Datatype{Int32, Float64}))
	rev := must(NewStruct([]int{1, 1}, []int{0, 8}, []*Datatype{Float64, Int32}))
	// {int32, float64, int32}: first and last kinds are the same.
	aba := must(NewStruct([]int{1, 1, 1}, []int{0, 8, 16}, []*Datatype{Int32, Float64, Int32}))
	aba2 := must(NewContiguous(2, aba))
	aba3 := must(NewContiguous(3, aba))
	pair3 := must(NewContiguous(3, pair))
	same := []struct {
		name   string
		a      *Datatype
		an     int
		b      *Datatype
		bn     int
		equals bool
	}{
		{"vector = 2 int32", vec, 1, Int32, 2, true},
		{"vector ≠ 3 int32", vec, 1, Int32, 3, false},
		{"int32 ≠ float32", Int32, 2, Float32, 2, false},
		{"3 pairs = contiguous(3, pair)", pair, 3, pair3, 1, true},
		{"pair ≠ reversed pair", pair, 1, rev, 1, false},
		{"aba ×6 = contiguous(2, aba) ×3", aba, 6, aba2, 3, true},
		{"contiguous(2, aba) ×3 = contiguous(3, aba) ×2", aba2, 3, aba3, 2, true},
		{"aba ×2 ≠ pair ×3", aba, 2, pair, 3, false},
		{"empty = empty", Int32, 0, Float64, 0, true},
		{"int ≠ int32", Int, 1, Int32, 1, false},
		{"byte ≠ uint8", Byte, 4, Uint8, 4, false},
	}
	for _, tc := range same {
		if got := lowSig(tc.a, tc.an) == lowSig(tc.b, tc.bn); got != tc.equals {
			t.Errorf("%s: equal %v", tc.name, got)
		}
	}
	if lowSig(Packed, 8) != 0 {
		t.Errorf("Packed carries a signature: it must match any")
	}
	if u := aba2.unit(); u.per != 2 || u.name != "{int32,float64,int32}" {
		t.Errorf("unit of contiguous(2, aba): %+v", u)
	}
	if u, n, ok := decodeSig(lowSig(pair3, 2)); !ok || n != 6 || u.name != "{int32,float64}" {
		t.Errorf("decode 2 × contiguous(3, pair): %v %d %v", u, n, ok)
	}
}
