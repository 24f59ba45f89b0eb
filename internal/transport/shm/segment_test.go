package shm

import (
	"path/filepath"
	"testing"
)

// TestRetire: after Retire, both mappings of a segment (the creator's and
// a peer's) stay addressable, read zeros and take writes that the other
// no longer sees: a window's slice kept past Free must never fault
// (issue 40), and its memory is no longer shared.
func TestRetire(t *testing.T) {
	if ok, why := Available(); !ok {
		t.Skip(why)
	}
	name := filepath.Join(t.TempDir(), "seg")
	const size = 3 * 4096
	a, err := CreateSegment(name, size)
	if err != nil {
		t.Fatal(err)
	}
	b, err := OpenSegment(name, size)
	if err != nil {
		t.Fatal(err)
	}
	RemoveSegment(name)
	a[0], a[size-1] = 1, 2
	if b[0] != 1 || b[size-1] != 2 {
		t.Fatalf("not shared before: %d %d", b[0], b[size-1])
	}
	if err := Retire(a); err != nil {
		t.Fatal(err)
	}
	if a[0] != 0 || a[size-1] != 0 {
		t.Fatalf("retired mapping reads %d %d, want zeros", a[0], a[size-1])
	}
	a[5] = 9 // must not fault
	if b[5] != 0 || b[0] != 1 {
		t.Fatalf("the peer's mapping sees %d %d after the creator retired, want 0 1", b[5], b[0])
	}
	if err := Retire(b); err != nil {
		t.Fatal(err)
	}
	if b[0] != 0 || a[5] != 9 {
		t.Fatalf("after both retired: b[0] %d, a[5] %d", b[0], a[5])
	}
	b[size-1] = 3
	if err := Retire(nil); err != nil {
		t.Fatal(err)
	}
}
