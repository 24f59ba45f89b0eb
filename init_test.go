package mpi_test

import (
	"errors"
	"testing"

	"github.com/mpigo/mpi"
)

// TestInitFinalize: a process started without a launcher becomes a
// singleton rank through Init, can communicate on its world, and Finalize
// ends it; Init and Finalize refuse to run twice.
func TestInitFinalize(t *testing.T) {
	if err := mpi.Finalize(); !errors.Is(err, mpi.ErrOther) {
		t.Fatalf("Finalize before Init: got %v, want ErrOther", err)
	}
	w, err := mpi.Init()
	if err != nil {
		t.Fatal(err)
	}
	if w.Rank() != 0 || w.Size() != 1 {
		t.Fatalf("singleton world: rank %d size %d, want 0 and 1", w.Rank(), w.Size())
	}
	if _, err := mpi.Init(); !errors.Is(err, mpi.ErrOther) {
		t.Fatalf("second Init: got %v, want ErrOther", err)
	}
	if err := mpi.Send(w, 42, 0, 7); err != nil {
		t.Fatal(err)
	}
	v, st, err := mpi.Recv[int](w, 0, 7)
	if err != nil || v != 42 || st.Source != 0 {
		t.Fatalf("Recv: %v %v %v", v, st, err)
	}
	if err := w.Barrier(); err != nil {
		t.Fatal(err)
	}
	if err := mpi.Finalize(); err != nil {
		t.Fatal(err)
	}
	if err := mpi.Finalize(); !errors.Is(err, mpi.ErrOther) {
		t.Fatalf("second Finalize: got %v, want ErrOther", err)
	}
	if _, err := mpi.Init(); !errors.Is(err, mpi.ErrOther) {
		t.Fatalf("Init after Finalize: got %v, want ErrOther", err)
	}
}
