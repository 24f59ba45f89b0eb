package mpi

// sharedMemoryNode reports whether the members of c are processes of one
// node that reach each other through shared memory: each member is a
// goroutine of this process or a peer the transport reaches through node
// shared-memory segments, and at least one is not in this process. Every
// member computes the same answer (a member outside this process sees
// this one outside its own; shared memory is reachable both ways or not
// at all). The collective algorithm selection uses it
// (coll.Situation.SharedMemory).
func (c *Comm) sharedMemoryNode() bool {
	apart := false
	for _, g := range c.group {
		if c.p.inProcess(g) {
			continue
		}
		if c.p.segmentsFor(g) == nil {
			return false
		}
		apart = true
	}
	return apart
}
