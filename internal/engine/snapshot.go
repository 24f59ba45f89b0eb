package engine

import "github.com/mpigo/mpi/internal/wire"

// This file gives tools a read-only picture of the engine's queues: what
// hang diagnosis prints as "receives posted but not matched" and
// "messages sent but not matched". It copies under the engine's lock and
// never changes anything.

// QueuedRecv is a posted receive that no message has matched yet.
type QueuedRecv struct {
	Context uint32
	Source  int // communicator rank, or AnySource
	Tag     int // or AnyTag
	Size    int // bytes the receive buffer holds
}

// QueuedMsg is a message that arrived before any receive matched it.
type QueuedMsg struct {
	Context uint32
	Source  int // the sender's rank in the communicator
	From    int // the sender's world rank
	Tag     int
	Size    int
	Sync    bool // a synchronous send: its sender waits for the match
	RTS     bool // a rendezvous announcement: its sender waits for the match
}

// PendingSend is a send the engine still has to hear about from its
// receiver: a rendezvous or synchronous send that has not been matched (or
// finished) yet.
type PendingSend struct {
	Context uint32
	Dest    int // the destination's rank in the communicator
	To      int // its world rank
	Tag     int
	Size    int
	Sync    bool
}

// Snapshot is a copy of an engine's queues at one moment.
type Snapshot struct {
	Posted     []QueuedRecv
	Unexpected []QueuedMsg
	Sends      []PendingSend
}

// Snapshot copies the engine's queues, at most limit entries of each
// (limit <= 0: all). It is meant for diagnosis, not for the hot path.
func (e *Engine) Snapshot(limit int) Snapshot {
	var s Snapshot
	full := func(n int) bool { return limit > 0 && n >= limit }
	e.mu.Lock()
	defer e.mu.Unlock()
	for r := e.postedHead; r != nil && !full(len(s.Posted)); r = r.next {
		s.Posted = append(s.Posted, QueuedRecv{Context: r.Context, Source: r.Peer, Tag: r.Tag, Size: r.size()})
	}
	for m := e.unexpHead; m != nil && !full(len(s.Unexpected)); m = m.next {
		h := &m.hdr
		s.Unexpected = append(s.Unexpected, QueuedMsg{Context: h.Context, Source: int(h.Src), From: m.from, Tag: int(h.Tag),
			Size: int(h.Size), Sync: h.Flags&wire.FlagSync != 0, RTS: h.Kind == wire.RTS})
	}
	for _, r := range e.sends {
		if full(len(s.Sends)) {
			break
		}
		s.Sends = append(s.Sends, PendingSend{Context: r.Context, Dest: r.Peer, To: r.To, Tag: r.Tag, Size: r.size(), Sync: r.Mode == Synchronous})
	}
	return s
}
