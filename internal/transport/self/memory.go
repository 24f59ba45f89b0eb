package self

// SameProcess reports true: the peer is the caller.
func (t *Transport) SameProcess(int) bool { return true }
