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
