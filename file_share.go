package mpi

import (
	"sort"
	"sync"

	"github.com/mpigo/mpi/internal/fileio"
)

// Collective writes of goroutine ranks without the exchange. When a
// file's ranks are goroutines of this process that meet in memory
// (Comm.inProcess), an aggregator needs no copy of another rank's
// pieces: it writes them straight from that rank's stream, with its own,
// one pwritev per run of the window. Each rank publishes its file ranges
// and its stream in its slot of the file's fileShare before the call's
// first step (the Allgather of the ranks' ranges), so that when the
// first step ends every slot is there to read; and no rank leaves the
// call, or lets its stream go, before the last step (the agreement on
// the outcome), which the aggregators reach when they have written.
// Nothing is copied or sent between the two steps.

// fileShares hands the ranks of a file's communicator their fileShare
// while OpenFile runs (job.files).
type fileShares struct {
	mu   sync.Mutex
	next int64
	m    map[int64]*fileShare
}

// fileShare is what the goroutine ranks of one file see of each other's
// collective write.
type fileShare struct {
	slots []fileSlot
}

// fileSlot is one rank's access in the collective write under way: its
// file ranges, in stream order, and its stream. Written by the rank
// before the call's first step, read by the aggregators between the
// first and the last.
type fileSlot struct {
	segs   []fileio.Seg
	stream []byte
	_      [16]byte // a cache line each
}

// shareFile gives every rank of fc, goroutine ranks that meet in memory,
// one fileShare: rank 0 makes it and names it to the others. The name is
// forgotten by endShare, once every rank has it.
func shareFile(fc *Comm) (*fileShare, int64, error) {
	j := fc.p.job
	var id int64
	if fc.Rank() == 0 {
		sh := &fileShare{slots: make([]fileSlot, fc.Size())}
		j.files.mu.Lock()
		if j.files.m == nil {
			j.files.m = map[int64]*fileShare{}
		}
		j.files.next++
		id = j.files.next
		j.files.m[id] = sh
		j.files.mu.Unlock()
	}
	id, err := Bcast(fc, id, 0)
	if err != nil {
		return nil, id, err
	}
	j.files.mu.Lock()
	sh := j.files.m[id]
	j.files.mu.Unlock()
	return sh, id, nil
}

// endShare forgets the name of a fileShare (rank 0, once all have it).
func endShare(fc *Comm, id int64) {
	if fc.Rank() != 0 || id == 0 {
		return
	}
	j := fc.p.job
	j.files.mu.Lock()
	delete(j.files.m, id)
	j.files.mu.Unlock()
}

// sharedWrite is the aggregators' part of a collective write of
// goroutine ranks (above): each aggregator of this rank writes the
// pieces of every rank in its domain, window by window, from their
// streams. all is the first step's rows; every rank's slot is
// published. It returns the first I/O error.
func (f *File) sharedWrite(all []collArgs, aggrs []int) error {
	if twoPhaseHook != nil {
		twoPhaseHook()
	}
	bounds, cb, ok := tpDomains(all, aggrs)
	if !ok {
		return nil
	}
	me := f.comm.Rank()
	slots := f.share.slots
	var ins []tpIn
	for d := range aggrs {
		if aggrs[d] != me {
			continue
		}
		lo, hi := bounds[d], bounds[d+1]
		ins = ins[:0]
		for r := range all {
			if !tpTouches(all[r], lo, hi) {
				continue
			}
			fileio.SplitRounds(slots[r].segs, bounds, cb, func(dd, w int, p fileio.Piece) {
				if dd == d {
					ins = append(ins, tpIn{p.Seg, w, r, p.Stream})
				}
			})
		}
		// Windows in file order, each window's pieces by offset; pieces
		// at the same offset (ranks writing the same bytes) stay in rank
		// order, the last rank's written last.
		sort.SliceStable(ins, func(i, j int) bool {
			return ins[i].w < ins[j].w || ins[i].w == ins[j].w && ins[i].Off < ins[j].Off
		})
		bytesOf := func(p tpIn) []byte { return slots[p.src].stream[p.at : p.at+p.Len] }
		for i := 0; i < len(ins); {
			j := i + 1
			for j < len(ins) && ins[j].w == ins[i].w {
				j++
			}
			if err := f.ioWindow(true, ins[i:j], bytesOf); err != nil {
				return err
			}
			i = j
		}
	}
	return nil
}
