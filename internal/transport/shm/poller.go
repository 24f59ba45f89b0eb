package shm

// A Transport is a transport.Polled: the waits of its job poll its rings
// before they park (the job registers it with its progress.Progress).

// Poll delivers the frames that have arrived and reports whether any did.
func (t *Transport) Poll() bool { return t.progress(t.cfg.Handler) }

// MarkWait tells the transport's poller that a goroutine polls in a wait,
// so that it naps meanwhile (see markWait).
func (t *Transport) MarkWait() { t.markWait() }

// EndWait tells the poller that the waiting goroutine parks: it delivers
// in its place from now on (see endWait).
func (t *Transport) EndWait() { t.endWait() }
