package mpi

import (
	"sync"
	"time"
)

// Generalized active target: Post and Complete are notices that travel
// to the other side's window server (requests reqPost and reqComplete),
// which counts them; Start and Wait wait for the counts. Going through the
// server keeps the notices from blocking on a peer that has not reached
// its matching call yet, and orders Complete after the operations sent
// before it.

// pscwNote is what the server tells the PSCW calls.
type pscwNote struct {
	mu       sync.Mutex
	posts    []int         // per rank: Post notices not yet consumed by Start
	complete []int         // per rank: Complete notices not yet consumed by Wait
	changed  chan struct{} // closed (and replaced) when a count grows
}

func (n *pscwNote) init(size int) {
	n.posts = make([]int, size)
	n.complete = make([]int, size)
	n.changed = make(chan struct{})
}

// note counts a notice from rank r.
func (n *pscwNote) note(post bool, r int) {
	n.mu.Lock()
	if post {
		n.posts[r]++
	} else {
		n.complete[r]++
	}
	close(n.changed)
	n.changed = make(chan struct{})
	n.mu.Unlock()
}

// take consumes one notice from each of ranks if all are there; with
// block, it waits for them (ending if giveUp reports the job or a peer
// gone).
func (w *Window[T]) take(post bool, ranks []int, block bool) (bool, error) {
	n := &w.pscw
	for {
		n.mu.Lock()
		counts := n.complete
		if post {
			counts = n.posts
		}
		all := true
		for _, r := range ranks {
			if counts[r] == 0 {
				all = false
				break
			}
		}
		if all {
			for _, r := range ranks {
				counts[r]--
			}
			n.mu.Unlock()
			return true, nil
		}
		ch := n.changed
		n.mu.Unlock()
		if !block {
			return false, nil
		}
		select {
		case <-ch:
		case <-time.After(100 * time.Millisecond):
			for _, r := range ranks {
				if err := w.giveUp(r)(); err != nil {
					return false, err
				}
			}
		}
	}
}

// Post starts an exposure epoch for the ranks of g (MPI_Win_post): they
// may access this rank's window after their Start until their Complete.
// g holds ranks of the window's group (world ranks, as every Group).
func (w *Window[T]) Post(g *Group) (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Window.Post", nil, Undefined, Undefined), &err)
	}

	ranks, err := w.pscwRanks("Post", g)
	if err != nil {
		return err
	}
	w.mu.Lock()
	if w.exposed != nil {
		w.mu.Unlock()
		return w.errorf("Post", ErrRMASync, noTarget, "an exposure epoch is already open (call Wait first)")
	}
	w.exposed = ranks
	w.mu.Unlock()
	for _, r := range ranks {
		if err := w.send(r, rmaRequest(reqPost, 0, 0, 0, 0, nil), false); err != nil {
			return w.failed("Post", r, err)
		}
	}
	return nil
}

// Start starts an access epoch towards the ranks of g (MPI_Win_start): it
// returns once each of them has called Post.
func (w *Window[T]) Start(g *Group) (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Window.Start", nil, Undefined, Undefined), &err)
	}

	ranks, err := w.pscwRanks("Start", g)
	if err != nil {
		return err
	}
	w.mu.Lock()
	if w.accessing != nil {
		w.mu.Unlock()
		return w.errorf("Start", ErrRMASync, noTarget, "an access epoch is already open (call Complete first)")
	}
	w.mu.Unlock()
	if _, err := w.take(true, ranks, true); err != nil {
		return w.failed("Start", noTarget, err)
	}
	w.mu.Lock()
	w.accessing = ranks
	for _, r := range ranks {
		w.started[r] = true
	}
	w.publish()
	w.mu.Unlock()
	return nil
}

// Complete ends the access epoch Start began (MPI_Win_complete): every
// operation towards those targets is complete at them when their Wait
// returns.
func (w *Window[T]) Complete() (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Window.Complete", nil, Undefined, Undefined), &err)
	}

	if err := w.checkSync("Complete", noTarget); err != nil {
		return err
	}
	w.mu.Lock()
	ranks := w.accessing
	w.mu.Unlock()
	if ranks == nil {
		return w.errorf("Complete", ErrRMASync, noTarget, "Complete without Start")
	}
	for _, r := range ranks {
		w.bg[r].Wait() // request-form operations still at work
	}
	w.mu.Lock()
	if ranks = w.accessing; ranks == nil {
		w.mu.Unlock()
		return w.errorf("Complete", ErrRMASync, noTarget, "Complete without Start")
	}
	w.accessing = nil
	for _, r := range ranks {
		w.started[r] = false
	}
	w.publish()
	w.issued.Store(false) // the epoch's operations are complete (FenceAssert)
	w.mu.Unlock()
	var first error
	for _, r := range ranks {
		// The notice follows this rank's requests to r, which the server
		// serves in order; direct operations are done already.
		// So are the fabric's puts (rma_fabric.go).
		if err := w.fabFlush("Complete", r); err != nil && first == nil {
			first = err
		}
		w.pend[r].Store(0)
		if err := w.send(r, rmaRequest(reqComplete, 0, 0, 0, 0, nil), false); err != nil && first == nil {
			first = w.failed("Complete", r, err)
		}
	}
	return first
}

// Wait ends the exposure epoch Post began (MPI_Win_wait): it returns once
// every rank of the group has called Complete, and their operations are
// then visible in Local.
func (w *Window[T]) Wait() (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Window.Wait", nil, Undefined, Undefined), &err)
	}

	if err := w.checkSync("Wait", noTarget); err != nil {
		return err
	}
	w.mu.Lock()
	ranks := w.exposed
	w.mu.Unlock()
	if ranks == nil {
		return w.errorf("Wait", ErrRMASync, noTarget, "Wait without Post")
	}
	if _, err := w.take(false, ranks, true); err != nil {
		return w.failed("Wait", noTarget, err)
	}
	w.mu.Lock()
	w.exposed = nil
	w.mu.Unlock()
	return nil
}

// Test is Wait that does not block (MPI_Win_test): it reports whether
// every rank of the group has called Complete, and if so ends the epoch.
func (w *Window[T]) Test() (_ bool, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Window.Test", nil, Undefined, Undefined), &err)
	}

	if err := w.checkSync("Test", noTarget); err != nil {
		return false, err
	}
	w.mu.Lock()
	ranks := w.exposed
	w.mu.Unlock()
	if ranks == nil {
		return false, w.errorf("Test", ErrRMASync, noTarget, "Test without Post")
	}
	ok, _ := w.take(false, ranks, false)
	if ok {
		w.mu.Lock()
		w.exposed = nil
		w.mu.Unlock()
	}
	return ok, nil
}

// pscwRanks turns g into ranks of the window's group.
func (w *Window[T]) pscwRanks(op string, g *Group) ([]int, error) {
	if err := w.checkSync(op, noTarget); err != nil {
		return nil, err
	}
	if err := g.check("Window." + op); err != nil {
		return nil, err
	}
	ranks := make([]int, 0, g.Size())
	for _, world := range g.ranks {
		r := -1
		for i, m := range w.c.group {
			if m == world {
				r = i
				break
			}
		}
		if r < 0 {
			return nil, w.errorf(op, ErrGroup, noTarget, "world rank %d is not a member of the window", world)
		}
		ranks = append(ranks, r)
	}
	return ranks, nil
}
