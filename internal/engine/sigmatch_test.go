package engine

import "testing"

// A typed value and a typed slice of the same type refuse each other;
// either matches the unmarked signature of a low-level call, both ways.
func TestSigsMatch(t *testing.T) {
	const base = 0x1234_5678_9abc_def0
	scalar, slice := base^ScalarSig, base^SliceSig
	for _, tc := range []struct {
		want, got uint64
		ok        bool
	}{
		{base, scalar, true}, {base, slice, true},
		{scalar, base, true}, {slice, base, true},
		{scalar, slice, false}, {slice, scalar, false},
		{base, base ^ 1, false}, {scalar, (base ^ 1) ^ ScalarSig, false},
	} {
		if got := tc.want == tc.got || SigsMatch(tc.want, tc.got); got != tc.ok {
			t.Errorf("receive %#x, message %#x: match %v, want %v", tc.want, tc.got, got, tc.ok)
		}
	}
}
