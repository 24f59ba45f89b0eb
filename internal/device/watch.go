package device

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mpigo/mpi/internal/diag"
)

// This file is the hang watcher: when every live rank of a process has
// been blocked inside MPI calls for longer than a threshold, with no
// progress, it asks for one report of what each rank waits for.

// Watcher watches the ranks of one process for a hang.
type Watcher struct {
	ds        []*Device
	threshold time.Duration
	tick      time.Duration
	stop      chan struct{}
	done      chan struct{}
	cfg       Watch
	// quiet: on the last tick every live rank was parked with no
	// progress since the tick before (or none was live), for the other
	// members of cfg.Family.
	quiet atomic.Bool
}

// Family is the set of watchers of jobs in one process that wait for each
// other: a job and the jobs it spawned as goroutine ranks. A job whose
// ranks all wait is not hung while another member's ranks run, because
// its ranks may be waiting for theirs (a parent for the results of its
// children). The zero Family is empty and ready to use.
type Family struct {
	mu sync.Mutex
	ws []*Watcher
}

func (f *Family) join(w *Watcher) {
	f.mu.Lock()
	f.ws = append(f.ws, w)
	f.mu.Unlock()
}

func (f *Family) leave(w *Watcher) {
	f.mu.Lock()
	f.ws = slices.DeleteFunc(f.ws, func(x *Watcher) bool { return x == w })
	f.mu.Unlock()
}

// busyBesides reports whether a member other than w has a rank that runs
// or made progress on its last tick.
func (f *Family) busyBesides(w *Watcher) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, x := range f.ws {
		if x != w && !x.quiet.Load() {
			return true
		}
	}
	return false
}

// Watch says what a Watcher does when the ranks hang.
type Watch struct {
	// Threshold is how long every live rank must be blocked with no
	// progress before OnHang is called; a Watcher needs one above zero.
	Threshold time.Duration
	// Describe describes the ranks for a report (DescribeAll, with the
	// layer above's names).
	Describe func() []diag.Rank
	// OnHang is called with the report when every live rank has been
	// blocked for Threshold; it returns whether to keep watching.
	OnHang func(ranks []diag.Rank, why string) bool
	// OnChange, if set, is called on every tick with whether every live
	// rank is blocked beyond the threshold (launched jobs tell the
	// launcher).
	OnChange func(blocked bool)
	// Family, if set, holds the watchers of the jobs this one may wait
	// for: the ranks are hung only once every other member's ranks have
	// stayed parked, too, for the threshold.
	Family *Family
}

// StartWatch starts watching the ranks ds; nil if cfg.Threshold is not
// positive (hang diagnosis is off).
func StartWatch(ds []*Device, cfg Watch) *Watcher {
	if cfg.Threshold <= 0 {
		return nil
	}
	tick := min(max(cfg.Threshold/8, 2*time.Millisecond), 500*time.Millisecond)
	w := &Watcher{ds: ds, threshold: cfg.Threshold, tick: tick, stop: make(chan struct{}), done: make(chan struct{}), cfg: cfg}
	if cfg.Family != nil {
		cfg.Family.join(w)
	}
	go w.run()
	return w
}

// Close stops the watcher and waits until it has.
func (w *Watcher) Close() {
	close(w.stop)
	<-w.done
	if w.cfg.Family != nil {
		w.cfg.Family.leave(w)
	}
}

func (w *Watcher) run() {
	defer close(w.done)
	type seen struct {
		progress uint64
		since    time.Time
	}
	last := make([]seen, len(w.ds))
	t := time.NewTicker(w.tick)
	defer t.Stop()
	was := false
	for {
		select {
		case <-w.stop:
			return
		case <-t.C:
		}
		now := time.Now()
		all, live, still := true, 0, true
		for i, d := range w.ds {
			b := &d.Blk
			parked, _ := b.Counts()
			if b.Returned.Load() && parked == 0 {
				continue
			}
			live++
			pr := d.Activity()
			if parked == 0 || b.IsBusy() || pr != last[i].progress || last[i].since.IsZero() {
				last[i] = seen{progress: pr, since: now}
				all, still = false, false
				continue
			}
			if now.Sub(last[i].since) < w.threshold {
				all = false
			}
		}
		w.quiet.Store(still)
		if f := w.cfg.Family; f != nil && f.busyBesides(w) {
			// Another job of the family runs: the wait may be for it, so
			// the time blocked counts only from when it, too, is still.
			for i := range last {
				last[i].since = now
			}
			all = false
		}
		hung := all && live > 0
		if w.cfg.OnChange != nil && hung != was {
			w.cfg.OnChange(hung)
		}
		was = hung
		if !hung || w.cfg.OnHang == nil {
			continue
		}
		var ranks []diag.Rank
		if w.cfg.Describe != nil {
			ranks = w.cfg.Describe()
		}
		// Still stuck? A wait that ended meanwhile means it was slow, not hung.
		moved := false
		for i, d := range w.ds {
			if parked, _ := d.Blk.Counts(); (d.Activity() != last[i].progress || d.Blk.IsBusy()) && !(d.Blk.Returned.Load() && parked == 0) {
				moved = true
			}
		}
		if moved {
			for i := range last {
				last[i] = seen{}
			}
			continue
		}
		why := fmt.Sprintf("every rank has been blocked in MPI for %v with no progress (MPIGO_HANG_REPORT=%v)", w.threshold, w.threshold)
		if !w.cfg.OnHang(ranks, why) {
			return
		}
		for i := range last {
			last[i] = seen{}
		}
	}
}

// DescribeAll describes the ranks ds: it wakes their parked goroutines,
// waits (up to a second) until they have described themselves, and
// returns each rank's state as snap makes it from round gen of rank i
// (Waits.Snapshot, plus the queues named by the layer above).
func DescribeAll(ds []*Device, snap func(i int, gen uint64) diag.Rank) []diag.Rank {
	gens := make([]uint64, len(ds))
	for i, d := range ds {
		gens[i] = d.Blk.StartDescribe()
	}
	deadline := time.Now().Add(time.Second)
	for i, d := range ds {
		for !d.Blk.Described(gens[i]) && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
	}
	out := make([]diag.Rank, len(ds))
	for i, d := range ds {
		out[i] = snap(i, gens[i])
		d.Blk.EndDescribe()
	}
	return out
}
