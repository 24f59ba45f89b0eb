package mpi

import "strings"

// Assertions of the one-sided synchronisation calls (MPI_MODE_*): promises
// a program makes about an epoch, which let the implementation skip work.
// They combine with |.
const (
	ModeNoStore   = 1 << iota // MPI_MODE_NOSTORE: this rank did not store into Local since the last synchronisation
	ModeNoPut                 // MPI_MODE_NOPUT: no Put or Accumulate will update Local until the next synchronisation
	ModeNoPrecede             // MPI_MODE_NOPRECEDE: the fence ends no epoch: no operations since the previous one
	ModeNoSucceed             // MPI_MODE_NOSUCCEED: the fence starts no epoch: no operations until the next one
)

const fenceModes = ModeNoStore | ModeNoPut | ModeNoPrecede | ModeNoSucceed

// modeNames spells an assertion for error messages.
func modeNames(a int) string {
	var s []string
	for i, n := range []string{"ModeNoStore", "ModeNoPut", "ModeNoPrecede", "ModeNoSucceed"} {
		if a&(1<<i) != 0 {
			s = append(s, n)
		}
	}
	if len(s) == 0 {
		return "0"
	}
	return strings.Join(s, "|")
}

// FenceAssert is Fence with assertions (MPI_Win_fence with assert):
// ModeNoStore, ModeNoPut, ModeNoPrecede and ModeNoSucceed, or 0 (then it
// is Fence). Every rank must pass the same ModeNoPrecede and
// ModeNoSucceed bits.
//
//   - ModeNoPrecede: no operation to complete, so the fence sends no flush
//     to targets served by messages. An operation this rank issued since
//     the previous fence makes the call fail with ErrRMASync.
//   - ModeNoSucceed: no epoch starts; an operation before the next fence
//     (or a Lock, or Start) fails with ErrRMASync.
//   - ModeNoStore and ModeNoPut: accepted; the windows here have one copy
//     of their memory (the unified model), so there is nothing they save.
//
// Ranks that disagree on ModeNoPrecede or ModeNoSucceed all get ErrArg
// (the fence's barrier compares them).
func (w *Window[T]) FenceAssert(assert int) (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Window.FenceAssert", nil, Undefined, Undefined), &err)
	}

	if w == nil || w.c == nil {
		return (*Comm)(nil).errorf("Window.FenceAssert", ErrArg, loc{}, "nil window")
	}
	if w.freed.Load() {
		return w.errorf("FenceAssert", ErrRMASync, noTarget, "the window has been freed")
	}
	if assert&^fenceModes != 0 {
		return w.errorf("FenceAssert", ErrArg, noTarget, "assertion %#x: a fence takes ModeNoStore, ModeNoPut, ModeNoPrecede and ModeNoSucceed", assert)
	}
	if assert == 0 {
		return w.fenceWith(0)
	}
	if assert&ModeNoPrecede != 0 && w.issued.Load() {
		return w.errorf("FenceAssert", ErrRMASync, noTarget, "ModeNoPrecede, but this rank issued one-sided operations since the previous fence")
	}
	return w.fenceWith(assert)
}

// fenceWith is Fence with assertions assert (checked by the caller).
func (w *Window[T]) fenceWith(assert int) error {
	const op = "Fence"
	if assert&ModeNoPrecede == 0 {
		if err := w.flushAll(op); err != nil {
			return err
		}
	}
	// A barrier that also compares the ranks' assertions: the AND of the
	// bits and the AND of their complements (the complement of the OR).
	sync := int32(assert & (ModeNoPrecede | ModeNoSucceed))
	both, err := AllreduceSlice(w.c, []int32{sync, ^sync}, Band[int32]())
	if err != nil {
		return w.failed(op, noTarget, err)
	}
	if diff := both[0] ^ ^both[1]; diff != 0 {
		return w.errorf("FenceAssert", ErrArg, noTarget, "the ranks disagree on the assertion: some passed %s, others not", modeNames(int(diff)))
	}
	w.issued.Store(false)
	w.mu.Lock()
	w.fence = assert&ModeNoSucceed == 0
	w.publish()
	w.mu.Unlock()
	w.synced()
	return nil
}
