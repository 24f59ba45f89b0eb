package io_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mpigo/mpi"
)

// The interop test exchanges files with Open MPI's MPI-IO: a C program
// built with mpicc.openmpi reads what mpigo wrote through a subarray view
// and writes what mpigo then reads, in native and external32.

const interopRows, interopCols = 8, 12

// interopC is the C side: "write" or "read" a 2-D int array of
// interopRows x interopCols distributed in 2x2 blocks over 4 ranks, with
// a subarray view, for each (data representation, file) pair of its
// arguments. A read checks every element and exits 3 on a mismatch.
const interopC = `#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#define R 8
#define C 12
int main(int argc, char **argv) {
    int rank, size, gs[2] = {R, C}, ss[2] = {R/2, C/2}, st[2], i, bad = 0;
    MPI_File fh; MPI_Datatype ft; MPI_Status s;
    int buf[(R/2)*(C/2)];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 4 || argc < 4 || argc % 2) MPI_Abort(MPI_COMM_WORLD, 2);
    st[0] = (rank/2)*(R/2); st[1] = (rank%2)*(C/2);
    MPI_Type_create_subarray(2, gs, ss, st, MPI_ORDER_C, MPI_INT, &ft);
    MPI_Type_commit(&ft);
    int w = strcmp(argv[1], "write") == 0;
    for (int a = 2; a + 1 < argc; a += 2) {
    if (MPI_File_open(MPI_COMM_WORLD, argv[a+1], w ? (MPI_MODE_CREATE|MPI_MODE_WRONLY) : MPI_MODE_RDONLY, MPI_INFO_NULL, &fh) != MPI_SUCCESS) MPI_Abort(MPI_COMM_WORLD, 4);
    if (MPI_File_set_view(fh, 0, MPI_INT, ft, argv[a], MPI_INFO_NULL) != MPI_SUCCESS) MPI_Abort(MPI_COMM_WORLD, 5);
    for (i = 0; i < (R/2)*(C/2); i++) buf[i] = w ? 7000 + (st[0] + i/(C/2))*C + st[1] + i%(C/2) : -1;
    if (w) MPI_File_write_all(fh, buf, (R/2)*(C/2), MPI_INT, &s);
    else {
        MPI_File_read_all(fh, buf, (R/2)*(C/2), MPI_INT, &s);
        for (i = 0; i < (R/2)*(C/2); i++)
            if (buf[i] != 5000 + (st[0] + i/(C/2))*C + st[1] + i%(C/2)) bad = 1;
    }
    MPI_File_close(&fh);
    }
    if (bad) { fprintf(stderr, "rank %d: wrong data\n", rank); MPI_Abort(MPI_COMM_WORLD, 3); }
    MPI_Finalize();
    return 0;
}
`

// blockView sets f's view to rank r's block of the interop array.
func interopBlock(c *mpi.Comm, name, datarep string, write bool, base int32) error {
	amode := mpi.ModeRdonly
	if write {
		amode = mpi.ModeCreate | mpi.ModeWronly
	}
	f, err := mpi.OpenFile(c, name, amode, nil)
	if err != nil {
		return err
	}
	r := c.Rank()
	st := []int{(r / 2) * interopRows / 2, (r % 2) * interopCols / 2}
	if err := mpi.SetViewBlock[int32](f, 0, []int{interopRows, interopCols}, []int{interopRows / 2, interopCols / 2}, st, datarep); err != nil {
		return err
	}
	blk := make([]int32, interopRows*interopCols/4)
	want := make([]int32, len(blk))
	for i := range want {
		want[i] = base + int32((st[0]+i/(interopCols/2))*interopCols+st[1]+i%(interopCols/2))
	}
	if write {
		if _, err := mpi.WriteAtAll(f, 0, want); err != nil {
			return err
		}
	} else {
		if _, err := mpi.ReadAtAll(f, 0, blk); err != nil {
			return err
		}
		for i := range blk {
			if blk[i] != want[i] {
				return fmt.Errorf("rank %d: element %d is %d, want %d (file written by Open MPI)", r, i, blk[i], want[i])
			}
		}
	}
	return f.Close()
}

func TestInteropOpenMPI(t *testing.T) {
	mpicc, err1 := exec.LookPath("mpicc.openmpi")
	mpirun, err2 := exec.LookPath("mpirun.openmpi")
	if err1 != nil || err2 != nil {
		if os.Getenv("MPIGO_REQUIRE_INTEGRATION") == "1" {
			t.Fatal("mpicc.openmpi and mpirun.openmpi are required (MPIGO_REQUIRE_INTEGRATION=1)")
		}
		t.Skip("mpicc.openmpi or mpirun.openmpi not found: skipping the Open MPI interop test")
	}
	if testing.Short() {
		t.Skip("-short")
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "interop.c")
	bin := filepath.Join(dir, "interop")
	if err := os.WriteFile(src, []byte(interopC), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(mpicc, "-o", bin, src).CombinedOutput(); err != nil {
		t.Fatalf("mpicc: %v\n%s", err, out)
	}
	runC := func(mode string, files ...string) {
		t.Helper()
		args := []string{"-n", "4", "--oversubscribe"}
		if os.Getuid() == 0 {
			args = append(args, "--allow-run-as-root")
		}
		args = append(append(args, bin, mode), files...)
		cmd := exec.Command(mpirun, args...)
		cmd.Env = append(os.Environ(), "OMPI_MCA_btl=self,vader")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("mpirun %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	reps := []string{"native", "external32"}
	var goFiles, cFiles []string
	for _, rep := range reps {
		goFiles = append(goFiles, rep, filepath.Join(dir, "go-"+rep))
		cFiles = append(cFiles, rep, filepath.Join(dir, "c-"+rep))
	}
	// mpigo writes, Open MPI reads, in both representations.
	if err := mpi.Run(4, func(c *mpi.Comm) error {
		for i := 0; i < len(goFiles); i += 2 {
			if err := interopBlock(c, goFiles[i+1], goFiles[i], true, 5000); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	runC("read", goFiles...)
	// Open MPI writes, mpigo reads.
	runC("write", cFiles...)
	if err := mpi.Run(4, func(c *mpi.Comm) error {
		for i := 0; i < len(cFiles); i += 2 {
			if err := interopBlock(c, cFiles[i+1], cFiles[i], false, 7000); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}
