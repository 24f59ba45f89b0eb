//go:build cgo && mpigo_ofi

package mpi

import (
	"os"
	"strings"
	"testing"
)

// Windows over libfabric put and get through the provider's writes and
// reads (fabricRMAJob); with MPIGO_FABRIC_RMA=0 every one goes by
// message, and by default only where the provider reaches the target's
// memory without a socket (shm here; not tcp). libfabric takes its
// provider from FI_PROVIDER once per process, so the default is checked
// for the provider this run was given.
func TestFabricRMAOFI(t *testing.T) {
	prov := os.Getenv("FI_PROVIDER")
	for _, tc := range []struct {
		name string
		mode int8
		fab  bool
	}{
		{"always", rmaAlways, true},
		{"off", rmaOff, false},
		{"auto", rmaAuto, prov == "shm"},
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
