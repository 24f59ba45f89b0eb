// Package session_test holds the conformance tests of Sessions (MPI-4.1
// chapter 11), modelled on the session/ directory of MPICH's test suite:
// sessions started and finalized again and again, process sets and their
// info, communicators from groups with string tags, two libraries each
// with a session beside a program that uses world, and bad input.
package session_test

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mpigo/mpi"
	"github.com/mpigo/mpi/internal/conformance"
)

// commFromPset makes a communicator of a process set of s with tag.
func commFromPset(s *mpi.Session, pset, tag string) (*mpi.Comm, error) {
	g, err := s.GroupFromPset(pset)
	if err != nil {
		return nil, err
	}
	defer g.Free()
	return mpi.CommCreateFromGroup(g, tag, nil, nil)
}

// A session is started and finalized ten times; each time it makes a
// communicator of mpi://WORLD that sums the ranks (MPICH session_re_init,
// session_mult_init).
func TestInitFinalizeAgain(t *testing.T) {
	conformance.Run(t, 3, func(w *mpi.Comm) error {
		for i := range 10 {
			s, err := w.SessionInit(nil, nil)
			if err != nil {
				return err
			}
			c, err := commFromPset(s, mpi.PsetWorld, "again")
			if err != nil {
				return fmt.Errorf("round %d: %w", i, err)
			}
			if c.Rank() != w.Rank() || c.Size() != w.Size() {
				return fmt.Errorf("round %d: rank %d of %d in the session's world", i, c.Rank(), c.Size())
			}
			sum, err := mpi.Allreduce(c, c.Rank()+i, mpi.Sum[int]())
			if err != nil {
				return err
			}
			if want := 3 + 3*i; sum != want {
				return fmt.Errorf("round %d: sum %d, want %d", i, sum, want)
			}
			if err := c.Free(); err != nil {
				return err
			}
			if err := s.Finalize(); err != nil {
				return err
			}
		}
		return nil
	})
}

// The process sets: mpi://WORLD and mpi://SELF first, their info
// ("mpi_size"), their groups, and mpigo's node and MPMD sets (MPICH
// session_psets).
func TestPsets(t *testing.T) {
	cfg := mpi.DefaultConfig()
	cfg.RanksPerNode = 2
	err := mpi.RunConfig(4, cfg, func(w *mpi.Comm) error {
		s, err := w.SessionInit(nil, nil)
		if err != nil {
			return err
		}
		defer s.Finalize()
		names := s.Psets()
		if s.NumPsets() != len(names) || len(names) < 5 {
			return fmt.Errorf("NumPsets %d, Psets %q", s.NumPsets(), names)
		}
		want := map[string]int{mpi.PsetWorld: 4, mpi.PsetSelf: 1, mpi.PsetNode: 2, mpi.PsetApp: 4, mpi.PsetApp + "/0": 4}
		for i := range s.NumPsets() {
			name, err := s.PsetName(i)
			if err != nil {
				return err
			}
			if name != names[i] {
				return fmt.Errorf("PsetName(%d) %q, Psets %q", i, name, names[i])
			}
			in, err := s.PsetInfo(name)
			if err != nil {
				return err
			}
			size, _ := in.Get("mpi_size")
			g, err := s.GroupFromPset(name)
			if err != nil {
				return err
			}
			if size != strconv.Itoa(g.Size()) || size != strconv.Itoa(want[name]) {
				return fmt.Errorf("%s: mpi_size %s, group of %d, want %d", name, size, g.Size(), want[name])
			}
			if g.Rank() == mpi.Undefined {
				return fmt.Errorf("%s: the caller is not in its own set", name)
			}
		}
		if n, _ := s.PsetName(0); n != mpi.PsetWorld {
			return fmt.Errorf("set 0 is %q", n)
		}
		if n, _ := s.PsetName(1); n != mpi.PsetSelf {
			return fmt.Errorf("set 1 is %q", n)
		}
		// The names of the standard's sets are case-insensitive.
		if _, err := s.PsetInfo("MPI://world"); err != nil {
			return err
		}
		// Node sets: ranks 0,1 and 2,3; a communicator of each sums it.
		c, err := commFromPset(s, mpi.PsetNode, "node")
		if err != nil {
			return err
		}
		sum, err := mpi.Allreduce(c, w.Rank(), mpi.Sum[int]())
		if err != nil {
			return err
		}
		if want := map[int]int{0: 1, 1: 1, 2: 5, 3: 5}[w.Rank()]; sum != want {
			return fmt.Errorf("node sum %d, want %d", sum, want)
		}
		c.Free()
		self, err := commFromPset(s, mpi.PsetSelf, "self")
		if err != nil {
			return err
		}
		if self.Size() != 1 || self.Rank() != 0 {
			return fmt.Errorf("self: rank %d of %d", self.Rank(), self.Size())
		}
		return self.Free()
	})
	if err != nil {
		t.Fatal(err)
	}
}

// Communicators from subgroups with different string tags, made at once
// by goroutines of every rank in a different order on each rank, do not
// mix (MPICH session_comm_from_group with threads).
func TestCommFromGroupConcurrent(t *testing.T) {
	conformance.Run(t, 4, func(w *mpi.Comm) error {
		s, err := w.SessionInit(nil, nil)
		if err != nil {
			return err
		}
		defer s.Finalize()
		world, err := s.GroupFromPset(mpi.PsetWorld)
		if err != nil {
			return err
		}
		// Subsets {0,1,2,3}, {0,1}, {2,3}, {1,2,3}, {0,3}: each rank
		// creates the ones it is in, concurrently.
		sets := [][]int{{0, 1, 2, 3}, {0, 1}, {2, 3}, {1, 2, 3}, {0, 3}}
		var wg sync.WaitGroup
		errs := make([]error, len(sets))
		for i, set := range sets {
			mine := false
			for _, r := range set {
				mine = mine || r == w.Rank()
			}
			if !mine {
				continue
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				g, err := world.Incl(set)
				if err != nil {
					errs[i] = err
					return
				}
				c, err := mpi.CommCreateFromGroup(g, fmt.Sprintf("lib/set%d", i), nil, nil)
				if err != nil {
					errs[i] = err
					return
				}
				defer c.Free()
				sum, err := mpi.Allreduce(c, w.Rank(), mpi.Sum[int]())
				want := 0
				for _, r := range set {
					want += r
				}
				if err == nil && sum != want {
					err = fmt.Errorf("set %d: sum %d, want %d", i, sum, want)
				}
				errs[i] = err
			}()
		}
		wg.Wait()
		return errors.Join(errs...)
	})
}

// Two libraries, each with its own session and communicator, and the
// program on world, all send with the same tags at once; receives with
// AnySource and AnyTag on each communicator see only their own messages.
func TestLibrariesApart(t *testing.T) {
	conformance.Run(t, 2, func(w *mpi.Comm) error {
		lib := func(name string) (*mpi.Session, *mpi.Comm, error) {
			s, err := w.SessionInit(nil, nil)
			if err != nil {
				return nil, nil, err
			}
			c, err := commFromPset(s, mpi.PsetWorld, name)
			return s, c, err
		}
		s1, c1, err := lib("libA")
		if err != nil {
			return err
		}
		s2, c2, err := lib("libB")
		if err != nil {
			return err
		}
		comms := []*mpi.Comm{w, c1, c2}
		peer := 1 - w.Rank()
		var reqs []mpi.Waiter
		for i, c := range comms {
			r, err := mpi.Isend(c, 100*(i+1)+w.Rank(), peer, 7)
			if err != nil {
				return err
			}
			reqs = append(reqs, r)
		}
		// Receive in the opposite order, with wildcards.
		for i := len(comms) - 1; i >= 0; i-- {
			v, _, err := mpi.Recv[int](comms[i], mpi.AnySource, mpi.AnyTag)
			if err != nil {
				return err
			}
			if want := 100*(i+1) + peer; v != want {
				return fmt.Errorf("communicator %d got %d, want %d: traffic crossed", i, v, want)
			}
		}
		if err := mpi.WaitAll(reqs...); err != nil {
			return err
		}
		c1.Free()
		c2.Free()
		if err := s1.Finalize(); err != nil {
			return err
		}
		return s2.Finalize()
	})
}

// An intercommunicator from two groups of a session's world: the even
// ranks and the odd ones exchange values across it (MPICH
// session_intercomm).
func TestIntercommFromGroups(t *testing.T) {
	conformance.Run(t, 4, func(w *mpi.Comm) error {
		s, err := w.SessionInit(nil, nil)
		if err != nil {
			return err
		}
		defer s.Finalize()
		world, err := s.GroupFromPset(mpi.PsetWorld)
		if err != nil {
			return err
		}
		even, _ := world.Incl([]int{0, 2})
		odd, _ := world.Incl([]int{1, 3})
		local, remote := even, odd
		if w.Rank()%2 == 1 {
			local, remote = odd, even
		}
		ic, err := mpi.IntercommCreateFromGroups(local, 0, remote, 0, "pairs", nil, nil)
		if err != nil {
			return err
		}
		defer ic.Free()
		if !ic.IsInter() || ic.Size() != 2 || ic.RemoteSize() != 2 || ic.Rank() != w.Rank()/2 {
			return fmt.Errorf("intercomm: inter %v size %d remote %d rank %d", ic.IsInter(), ic.Size(), ic.RemoteSize(), ic.Rank())
		}
		r := ic.Rank()
		req, err := mpi.Isend(ic, w.Rank(), r, 3)
		if err != nil {
			return err
		}
		v, _, err := mpi.Recv[int](ic, r, 3)
		if err != nil {
			return err
		}
		if _, err := req.Wait(); err != nil {
			return err
		}
		if want := w.Rank() ^ 1; v != want {
			return fmt.Errorf("got %d across, want %d", v, want)
		}
		return mpi.Barrier(ic)
	})
}

// Bad input: an unknown process set, a finalized session, a handler of
// the wrong kind, an index out of range, a group of no rank; the
// session's error handler sees the errors of calls on it.
func TestBadInput(t *testing.T) {
	conformance.Run(t, 2, func(w *mpi.Comm) error {
		var seen []error
		h := mpi.NewSessionErrHandler(func(s *mpi.Session, err error) { seen = append(seen, err) })
		s, err := w.SessionInit(nil, h)
		if err != nil {
			return err
		}
		var errs conformance.Errs
		_, err = s.GroupFromPset("mpi://nowhere")
		errs.Addf(w, conformance.IsClass(err, mpi.ErrArg) && strings.Contains(err.Error(), "nowhere"), "unknown pset: %v", err)
		_, err = s.PsetInfo("mpigo://app/9")
		errs.Addf(w, conformance.IsClass(err, mpi.ErrArg), "unknown app: %v", err)
		_, err = s.PsetName(s.NumPsets())
		errs.Addf(w, conformance.IsClass(err, mpi.ErrArg), "PsetName out of range: %v", err)
		errs.Addf(w, len(seen) == 3, "the session's handler saw %d errors, want 3", len(seen))
		err = s.SetErrHandler(mpi.NewErrHandler(func(*mpi.Comm, error) {}))
		errs.Addf(w, conformance.IsClass(err, mpi.ErrArg), "a communicator's handler on a session: %v", err)
		_, err = w.SessionInit(nil, mpi.NewErrHandler(func(*mpi.Comm, error) {}))
		errs.Addf(w, conformance.IsClass(err, mpi.ErrArg), "SessionInit with a communicator's handler: %v", err)
		g, _ := s.GroupFromPset(mpi.PsetWorld)
		_, err = mpi.CommCreateFromGroup(g, "x", nil, h)
		errs.Addf(w, conformance.IsClass(err, mpi.ErrArg), "a session's handler on a communicator: %v", err)
		other, _ := g.Incl([]int{1 - w.Rank()})
		_, err = mpi.CommCreateFromGroup(other, "x", nil, nil)
		errs.Addf(w, conformance.IsClass(err, mpi.ErrGroup), "a group without the caller: %v", err)
		empty, err := mpi.CommCreateFromGroup(mpi.GroupEmpty, "x", nil, nil)
		errs.Addf(w, err == nil && empty == nil, "MPI_GROUP_EMPTY: %v, %v; want a nil communicator and no error", empty, err)
		_, err = mpi.CommCreateFromGroup(mpi.GroupEmpty, "x", nil, h)
		errs.Addf(w, conformance.IsClass(err, mpi.ErrArg), "MPI_GROUP_EMPTY with a session's handler: %v", err)
		_, err = mpi.IntercommCreateFromGroups(g, 0, g, 0, "x", nil, nil)
		errs.Addf(w, conformance.IsClass(err, mpi.ErrGroup), "overlapping groups: %v", err)
		errs.Add(s.Finalize())
		err = s.Finalize()
		errs.Addf(w, conformance.IsClass(err, mpi.ErrSession), "second Finalize: %v", err)
		_, err = s.GroupFromPset(mpi.PsetWorld)
		errs.Addf(w, conformance.IsClass(err, mpi.ErrSession), "GroupFromPset after Finalize: %v", err)
		errs.Addf(w, s.NumPsets() == 0 && s.Info() == nil, "a finalized session still answers")
		var nilS *mpi.Session
		_, err = nilS.PsetInfo(mpi.PsetWorld)
		errs.Addf(w, conformance.IsClass(err, mpi.ErrSession), "nil session: %v", err)
		return errs.Err()
	})
}

// A rank that a Group.Excl left out of the library's group passes
// GroupEmpty (or an empty group of its own) and gets a nil communicator at
// once, while the others make theirs from the smaller group; then all
// make one of the whole set (MPICH session_mod_group).
func TestEmptyGroupLeftOut(t *testing.T) {
	conformance.Run(t, 4, func(w *mpi.Comm) error {
		s, err := w.SessionInit(nil, nil)
		if err != nil {
			return err
		}
		defer s.Finalize()
		wg, err := s.GroupFromPset(mpi.PsetWorld)
		if err != nil {
			return err
		}
		defer wg.Free()
		const out = 2
		small, err := wg.Excl([]int{out})
		if err != nil {
			return err
		}
		defer small.Free()
		g := small
		if w.Rank() == out {
			g = mpi.GroupEmpty
		}
		c, err := mpi.CommCreateFromGroup(g, "smaller", nil, nil)
		if err != nil {
			return fmt.Errorf("rank %d: %w", w.Rank(), err)
		}
		if w.Rank() == out {
			if c != nil {
				return fmt.Errorf("rank %d: MPI_GROUP_EMPTY gave a communicator of %d ranks", w.Rank(), c.Size())
			}
			// A group that operations on groups left empty is empty too.
			none, err := wg.Incl(nil)
			if err != nil {
				return err
			}
			if c, err := mpi.CommCreateFromGroup(none, "none", nil, nil); c != nil || err != nil {
				return fmt.Errorf("an empty group of the session: %v, %v", c, err)
			}
		} else {
			if c == nil || c.Size() != 3 {
				return fmt.Errorf("rank %d: the smaller group's communicator is %v", w.Rank(), c)
			}
			sum, err := mpi.Allreduce(c, c.Rank(), mpi.Sum[int]())
			if err != nil {
				return err
			}
			if sum != 3 {
				return fmt.Errorf("rank %d: sum %d over the smaller group, want 3", w.Rank(), sum)
			}
			if err := c.Free(); err != nil {
				return err
			}
		}
		all, err := mpi.CommCreateFromGroup(wg, "whole", nil, nil)
		if err != nil {
			return err
		}
		defer all.Free()
		sum, err := mpi.Allreduce(all, all.Rank(), mpi.Sum[int]())
		if err == nil && sum != 6 {
			err = fmt.Errorf("sum %d over the whole set, want 6", sum)
		}
		return err
	})
}

// Members that pass the same tag but different groups (the same ranks in
// another order) fail with ErrArg on every member instead of making two
// communicators that disagree.
func TestMismatchedGroups(t *testing.T) {
	conformance.Run(t, 2, func(w *mpi.Comm) error {
		s, err := w.SessionInit(nil, nil)
		if err != nil {
			return err
		}
		defer s.Finalize()
		g, _ := s.GroupFromPset(mpi.PsetWorld)
		if w.Rank() == 1 {
			g, _ = g.Incl([]int{1, 0})
		}
		_, err = mpi.CommCreateFromGroup(g, "same", nil, nil)
		if !conformance.IsClass(err, mpi.ErrArg) {
			return fmt.Errorf("rank %d: mismatched groups gave %v, want ErrArg", w.Rank(), err)
		}
		// The session still works.
		c, err := commFromPset(s, mpi.PsetWorld, "after")
		if err != nil {
			return err
		}
		return c.Free()
	})
}

// Members that pass different string tags never meet: the hang report
// ends the job with an error naming the call, instead of a hang.
func TestMismatchedTagsBounded(t *testing.T) {
	cfg := mpi.DefaultConfig()
	cfg.HangReport = 500 * time.Millisecond
	t0 := time.Now()
	err := mpi.RunConfig(2, cfg, func(w *mpi.Comm) error {
		s, err := w.SessionInit(nil, nil)
		if err != nil {
			return err
		}
		defer s.Finalize()
		g, _ := s.GroupFromPset(mpi.PsetWorld)
		_, err = mpi.CommCreateFromGroup(g, "tag-of-rank-"+strconv.Itoa(w.Rank()), nil, nil)
		return err
	})
	if err == nil || !strings.Contains(err.Error(), "CommCreateFromGroup") {
		t.Fatalf("mismatched tags: Run returned %v, want a hang report naming CommCreateFromGroup", err)
	}
	if d := time.Since(t0); d > 8*time.Second {
		t.Errorf("the mismatch took %v to report", d)
	}
	t.Logf("after %v: %v", time.Since(t0), err)
}

// World and sessions side by side in one process: SessionInit before
// Init, Init's world and the session's communicator both work, and
// finalizing both ends the rank (run in a child process, as a program
// that is one rank).
func TestProcessModel(t *testing.T) {
	if os.Getenv("SESSION_CHILD") == "1" {
		if err := processModel(); err != nil {
			fmt.Println("FAIL:", err)
			os.Exit(1)
		}
		fmt.Println("CHILD OK")
		os.Exit(0)
	}
	if testing.Short() {
		// -short is how .ci/platforms.sh runs the tests under qemu-user,
		// where the test binary cannot start itself again.
		t.Skip("starts the test binary again as a process, which -short skips (it may run under emulation)")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestProcessModel$")
	cmd.Env = append(os.Environ(), "SESSION_CHILD=1")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "CHILD OK") {
		t.Fatalf("child: %v\n%s", err, out)
	}
}

// A program of the Sessions model alone: sessions started and finalized
// again on one rank, then FinalizeSessions ends it (refused while a
// session is live), and MPI cannot start again (run in a child process,
// as a program that is one rank).
func TestSessionsOnlyEnd(t *testing.T) {
	if os.Getenv("SESSION_CHILD") == "only" {
		if err := sessionsOnly(); err != nil {
			fmt.Println("FAIL:", err)
			os.Exit(1)
		}
		fmt.Println("CHILD OK")
		os.Exit(0)
	}
	if testing.Short() {
		t.Skip("starts the test binary again as a process, which -short skips (it may run under emulation)")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestSessionsOnlyEnd$")
	cmd.Env = append(os.Environ(), "SESSION_CHILD=only")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "CHILD OK") {
		t.Fatalf("child: %v\n%s", err, out)
	}
}

func sessionsOnly() error {
	// Nothing started yet: nothing to end.
	if err := mpi.FinalizeSessions(); err != nil {
		return fmt.Errorf("FinalizeSessions before any session: %v", err)
	}
	for i := range 3 {
		s, err := mpi.SessionInit(nil, nil)
		if err != nil {
			return fmt.Errorf("round %d: %w", i, err)
		}
		c, err := commFromPset(s, mpi.PsetWorld, "only")
		if err != nil {
			return err
		}
		if _, err := mpi.Allreduce(c, 1, mpi.Sum[int]()); err != nil {
			return err
		}
		if err := c.Free(); err != nil {
			return err
		}
		if i == 2 {
			// A live session: the rank is still in use.
			if err := mpi.FinalizeSessions(); !errors.Is(err, mpi.ErrOther) || !strings.Contains(err.Error(), "not finalized") {
				return fmt.Errorf("FinalizeSessions with a live session: %v", err)
			}
		}
		if err := s.Finalize(); err != nil {
			return err
		}
	}
	if err := mpi.FinalizeSessions(); err != nil {
		return err
	}
	// Ended: a second call does nothing, and MPI cannot start again.
	if err := mpi.FinalizeSessions(); err != nil {
		return fmt.Errorf("second FinalizeSessions: %v", err)
	}
	if _, err := mpi.SessionInit(nil, nil); !errors.Is(err, mpi.ErrOther) {
		return fmt.Errorf("SessionInit after FinalizeSessions: %v", err)
	}
	if _, err := mpi.Init(); !errors.Is(err, mpi.ErrOther) {
		return fmt.Errorf("Init after FinalizeSessions: %v", err)
	}
	return nil
}

func processModel() error {
	s1, err := mpi.SessionInit(nil, nil)
	if err != nil {
		return err
	}
	c, err := commFromPset(s1, mpi.PsetWorld, "model")
	if err != nil {
		return err
	}
	if err := s1.Finalize(); err != nil {
		return err
	}
	// The rank stays for the next session and for Init.
	s2, err := mpi.SessionInit(nil, nil)
	if err != nil {
		return err
	}
	w, err := mpi.Init()
	if err != nil {
		return err
	}
	if w.Size() != 1 || c.Size() != 1 {
		return fmt.Errorf("singleton: world %d, session comm %d", w.Size(), c.Size())
	}
	if _, err := mpi.Allreduce(c, 1, mpi.Sum[int]()); err != nil {
		return err
	}
	c.Free()
	if err := mpi.FinalizeSessions(); !errors.Is(err, mpi.ErrOther) {
		return fmt.Errorf("FinalizeSessions while Init's world is live: %v", err)
	}
	if err := mpi.Finalize(); err != nil {
		return err
	}
	// The session outlives Finalize; its own Finalize ends the rank.
	if _, err := s2.GroupFromPset(mpi.PsetSelf); err != nil {
		return err
	}
	if err := s2.Finalize(); err != nil {
		return err
	}
	if _, err := mpi.SessionInit(nil, nil); !errors.Is(err, mpi.ErrOther) {
		return fmt.Errorf("SessionInit after the end: %v", err)
	}
	return nil
}
