package ucx

import (
	"encoding/binary"
	"slices"
	"testing"
)

// ParseKey reads any bytes from a peer without reading past them, and
// refuses a key whose range wraps or which is too short or too long.
func TestParseKey(t *testing.T) {
	key := func(addr, n uint64, packed int) []byte {
		b := make([]byte, keyHead+packed)
		binary.LittleEndian.PutUint64(b, addr)
		binary.LittleEndian.PutUint64(b[8:], n)
		return b
	}
	for _, tc := range []struct {
		name string
		key  []byte
		ok   bool
	}{
		{"good", key(0x1000, 64, 40), true},
		{"no packed key", key(0x1000, 64, 0), false},
		{"empty", nil, false},
		{"zero length", key(0x1000, 0, 40), false},
		{"wraps", key(^uint64(0)-10, 64, 40), false},
		{"huge", key(0x1000, 1<<63, 40), false},
		{"packed too long", key(0x1000, 64, maxPacked+1), false},
	} {
		_, n, packed, err := ParseKey(tc.key)
		if (err == nil) != tc.ok {
			t.Errorf("%s: %v", tc.name, err)
		}
		if err == nil && (n != 64 || len(packed) != 40) {
			t.Errorf("%s: length %d, packed %d bytes", tc.name, n, len(packed))
		}
	}
}

func FuzzParseKey(f *testing.F) {
	f.Add(make([]byte, keyHead+8))
	f.Fuzz(func(t *testing.T, b []byte) {
		addr, n, packed, err := ParseKey(b)
		if err == nil && (n <= 0 || len(packed) == 0 || len(packed) > maxPacked || addr+uint64(n) < addr) {
			t.Fatalf("accepted %x: addr %#x n %d packed %d", b, addr, n, len(packed))
		}
	})
}

// The lanes of puts and gets, as UCX 1.13 describes an endpoint: over
// tcp alone (not direct), over shared memory and cross-memory attach
// (direct), over InfiniBand with tcp beside (direct).
func TestRMATransports(t *testing.T) {
	for _, tc := range []struct {
		name, info string
		want       []string
		direct     bool
	}{
		{"tcp", `#
# UCP endpoint
#                 lane[0]:  0:tcp/mgb99.0 md[0]             -> md[0]/tcp/sysdev[255] rma_bw#0 am am_bw#0
#                 lane[1]:  1:tcp/lo.0 md[0]                -> md[0]/tcp/sysdev[255] rma_bw#1 wireup
#                  rma_bw: mds [0] rndv_rkey_size 10
`, []string{"tcp"}, false},
		{"shm", `#                 lane[0]:  0:self/memory0.0 md[0]          -> md[0]/self/sysdev[255] am am_bw#0
#                 lane[1]:  1:posix/memory.0 md[1]          -> md[1]/posix/sysdev[255]
#                 lane[2]:  2:cma/memory.0 md[2]            -> md[2]/cma/sysdev[255] rma_bw#0
`, []string{"cma"}, true},
		{"ib", `#                 lane[0]:  2:rc_mlx5/mlx5_0:1.0 md[1]      -> md[1]/ib/sysdev[255] rma#0 amo#0 am am_bw#0
#                 lane[1]:  5:tcp/eth0.0 md[0]  -> md[0]/tcp/sysdev[255] rma_bw#1
`, []string{"rc_mlx5", "tcp"}, true},
		{"none", "no lanes here\nlane[x]\n", nil, false},
	} {
		got := rmaTransports(tc.info)
		if !slices.Equal(got, tc.want) || directRMA(got) != tc.direct {
			t.Errorf("%s: %v direct %v, want %v %v", tc.name, got, directRMA(got), tc.want, tc.direct)
		}
	}
}

// A context's transports, as UCX 1.13 describes them, and what they say
// of the peers' memory without a connection.
func TestMemoryReach(t *testing.T) {
	line := func(tl string) string { return "#   resource 0  :  md 0  dev 0  flags -- " + tl + "\n" }
	for _, tc := range []struct {
		name, info string
		tls        []string
		reach      int8
	}{
		{"tcp and shm", "# memory domains\n" + line("self/memory0") + line("tcp/eth0") + line("tcp/lo") + line("posix/memory") + line("cma/memory"),
			[]string{"self", "tcp", "posix", "cma"}, reachNone},
		{"shm only", line("self/memory0") + line("posix/memory") + line("cma/memory"), []string{"self", "posix", "cma"}, reachAll},
		{"infiniband", line("rc_mlx5/mlx5_0:1") + line("tcp/ib0") + line("posix/memory"), []string{"rc_mlx5", "tcp", "posix"}, reachPeer},
		{"nothing", "garbage\nresource flags\n", nil, reachPeer},
	} {
		tls := resourceTransports(tc.info)
		if !slices.Equal(tls, tc.tls) || memoryReach(tls) != tc.reach {
			t.Errorf("%s: %v reach %d, want %v %d", tc.name, tls, memoryReach(tls), tc.tls, tc.reach)
		}
	}
}
