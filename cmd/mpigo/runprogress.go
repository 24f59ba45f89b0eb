package main

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/mpigo/mpi/internal/boot"
)

// startupProgress says, while the job starts, which processes have not
// reached the launcher's store yet (and on which host), so that a host
// where ssh hangs, or a program stuck before mpi.Main, shows: first after
// progressFirst, then at doubling intervals up to progressMax, until every
// process has reported or the job fails.
type startupProgress struct {
	kvs    *boot.Server
	procs  []*rankProc
	nodeOf []string
	say    func(format string, args ...any)
	start  time.Time
	wait   time.Duration // until the next report
	ch     <-chan time.Time
	over   bool
}

const (
	progressFirst = 3 * time.Second
	progressMax   = 30 * time.Second
	// progressSilent: as long as no process at all has reported, say
	// nothing before this (a program that is not an MPI program never
	// reports).
	progressSilent = 10 * time.Second
)

func newStartupProgress(kvs *boot.Server, procs []*rankProc, nodeOf []string, say func(string, ...any)) *startupProgress {
	return &startupProgress{kvs: kvs, procs: procs, nodeOf: nodeOf, say: say, start: time.Now(),
		wait: progressFirst, ch: time.After(progressFirst)}
}

// tick is the channel of the next report (nil once start-up is over).
func (sp *startupProgress) tick() <-chan time.Time {
	if sp.over {
		return nil
	}
	return sp.ch
}

// report says which processes have not reported yet, unless start-up is
// over (or the job is being stopped).
func (sp *startupProgress) report(failed bool) {
	done, arrived := sp.kvs.StartupProgress()
	if done || failed {
		sp.over = true
		return
	}
	sp.wait = min(2*sp.wait, progressMax)
	sp.ch = time.After(sp.wait)
	elapsed := time.Since(sp.start)
	if len(arrived) == 0 && elapsed < progressSilent {
		return
	}
	var missing []string
	for _, p := range sp.procs {
		if p.done || slices.Contains(arrived, p.rank) {
			continue
		}
		if len(missing) == 8 {
			missing = append(missing, "...")
			break
		}
		missing = append(missing, fmt.Sprintf("%s (on %s)", p.ranks(), sp.nodeOf[p.rank]))
	}
	if len(missing) == 0 {
		return
	}
	sp.say("mpigo run: %s after start, %d of %d processes have reported; still waiting for %s\n",
		elapsed.Round(time.Second), len(arrived), len(sp.procs), strings.Join(missing, ", "))
}

// returnedNote says, for a job that is being stopped while ranks still
// run, which of the running ranks had returned from their function (and
// waited for the others in mpi.Main) and which had not: a rank that
// returns while another waits for its message hangs the job, and this
// names it. Empty if there is nothing to tell.
func returnedNote(kvs *boot.Server, procs []*rankProc) string {
	ret, not := returnedSplit(kvs, procs)
	if len(ret) == 0 || len(not) == 0 {
		return ""
	}
	return fmt.Sprintf("mpigo run: rank(s) %s had returned from their function and were waiting for the others to finish; rank(s) %s had not "+
		"(are they waiting for a message or a collective call that a returned rank never made?)\n", strings.Join(ret, ", "), strings.Join(not, ", "))
}

// returnedSplit returns the running ranks that have returned from their
// function and those that have not.
func returnedSplit(kvs *boot.Server, procs []*rankProc) (ret, not []string) {
	for _, p := range procs {
		if p.done {
			continue
		}
		for r := p.rank; r < p.rank+max(p.n, 1); r++ {
			if kvs.Returned(r) {
				ret = append(ret, fmt.Sprint(r))
			} else {
				not = append(not, fmt.Sprint(r))
			}
		}
	}
	return ret, not
}

// returnWatch says once, when some ranks have returned from their
// function and others have not for returnedQuiet, which are which: the job
// may be stuck on a rank that returned too early (it waits in mpi.Main for
// the others, which wait for it).
type returnWatch struct {
	kvs   *boot.Server
	procs []*rankProc
	say   func(format string, args ...any)
	since time.Time // when the split was first seen; zero: not seen
	ch    <-chan time.Time
	over  bool
}

// returnedQuiet is how long the split between returned and running ranks
// lasts before returnWatch says so (a variable for tests).
var returnedQuiet = 10 * time.Second

func newReturnWatch(kvs *boot.Server, procs []*rankProc, say func(string, ...any)) *returnWatch {
	return &returnWatch{kvs: kvs, procs: procs, say: say, ch: time.After(returnedQuiet / 5)}
}

func (w *returnWatch) tick() <-chan time.Time {
	if w.over {
		return nil
	}
	return w.ch
}

func (w *returnWatch) check(failed bool) {
	if failed {
		w.over = true
		return
	}
	w.ch = time.After(returnedQuiet / 5)
	ret, not := returnedSplit(w.kvs, w.procs)
	switch {
	case len(ret) == 0 || len(not) == 0:
		w.since = time.Time{}
	case w.since.IsZero():
		w.since = time.Now()
	case time.Since(w.since) >= returnedQuiet:
		w.over = true
		w.say("mpigo run: rank(s) %s returned from their function %v ago and wait in mpi.Main for the others; rank(s) %s have not returned "+
			"(if they wait for a message or a collective call of a returned rank, the job is stuck: stop it with Ctrl-C, or use --timeout)\n",
			strings.Join(ret, ", "), time.Since(w.since).Round(time.Second), strings.Join(not, ", "))
	}
}
