//go:build cgo && mpigo_ofi

package mpi

import (
	"os"
	"strings"
	"testing"
)

// Windows over libfabric put and get through the provider's writes and
// reads (fabricRMAJob) when MPIGO_FABRIC_RMA=1 says so; with 0 every one
// goes by message, and by default only where the provider reaches the
// target's memory by itself, an RDMA device (none here: not tcp, not
// shm). libfabric takes its provider from FI_PROVIDER once per process;
// run this with each.
func TestFabricRMAOFI(t *testing.T) {
	prov := os.Getenv("FI_PROVIDER")
	for _, tc := range []struct {
		name string
		mode int8
		fab  bool
	}{
		{"always", rmaAlways, true},
		{"off", rmaOff, false},
		{"auto", rmaAuto, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.mode == rmaAuto && prov != "shm" && !strings.Contains(prov, "tcp") {
				t.Skipf("FI_PROVIDER=%q: the default road depends on the provider libfabric picks", prov)
			}
			cfg := DefaultConfig()
			cfg.Transport = "ofi"
			cfg.fabricRMA = tc.mode
			if err := RunConfig(2, cfg, fabricRMAJob(!tc.fab)); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// Windows over libfabric take the provider's atomic operations with
// MPIGO_FABRIC_ATOMICS=1 where they take its writes and reads
// (fabricAtomicsJob, as over UCX in TestFabricAtomics): with
// MPIGO_FABRIC_RMA=1 over tcp and shm, not by message (0), not by
// default over either (no RDMA device here), and not without
// MPIGO_FABRIC_ATOMICS. Run this with each FI_PROVIDER.
func TestFabricAtomicsOFI(t *testing.T) {
	prov := os.Getenv("FI_PROVIDER")
	for _, tc := range []struct {
		name      string
		mode      int8
		atom, fab bool
	}{
		{"always", rmaAlways, true, true},
		{"off", rmaOff, true, false},
		{"auto", rmaAuto, true, false},
		{"unasked", rmaAlways, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.mode == rmaAuto && prov != "shm" && !strings.Contains(prov, "tcp") {
				t.Skipf("FI_PROVIDER=%q: the default road depends on the provider libfabric picks", prov)
			}
			cfg := DefaultConfig()
			cfg.Transport = "ofi"
			cfg.fabricRMA = tc.mode
			cfg.fabricAtomics = tc.atom
			if err := RunConfig(3, cfg, fabricAtomicsJob(tc.fab)); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// The cost of a low-level FetchAndOpBuf and Flush of an int64 through
// the provider's atomics (with MPIGO_FABRIC_RMA=1: neither tcp nor shm
// reaches memory directly), between two goroutine ranks, and its
// allocations; FI_PROVIDER chooses the provider.
func BenchmarkFabricFetchAndOpOFI(b *testing.B) {
	cfg := DefaultConfig()
	cfg.Transport = "ofi"
	cfg.fabricRMA = rmaAlways
	cfg.fabricAtomics = true
	benchFetchAndOp(b, cfg)
}
