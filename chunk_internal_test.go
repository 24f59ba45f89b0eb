package mpi

import (
	"testing"

	"github.com/mpigo/mpi/internal/transport/tcp"
)

// Rendezvous Data frames towards a tcp peer take tcp's chunk size
// (transport.Chunker); towards the rank itself and over inproc, the
// engine's default.
func TestPeerChunkFromTransport(t *testing.T) {
	for _, tt := range []struct {
		transport string
		want      int // towards rank 1
	}{{"tcp", tcp.ChunkSize}, {"inproc", 0}} {
		t.Run(tt.transport, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.Transport = tt.transport
			j, err := newLocalJob(2, cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer j.Close()
			pc := j.procs[0].Eng.Config().PeerChunk
			got := 0
			if len(pc) > 1 {
				got = pc[1]
				if pc[0] != 0 {
					t.Errorf("chunk towards itself %d, want the default (0)", pc[0])
				}
			}
			if got != tt.want {
				t.Errorf("chunk towards rank 1 over %s: %d, want %d", tt.transport, got, tt.want)
			}
		})
	}
}
