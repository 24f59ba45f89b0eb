//go:build linux && mpigo_ofi && !mpigo_ucx

package main

// testFabric is the fabric transport TestNetnsFabric runs over: this
// test binary was built with -tags mpigo_ofi.
const testFabric = "ofi"

// fabricTCPEnv makes libfabric carry the inter-host traffic over its tcp
// provider with the reliable-datagram layer on top.
var fabricTCPEnv = []string{"FI_PROVIDER=tcp;ofi_rxm"}

// fabricLib is how mpigo names the library in its messages.
const fabricLib = "libfabric"

// fabricBrokenEnv makes libfabric find no provider on a host.
const fabricBrokenEnv = "FI_PROVIDER=mgbroken"
