//go:build linux && mpigo_ucx

package main

// testFabric is the fabric transport TestNetnsFabric runs over: this
// test binary was built with -tags mpigo_ucx.
const testFabric = "ucx"

// fabricTCPEnv makes UCX carry the inter-host traffic over its tcp
// transport (the namespaces have no RDMA device) and shared memory
// within a host.
var fabricTCPEnv = []string{"UCX_TLS=tcp,posix,cma,self", "UCX_WARN_UNUSED_ENV_VARS=n"}

// fabricLib is how mpigo names the library in its messages.
const fabricLib = "UCX"

// fabricBrokenEnv makes UCX fail to open a context on a host: the
// transport it names does not exist.
const fabricBrokenEnv = "UCX_TLS=mgbroken"
