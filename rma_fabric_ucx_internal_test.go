//go:build cgo && mpigo_ucx

package mpi

import (
	"fmt"
	"testing"
)

// ucxConfig is a goroutine job over the UCX transports tls names: tcp as
// ranks on two nodes would talk, or shared memory and cross-memory
// attach, which reach a peer's memory directly.
func ucxConfig(t *testing.T, tls string) Config {
	t.Helper()
	t.Setenv("UCX_TLS", tls)
	cfg := DefaultConfig()
	cfg.Transport = "ucx"
	return cfg
}

// Windows over UCX put and get through the fabric (fabricRMAJob); with
// MPIGO_FABRIC_RMA=0 every one goes by message, and by default only
// where UCX reaches the target's memory directly (not over its tcp).
func TestFabricRMA(t *testing.T) {
	for _, tc := range []struct {
		tls  string
		mode int8
		fab  bool
	}{
		{"tcp", rmaAlways, true},
		{"tcp", rmaOff, false},
		{"tcp", rmaAuto, false},
		{"posix,cma,self", rmaAuto, true},
	} {
		t.Run(fmt.Sprintf("%s/%d", tc.tls, tc.mode), func(t *testing.T) {
			cfg := ucxConfig(t, tc.tls)
			cfg.fabricRMA = tc.mode
			err := RunConfig(2, cfg, fabricRMAJob(!tc.fab))
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}
