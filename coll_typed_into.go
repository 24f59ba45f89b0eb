package mpi

import (
	"github.com/mpigo/mpi/internal/coll"
)

// The typed collectives into caller-owned slices of plain elements
// (BcastInto, AllgatherInto, AlltoallInto): nothing is allocated.

// BcastInto copies root's buf into buf on every rank (MPI_Bcast with a
// count): buf must hold plain elements and have the same length
// everywhere. Nothing is allocated; the algorithm is chosen by size.
func BcastInto[E any](c *Comm, buf []E, root int) (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("BcastInto", c, root, Undefined), &err)
	}
	if err = c.enterColl("BcastInto"); err != nil {
		return
	}
	defer c.exitColl()
	if err := c.checkRoot("BcastInto", root); err != nil {
		return err
	}
	t := typeOf[E]()
	if t.shape != shapePlain {
		return c.typeErr("BcastInto", loc{}, errNotPlain(t))
	}
	if c.mixed() {
		return hetBcastInto(c, buf, root) // hetero_coll.go
	}
	cc := c.typedCall(t, len(buf)).atRoot(root)
	return cc.done("BcastInto", c.bcastFixed(cc, unsafeBytes(buf, t.size), root))
}

// AllgatherInto gathers every rank's v (plain elements, the same length
// everywhere) into out on every rank, rank i's at out[i·len(v):]
// (MPI_Allgather with a count). out must have len(v)·Size() elements.
func AllgatherInto[E any](c *Comm, v, out []E) (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("AllgatherInto", c, Undefined, Undefined), &err)
	}
	if err = c.enterColl("AllgatherInto"); err != nil {
		return
	}
	defer c.exitColl()
	if err := c.intraOnly("AllgatherInto"); err != nil {
		return err
	}
	t := typeOf[E]()
	if t.shape != shapePlain {
		return c.typeErr("AllgatherInto", loc{}, errNotPlain(t))
	}
	p := len(c.group)
	if len(out) != p*len(v) {
		return c.fail("AllgatherInto", ErrCount, loc{}, "out has %d elements, want %d", len(out), p*len(v))
	}
	if c.mixed() {
		return hetAllgatherInto(c, v, out) // hetero_collv.go
	}
	copy(out[c.rank*len(v):], v)
	b := unsafeBytes(out, t.size)
	cc := c.typedCall(t, len(v))
	if c.inProcess() {
		n := len(v) * t.size
		if done, err := c.allgatherInProcess(cc, b[c.rank*n:(c.rank+1)*n], b, false); done {
			return cc.done("AllgatherInto", err)
		}
	}
	offs := make([]int, p+1)
	for i := range offs {
		offs[i] = i * len(v) * t.size
	}
	return cc.done("AllgatherInto", coll.AllgathervBuf(cc, "", b, offs, c.collTag()))
}

// AlltoallInto sends block j of send (len(send)/Size() plain elements) to
// rank j and receives rank j's block into block j of recv (MPI_Alltoall
// with a count). send and recv must have the same length, a multiple of
// Size(), on every rank, and must not overlap.
func AlltoallInto[E any](c *Comm, send, recv []E) (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("AlltoallInto", c, Undefined, Undefined), &err)
	}
	if err = c.enterColl("AlltoallInto"); err != nil {
		return
	}
	defer c.exitColl()
	if err := c.intraOnly("AlltoallInto"); err != nil {
		return err
	}
	t := typeOf[E]()
	if t.shape != shapePlain {
		return c.typeErr("AlltoallInto", loc{}, errNotPlain(t))
	}
	p := len(c.group)
	if len(send) != len(recv) || len(send)%p != 0 {
		return c.fail("AlltoallInto", ErrCount, loc{}, "send has %d elements and recv %d, for %d ranks", len(send), len(recv), p)
	}
	if c.mixed() {
		return hetAlltoallInto(c, send, recv) // hetero_collv.go
	}
	blk := len(send) / p * t.size
	cc := c.typedCall(t, len(send))
	return cc.done("AlltoallInto", coll.AlltoallBuf(cc, c.alltoallAlg(blk), unsafeBytes(send, t.size), unsafeBytes(recv, t.size), blk, c.collTag()))
}
