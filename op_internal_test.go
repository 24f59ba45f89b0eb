package mpi

import "testing"

// Predefined operations of basic types cost nothing to make, so they can
// be written inline in a hot loop; named types still get working ones.
func TestPredefinedOpsDoNotAllocate(t *testing.T) {
	checks := map[string]func(){
		"Sum[float64]":     func() { _ = Sum[float64]() },
		"Max[int]":         func() { _ = Max[int]() },
		"Bxor[uint8]":      func() { _ = Bxor[uint8]() },
		"Land[bool]":       func() { _ = Land[bool]() },
		"Lor[int32]":       func() { _ = Lor[int32]() },
		"Prod[complex128]": func() { _ = Prod[complex128]() },
	}
	for name, f := range checks {
		if n := testing.AllocsPerRun(100, f); n != 0 {
			t.Errorf("%s: %v allocations per call", name, n)
		}
	}
	type celsius float64
	type flag int8
	tests := []struct {
		name string
		got  any
		want any
	}{
		{"Sum[celsius]", Sum[celsius]().fn(1, 2), celsius(3)},
		{"Min[float64]", Min[float64]().fn(1, 2), 1.0},
		{"Max[int8]", Max[int8]().fn(-1, 2), int8(2)},
		{"Band[uint16]", Band[uint16]().fn(6, 3), uint16(2)},
		{"Lxor[bool]", Lxor[bool]().fn(true, true), false},
		{"Land[int]", Land[int]().fn(5, -3), 1},
		{"Land[uint8]", Land[uint8]().fn(5, 0), uint8(0)},
		{"Lor[int64]", Lor[int64]().fn(0, 7), int64(1)},
		{"Lxor[uint32]", Lxor[uint32]().fn(4, 9), uint32(0)},
		{"Lxor[celsius-like int]", Lxor[flag]().fn(0, 9), flag(1)},
		{"Prod[complex64]", Prod[complex64]().fn(2i, 2i), complex64(-4)},
	}
	for _, tc := range tests {
		if tc.got != tc.want {
			t.Errorf("%s: got %v, want %v", tc.name, tc.got, tc.want)
		}
	}
	if op := Sum[float64](); op.vec == nil || !op.commutative || op.name != "sum" {
		t.Errorf("cached Sum lost its kernel or properties: %+v", op)
	}
}
