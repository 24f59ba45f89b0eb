package ucx

import (
	"encoding/binary"
	"fmt"
	"strings"
)

// The key of an exposed memory (rma.go) and the endpoint's lanes, in
// every build, so that their readers are tested and fuzzed without UCX.

// keyHead is the bytes of a key before UCX's packed remote key: the
// memory's address and length, little-endian.
const keyHead = 16

// maxPacked bounds the packed remote key a peer's key may carry (UCX's
// are tens to hundreds of bytes).
const maxPacked = 64 << 10

// ParseKey reads a key of ExposeMemory's from a peer: the memory's
// address and length, and UCX's packed remote key. It checks only the
// form; the packed key is UCX's to read.
func ParseKey(key []byte) (addr uint64, n int, packed []byte, err error) {
	if len(key) <= keyHead {
		return 0, 0, nil, fmt.Errorf("a remote-memory key of %d bytes, shorter than its %d-byte head and a packed key", len(key), keyHead)
	}
	if len(key)-keyHead > maxPacked {
		return 0, 0, nil, fmt.Errorf("a remote-memory key of %d bytes (at most %d)", len(key), keyHead+maxPacked)
	}
	addr = binary.LittleEndian.Uint64(key)
	ln := binary.LittleEndian.Uint64(key[8:])
	if ln == 0 || ln > 1<<62 || addr+ln < addr {
		return 0, 0, nil, fmt.Errorf("a remote-memory key of %d bytes at %#x", ln, addr)
	}
	return addr, int(ln), key[keyHead:], nil
}

// rmaTransports returns the UCX transports of the lanes that carry puts
// and gets in an endpoint's description (ucp_ep_print_info), whose lane
// lines read
//
//	#   lane[0]:  0:tcp/eth0.0 md[0]  -> md[0]/tcp/sysdev[255] rma_bw#0 am am_bw#0
//
// in order, without repeats.
func rmaTransports(info string) []string {
	var tls []string
	for _, line := range strings.Split(info, "\n") {
		f := strings.Fields(strings.TrimLeft(line, "# "))
		if len(f) < 3 || !strings.HasPrefix(f[0], "lane[") {
			continue
		}
		rma := false
		for _, role := range f[2:] {
			if strings.HasPrefix(role, "rma") {
				rma = true
			}
		}
		_, res, ok := strings.Cut(f[1], ":")
		tl, _, slash := strings.Cut(res, "/")
		if !rma || !ok || !slash || tl == "" {
			continue
		}
		if !contains(tls, tl) {
			tls = append(tls, tl)
		}
	}
	return tls
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

// resourceTransports returns the transports of a context's description
// (ucp_context_print_info), whose resource lines end in "tl/device":
//
//	#   resource 0  :  md 0  dev 0  flags -- tcp/lo
//
// in order, without repeats.
func resourceTransports(info string) []string {
	var tls []string
	for _, line := range strings.Split(info, "\n") {
		if !strings.Contains(line, "resource") || !strings.Contains(line, "flags") {
			continue
		}
		f := strings.Fields(line)
		tl, _, ok := strings.Cut(f[len(f)-1], "/")
		if ok && tl != "" && !contains(tls, tl) {
			tls = append(tls, tl)
		}
	}
	return tls
}

// What a context's transports say of the peers' memory (memoryReach).
const (
	reachPeer int8 = iota // it depends on the peer: ask the endpoint's lanes
	reachNone             // no peer's memory directly: the network is tcp, with no RDMA device
	reachAll              // every peer's directly: shared memory only, so every peer is on this node
)

// shmTransports are UCX's transports within a node.
var shmTransports = []string{"self", "posix", "sysv", "mm", "cma", "knem", "xpmem"}

// memoryReach says, from the transports of a context, whether puts and
// gets reach the peers' memory directly without asking each endpoint:
// never if its only network transport is tcp (a peer on another node is
// reached over tcp; one on this node may not be, but that is known only
// by connecting, and windows between processes of a node use shared
// memory of their own), always if it has none (shared memory only),
// else per peer (an RDMA device, a transport this list does not know, or
// a description it could not read).
func memoryReach(tls []string) int8 {
	if len(tls) == 0 {
		return reachPeer // a description this reader does not know
	}
	network, tcp := false, false
	for _, tl := range tls {
		switch {
		case tl == "tcp":
			tcp = true
		case !contains(shmTransports, tl):
			network = true
		}
	}
	switch {
	case network:
		return reachPeer
	case tcp:
		return reachNone
	}
	return reachAll
}

// directRMA reports whether puts and gets over the lanes of tls reach
// the peer's memory without a software protocol on a socket: any lane
// but tcp (an RDMA device's, or shared memory's and cross-memory
// attach's on one node).
func directRMA(tls []string) bool {
	for _, tl := range tls {
		if tl != "tcp" {
			return true
		}
	}
	return false
}
