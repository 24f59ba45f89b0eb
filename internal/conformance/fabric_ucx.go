//go:build cgo && mpigo_ucx

package conformance

// With the UCX transport in the build (-tags mpigo_ucx), the matrix runs
// every test over it too, with the UCX transports the environment's
// UCX_TLS names (all it finds if unset).
func init() {
	fabrics = append(fabrics, func(d Transport) []Transport {
		d.Config.Transport = "ucx"
		d.Name = "ucx"
		return []Transport{d}
	})
}
