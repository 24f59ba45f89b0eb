package device

import (
	"testing"

	"github.com/mpigo/mpi/internal/engine"
	"github.com/mpigo/mpi/internal/transport"
	"github.com/mpigo/mpi/internal/wire"
)

// nodeTransport stands for a shared-memory transport: a short road with
// room for 512 KiB, and single-copy reads the peer allows or not.
type nodeTransport struct{ exports bool }

func (nodeTransport) Send(wire.Frame) error { return nil }
func (nodeTransport) SendEager(int, uint32, int32, int32, uint64, uint64, []byte) error {
	return nil
}
func (nodeTransport) EagerRoom() int                            { return 512 << 10 }
func (t nodeTransport) ExportRegion(int, []byte) (uint64, bool) { return 1, t.exports }
func (nodeTransport) ReadRegion(int, uint64, int, []byte) error { return nil }
func (t nodeTransport) Exports(int) bool                        { return t.exports }

type plainTransport struct{}

func (plainTransport) Send(wire.Frame) error { return nil }

// The automatic eager limit towards a node peer is half its ring (at most
// 512 KiB), lowered to singleCopyEager once the peer turns out to read
// this rank's memory in place (Device.LowerEager); an explicit
// MPIGO_SHM_EAGER_LIMIT is kept, and peers without a short road keep the
// job's eager limit.
func TestLowerEager(t *testing.T) {
	var (
		_ transport.EagerSender  = nodeTransport{}
		_ transport.RegionReader = nodeTransport{}
	)
	routes := []transport.Transport{plainTransport{}, nodeTransport{exports: true}, nodeTransport{exports: false}}
	for _, tc := range []struct {
		name     string
		shmEager int
		want     [3]int // the largest eager message to ranks 0, 1 and 2
	}{
		{"automatic", 0, [3]int{64 << 10, singleCopyEager, 512 << 10}},
		{"MPIGO_SHM_EAGER_LIMIT", 256 << 10, [3]int{64 << 10, 256 << 10, 256 << 10}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &Device{Size: 3}
			p.Tr = transport.NewRouter(3, func(peer int) transport.Transport { return routes[peer] })
			p.NoteRoutes()
			ecfg := engine.DefaultConfig()
			ecfg.PeerEager = p.PeerEager(tc.shmEager, ecfg.EagerLimit, false, false)
			p.Eng = engine.New(0, ecfg, nil)
			p.LowerEager()
			for peer, limit := range tc.want {
				if !p.Eng.Unanswered(engine.Standard, limit, peer) || p.Eng.Unanswered(engine.Standard, limit+1, peer) {
					t.Errorf("rank %d: eager up to %d bytes: %v, and %d: %v; want the limit at %d", peer,
						limit, p.Eng.Unanswered(engine.Standard, limit, peer), limit+1, p.Eng.Unanswered(engine.Standard, limit+1, peer), limit)
				}
			}
		})
	}
}
