//go:build cgo && mpigo_ofi

package conformance

import (
	"os"
	"slices"

	"github.com/mpigo/mpi/internal/transport/ofi"
)

// With the libfabric transport in the build (-tags mpigo_ofi), the matrix
// runs every test over it too, with the provider libfabric chooses
// (FI_PROVIDER names one). Where libfabric offers no provider, the matrix
// leaves it out and TestFabricsUsable says why, unless
// MPIGO_REQUIRE_INTEGRATION=1, under which every test runs over it and
// fails with the reason.
func init() {
	fabrics = append(fabrics, func(d Transport) []Transport {
		if _, err := ofi.Available(); err != nil && os.Getenv("MPIGO_REQUIRE_INTEGRATION") != "1" {
			if msg := "ofi: " + err.Error(); !slices.Contains(unusable, msg) {
				unusable = append(unusable, msg)
			}
			return nil
		}
		d.Config.Transport = "ofi"
		d.Name = "ofi"
		return []Transport{d}
	})
}
