// Command cgoshare is a Go program that links a C library using MPI (lib.c)
// and shares its MPI with it through abi/capi: the Go side starts MPI and
// attaches it, hands the C side a communicator, gets one back, and the two
// sides exchange messages (TestCgoShare).
package main

/*
#cgo CFLAGS: -I${SRCDIR}/../../../../abi/include
#include "lib.h"
*/
import "C"

import (
	"fmt"
	"os"

	"github.com/mpigo/mpi"
	"github.com/mpigo/mpi/abi/capi"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "cgoshare:", err)
		os.Exit(1)
	}
}

func run() error {
	if len(os.Args) > 1 && os.Args[1] == "cinit" {
		return cinit()
	}
	w, err := mpi.Init()
	if err != nil {
		return err
	}
	if err := capi.Attach(w); err != nil {
		return err
	}
	if err := capi.Attach(w); err == nil {
		return fmt.Errorf("a second Attach succeeded")
	}
	dup, err := w.Dup()
	if err != nil {
		return err
	}
	h, err := capi.CommToC(dup)
	if err != nil {
		return err
	}
	if h2, _ := capi.CommToC(dup); h2 != h {
		return fmt.Errorf("CommToC gave %#x, then %#x", h, h2)
	}
	if back, err := capi.CommFromC(h); err != nil || back != dup {
		return fmt.Errorf("CommFromC(CommToC(dup)) = %v, %v", back, err)
	}
	cc := C.MPI_Comm_fromint(C.int(h))
	rank, size := w.Rank(), w.Size()
	sum := int(C.lib_check(cc, C.int(rank), C.int(size)))
	if want := size * (size + 1) / 2; sum != want {
		return fmt.Errorf("the C library's Allreduce gave %d, want %d", sum, want)
	}

	// C sends, Go receives: rank 0's library sends to every other rank.
	if rank == 0 {
		for r := 1; r < size; r++ {
			if rc := C.lib_send(cc, C.int(r), C.int(100+r)); rc != 0 {
				return fmt.Errorf("lib_send: %d", rc)
			}
		}
	} else {
		var v [1]int32
		if _, err := mpi.RecvInto(dup, v[:], 0, 7); err != nil {
			return err
		}
		if int(v[0]) != 100+rank {
			return fmt.Errorf("received %d from the C library, want %d", v[0], 100+rank)
		}
	}

	// A communicator made in C, used from Go.
	var split C.MPI_Comm
	if rc := C.lib_split(cc, &split); rc != 0 {
		return fmt.Errorf("lib_split: %d", rc)
	}
	half, err := capi.CommFromC(int32(C.MPI_Comm_toint(split)))
	if err != nil {
		return err
	}
	got, err := mpi.Allreduce(half, rank, mpi.Sum[int]())
	if err != nil {
		return err
	}
	want, members, above := 0, 0, 0
	for r := rank % 2; r < size; r += 2 {
		want += r
		members++
		if r > rank {
			above++ // the split's key is -rank: higher ranks come first
		}
	}
	if got != want || half.Size() != members || half.Rank() != above {
		return fmt.Errorf("the C library's split: rank %d of %d, Allreduce %d; want rank %d of %d, %d", half.Rank(), half.Size(), got, above, members, want)
	}
	if _, err := capi.CommFromC(0x12345678); err == nil {
		return fmt.Errorf("CommFromC of garbage succeeded")
	}
	if rc := C.lib_finalize_refused(); rc == 0 {
		return fmt.Errorf("the C library's MPI_Finalize succeeded, want an error: the Go program owns MPI")
	}
	if err := mpi.Finalize(); err != nil {
		return err
	}
	if C.lib_finalized() != 1 {
		return fmt.Errorf("MPI_Finalized says no after mpi.Finalize")
	}
	fmt.Printf("cgoshare OK rank %d of %d sum %d\n", rank, size, sum)
	return nil
}

// cinit is the other way round: the C library starts and ends MPI, and
// the Go side uses its world.
func cinit() error {
	if rc := C.lib_init(); rc != 0 {
		return fmt.Errorf("MPI_Init_thread from C: %d", rc)
	}
	w, err := capi.CommFromC(int32(C.lib_world()))
	if err != nil {
		return err
	}
	if err := capi.Attach(w); err == nil {
		return fmt.Errorf("capi.Attach after C's MPI_Init succeeded")
	}
	sum, err := mpi.Allreduce(w, w.Rank()+1, mpi.Sum[int]())
	if err != nil {
		return err
	}
	if want := w.Size() * (w.Size() + 1) / 2; sum != want {
		return fmt.Errorf("the Allreduce over C's world gave %d, want %d", sum, want)
	}
	rank, size := w.Rank(), w.Size()
	if rc := C.lib_finalize(); rc != 0 {
		return fmt.Errorf("MPI_Finalize from C: %d", rc)
	}
	fmt.Printf("cgoshare cinit OK rank %d of %d sum %d\n", rank, size, sum)
	return nil
}
