package device

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/mpigo/mpi/internal/transport"
	"github.com/mpigo/mpi/internal/wire"
)

// storeKV is a job's store as the fallback reads it: values by key, a
// count of the lookups, and an error for the keys in fail.
type storeKV struct {
	mu   sync.Mutex
	vals map[string]string
	fail map[string]bool
	gets int
}

func (k *storeKV) Put(key, value string) error {
	k.mu.Lock()
	k.vals[key] = value
	k.mu.Unlock()
	return nil
}
func (k *storeKV) Fence() error { return nil }
func (k *storeKV) Close() error { return nil }
func (k *storeKV) Get(key string) (string, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.gets++
	if k.fail[key] {
		return "", errors.New("store unreachable")
	}
	v, ok := k.vals[key]
	if !ok {
		return "", errors.New("no value for key " + key)
	}
	return v, nil
}

// roadTransport records the peers it sent to, and plays a fabric's single
// copy (every call recorded too).
type roadTransport struct {
	name  string
	mu    sync.Mutex
	sent  []int
	calls []string
}

func (t *roadTransport) Send(f wire.Frame) error {
	t.mu.Lock()
	t.sent = append(t.sent, f.To)
	t.mu.Unlock()
	return nil
}
func (t *roadTransport) Name() string   { return t.name }
func (t *roadTransport) ChunkSize() int { return 12345 }
func (t *roadTransport) ExportRegion(peer int, b []byte) (uint64, bool) {
	t.calls = append(t.calls, "export")
	return 7, true
}
func (t *roadTransport) ReadRegion(peer int, token uint64, off int, dst []byte) error {
	t.calls = append(t.calls, "read")
	return nil
}
func (t *roadTransport) Exports(peer int) bool { return true }
func (t *roadTransport) LosePeer(peer int, err error) {
	t.calls = append(t.calls, fmt.Sprintf("lose %d", peer))
}
func (t *roadTransport) StartRegion(peer int, token uint64, off int, dst []byte, done func(error)) error {
	t.calls = append(t.calls, "start")
	return nil
}

// A default fabric falls back to tcp per peer: a peer whose process
// published noFabric is reached over tcp, with no single copy, and said
// so once; the others over the fabric, with it; a store that cannot
// answer leaves the peer to the fabric and is asked again later; and the
// engine's export (under its lock) never asks the store.
func TestFabricFallback(t *testing.T) {
	kv := &storeKV{vals: map[string]string{
		ucxKey(1): "0a0b0c",
		ucxKey(2): noFabric,
		ucxKey(3): "zz",
	}, fail: map[string]bool{ucxKey(4): true}}
	addrs := newFabricAddrs(kv, 5, "UCX", ucxKey)
	var noted []int
	addrs.note = func(peer int) { noted = append(noted, peer) }
	fab, tcp := &roadTransport{name: "ucx"}, &roadTransport{name: "tcp"}
	rt := newFabricOrTCP(fab, tcp, addrs)

	// Before any frame: nothing known, nothing exported, no store call.
	if _, ok := rt.ExportRegion(1, make([]byte, 8)); ok || rt.Exports(1) {
		t.Errorf("export to a peer not yet talked to: want none")
	}
	if kv.gets != 0 {
		t.Errorf("export asked the store %d times, want 0", kv.gets)
	}
	for _, peer := range []int{1, 2, 1, 2, 4} {
		if err := rt.Send(wire.Frame{Header: wire.Header{Kind: wire.Eager}, To: peer}); err != nil {
			t.Fatal(err)
		}
	}
	if got := fab.sent; len(got) != 3 || got[0] != 1 || got[1] != 1 || got[2] != 4 {
		t.Errorf("over the fabric: %v, want [1 1 4]", got)
	}
	if got := tcp.sent; len(got) != 2 || got[0] != 2 || got[1] != 2 {
		t.Errorf("over tcp: %v, want [2 2]", got)
	}
	if len(noted) != 1 || noted[0] != 2 {
		t.Errorf("noted %v, want [2] once", noted)
	}
	// Peers 1 and 2 were looked up once each; 4, whose lookup failed,
	// once so far.
	if kv.gets != 3 {
		t.Errorf("%d store calls, want 3", kv.gets)
	}
	if !rt.addrs.reaches(4) || kv.gets != 4 {
		t.Errorf("a failed lookup is asked again: %d store calls, want 4", kv.gets)
	}

	// A peer the job learnt is lost is told to the transport that
	// reaches it (transport.PeerLoser), through the router too.
	rt.LosePeer(1, errors.New("gone"))
	transport.NewRouter(5, func(int) transport.Transport { return rt }).LosePeer(2, errors.New("gone"))
	if !slices.Contains(fab.calls, "lose 1") || !slices.Contains(tcp.calls, "lose 2") || slices.Contains(fab.calls, "lose 2") {
		t.Errorf("LosePeer: fabric told %v, tcp %v; want peer 1 to the fabric, 2 to tcp", fab.calls, tcp.calls)
	}
	fab.calls, tcp.calls = nil, nil

	// The single copy: to and from peer 1 through the fabric; none with
	// peer 2, whose large messages stream over tcp.
	if tok, ok := rt.ExportRegion(1, make([]byte, 8)); !ok || tok != 7 || !rt.Exports(1) {
		t.Errorf("export to a fabric peer: %d %v", tok, ok)
	}
	if _, ok := rt.ExportRegion(2, make([]byte, 8)); ok || rt.Exports(2) {
		t.Errorf("export to a peer reached over tcp: want none")
	}
	if err := rt.ReadRegion(2, 7, 0, make([]byte, 8)); !errors.Is(err, errNoRegion) {
		t.Errorf("read from a peer reached over tcp: %v, want errNoRegion", err)
	}
	if err := rt.StartRegion(2, 7, 0, make([]byte, 8), func(error) {}); !errors.Is(err, errNoRegion) {
		t.Errorf("started read from a peer reached over tcp: %v, want errNoRegion", err)
	}
	if err := rt.ReadRegion(1, 7, 0, make([]byte, 8)); err != nil {
		t.Errorf("read from a fabric peer: %v", err)
	}
	if err := rt.StartRegion(1, 7, 0, make([]byte, 8), func(error) {}); err != nil {
		t.Errorf("started read from a fabric peer: %v", err)
	}
	if got := strings.Join(fab.calls, " "); got != "export read start" {
		t.Errorf("fabric single-copy calls %q, want \"export read start\"", got)
	}
	// A fabric without remote memory access offers none, to anyone.
	if rt.DirectMemory(1) {
		t.Error("direct memory through a fabric without it")
	}
	if _, err := rt.ExposeMemory(make([]byte, 8)); !errors.Is(err, errNoRemote) {
		t.Errorf("expose through a fabric without remote memory: %v", err)
	}
	if _, err := rt.OpenRemote(1, []byte{1}); !errors.Is(err, errNoRemote) {
		t.Errorf("open through a fabric without remote memory: %v", err)
	}
	if rt.Name() != "ucx" || rt.ChunkSize() != 12345 {
		t.Errorf("name %q chunk %d: want the fabric's", rt.Name(), rt.ChunkSize())
	}

	// The fabric's own lookups: an address, a peer without the fabric, a
	// value that is not an address, a rank out of the job.
	if b, err := addrs.address(1); err != nil || len(b) != 3 {
		t.Errorf("address of rank 1: %x %v", b, err)
	}
	for peer, want := range map[int]string{2: "could not start UCX", 3: "no valid UCX address", 9: "no rank 9"} {
		if _, err := addrs.address(peer); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("address of rank %d: %v, want an error saying %q", peer, err, want)
		}
	}
}
