package transport

// One-sided communication (windows) needs to know how an origin can reach
// a target's memory. These optional interfaces say it; a transport that
// implements neither is reached by messages, which every transport
// carries (the runtime's fallback).

// SameProcess is implemented by transports whose peers are goroutines of
// the caller's process: an origin may address their memory directly.
type SameProcess interface {
	SameProcess(peer int) bool
}

// Segments is implemented by transports whose peers can map shared memory
// segments that a rank creates (processes on one node).
type Segments interface {
	// SegmentName is the file of rank's segment called suffix.
	SegmentName(rank int, suffix string) string
}

// SameProcess reports whether the transport to peer says the peer runs in
// this process.
func (r *Router) SameProcess(peer int) bool {
	if peer < 0 || peer >= len(r.byPeer) {
		return false
	}
	s, ok := r.byPeer[peer].(SameProcess)
	return ok && s.SameProcess(peer)
}

// Segments returns the transport to peer if it shares memory segments,
// else nil.
func (r *Router) Segments(peer int) Segments {
	if peer < 0 || peer >= len(r.byPeer) {
		return nil
	}
	s, _ := r.byPeer[peer].(Segments)
	return s
}
