package mpi

import (
	"cmp"
	"errors"
	"io"
	"slices"
	"sort"

	"github.com/mpigo/mpi/internal/datatype"
	"github.com/mpigo/mpi/internal/fileio"
)

// Collective data access (MPI-4.1 section 14.4.3) with collective
// buffering: when the ranks' accesses are non-contiguous or interleave
// in pieces under largePiece (and, for a read, span several nodes),
// the file range they cover is cut into one contiguous domain per
// aggregator (one rank per node by default, or cb_nodes), and each
// domain into windows of cb_buffer_size bytes, the rounds; every rank
// sends each aggregator the offsets and lengths of its pieces in that
// domain, then their bytes window by window, straight from its buffer;
// each aggregator writes a window with one pwritev per run of pieces
// while the next window's bytes arrive: two-phase I/O (twoPhase). A
// read runs the other way. Contiguous, disjoint accesses (a segmented
// pattern) are written directly by each rank, which is faster than any
// exchange. A collective read by ranks of one node goes independent
// too: each rank reading its own pieces (data sieving, or a read per
// piece when they are long) was 1.0 to 3.1 times faster than two-phase
// I/O there at every piece size measured. A write on one node goes
// independent, without sieving, by directWrite and directShared;
// goroutine ranks that aggregate do so without copies (file_share.go).
// romio_cb_write / romio_cb_read = enable or disable force the choice.
//
// Outcomes. A collective write, and a collective read that exchanges
// data (two-phase), end with an agreement by which every rank learns
// whether the call failed anywhere: a rank's data there went through
// others. A collective read in which every rank reads only its own
// bytes (one node, romio_cb_read = disable, atomic mode) ends without
// one: each rank's result and error are its own, as the standard allows
// and as OMPIO does, and no rank waits for another (the agreement cost
// the segmented 64 KiB read a third of its speed, docs/io.md).

// collective runs an access of x at stream position pos on every rank
// of f together; local is this rank's argument error (x is nil then).
// It runs on f's queue.
func (f *File) collective(op string, write bool, x *xfer, pos int64, local error) (Status, error) {
	var segs []fileio.Seg
	if local == nil && pos < 0 {
		local = fileErr(f.comm, "File."+op, f.name, ErrArg, nil, "negative offset %d", pos/x.view.fesize)
	}
	f.mu.Lock()
	h, atomicMode, aggrs := f.hints, f.atomic, f.aggrs
	f.mu.Unlock()
	if !write && (h.cbRead == "disable" || (h.cbRead == "automatic" && f.nodes == 1) || atomicMode) {
		// A read that goes independent whatever the others' accesses
		// are: each rank reads its own part and reports its own
		// outcome, with no meeting at all (see "Outcomes" above).
		if local != nil {
			if x != nil {
				x.finish(0)
			}
			return Status{}, local
		}
		return f.independent(x, pos)
	}
	if local == nil {
		// Into the file's own slice, kept from one call to the next: the
		// others read a goroutine rank's ranges (file_share.go) only
		// until the agreement that ends the call.
		segs = x.view.plan.Map(pos, x.n, f.collSegs[:0])
		f.collSegs = segs[:0]
	}
	if write && local == nil && f.share != nil {
		// Published before the first step (file_share.go).
		f.share.slots[f.comm.Rank()] = fileSlot{segs: segs, stream: x.stream}
	}
	lo, hi := fileio.Span(segs)
	var bytes int64
	for _, s := range segs {
		bytes += s.Len
	}
	// Into the file's own buffers: the step allocates nothing.
	if len(f.collAll) != f.comm.Size() {
		f.collAll = make([]collArgs, f.comm.Size())
	}
	f.collMine[0] = collArgs{classIndex(local), lo, hi, int64(len(segs)), bytes, h.cbBufferSize, h.stripeUnit}
	all := f.collAll
	err := AllgatherInto(f.comm, f.collMine[:], all)
	if err != nil {
		if x != nil {
			x.finish(0)
		}
		return Status{}, fileErr(f.comm, "File."+op, f.name, ErrorClass(err), err, "")
	}
	if local != nil {
		if x != nil {
			x.finish(0)
		}
		return Status{}, local
	}
	for r, a := range all {
		if a[0] != 0 {
			x.finish(0)
			return Status{}, fileErr(f.comm, "File."+op, f.name, classAt(a[0]), nil, "rank %d's arguments were refused; nothing was accessed", r)
		}
	}
	mode := h.cbRead
	if write {
		mode = h.cbWrite
	}
	direct := directWrite(all)
	if f.share != nil {
		direct = directShared(all)
	}
	if mode == "disable" || (mode == "automatic" && ((f.nodes == 1 && (!write || direct)) || !interleaved(all) || largePieces(all))) || atomicMode {
		var st Status
		var err error
		if write && mode == "automatic" && h.dsWrite == "automatic" {
			// Each rank writes its own pieces, a call each: sieving
			// would read and rewrite the holes, the other ranks'
			// pieces, under a lock the ranks, which start together,
			// queue on.
			st, err = f.independentDirect(x, pos)
		} else {
			st, err = f.independent(x, pos)
		}
		return st, f.agree(op, err)
	}
	if write && f.share != nil {
		f.busyBegin()
		err := f.sharedWrite(all, aggrs)
		f.busyEnd()
		if err != nil {
			err = fileErr(f.comm, "File."+op, f.name, osClass(err), err, "")
		}
		err = f.agree(op, err)
		// Only now: until every rank has come to the agreement, an
		// aggregator may be writing from this rank's stream.
		x.finish(x.n)
		return x.status(x.n), err
	}
	moved, err := f.twoPhase(write, x, segs, all, aggrs)
	f.busyBegin()
	ferr := x.finish(moved)
	f.busyEnd()
	if ferr != nil && err == nil {
		err = fileErr(f.comm, "File."+op, f.name, ErrConversion, ferr, "")
	}
	var me *Error
	if err != nil && !errors.As(err, &me) {
		err = fileErr(f.comm, "File."+op, f.name, osClass(err), err, "")
	}
	return x.status(moved), f.agree(op, err)
}

// collArgs is what every rank tells the others at the start of a
// collective access: its argument error's class index, the first byte
// and the end of its access, its number of file ranges and of bytes,
// and its cb_buffer_size and striping_unit hints (rank 0's are used).
type collArgs = [7]int64

// largePiece is the mean piece size from which a collective access goes
// independent although the ranks' pieces interleave: each piece is then
// one large write or read of its own, which aggregation can only slow
// down with its copies and exchange (docs/io.md, "Collective buffering,
// and when it is skipped").
const largePiece = 1 << 20

// largePieces reports whether every rank that accesses anything does so
// in pieces of largePiece bytes or more on average.
func largePieces(all []collArgs) bool {
	any := false
	for _, a := range all {
		if a[3] == 0 {
			continue
		}
		if a[4]/a[3] < largePiece {
			return false
		}
		any = true
	}
	return any
}

// Where the ranks of a collective write share one node (one page cache),
// they write their own pieces, a call each, instead of aggregating, when
// the pieces are long (directPiece bytes or more on average: a piece's
// call then costs about what its copy to an aggregator would) or few
// (at most directPieces in all, of at least directSmall bytes on
// average: the calls cost less than the exchange, which keeps one rank
// waiting while the aggregator writes). Aggregation stays for many small
// pieces, where one pwritev per run replaces thousands of calls.
// Measured on the page cache of a 2-core machine, 2 and 4 goroutine
// ranks (docs/io.md, "Collective buffering, and when it is skipped").
const (
	directPiece  = 16 << 10
	directPieces = 64
	directSmall  = 4 << 10
)

// directWrite reports whether a collective write of the accesses all, on
// one node, goes independent by the rule above (ranks that do not meet
// in memory: their exchange copies).
func directWrite(all []collArgs) bool {
	var pieces, bytes int64
	for _, a := range all {
		pieces += a[3]
		bytes += a[4]
	}
	if pieces == 0 {
		return false
	}
	mean := bytes / pieces
	return mean >= directPiece || pieces <= directPieces && mean >= directSmall
}

// sharedMax is the bytes of a collective write of goroutine ranks on one
// node (file_share.go) from which long pieces (directPiece) are written
// by each rank itself: under it, one aggregator writing every rank's
// pieces from their streams, with no copy, was faster at every piece size
// measured; from 8 MiB of pieces of 16 KiB or more, two ranks writing
// their own were 1.2 to 1.6 times faster (docs/io.md).
const sharedMax = 4 << 20

// directShared is directWrite for ranks that share their streams.
func directShared(all []collArgs) bool {
	var pieces, bytes int64
	for _, a := range all {
		pieces += a[3]
		bytes += a[4]
	}
	return pieces > 0 && bytes/pieces >= directPiece && bytes > sharedMax
}

// interleaved reports whether the ranks' accesses need collective
// buffering: some rank's is non-contiguous, or two ranks' ranges overlap.
func interleaved(all []collArgs) bool {
	type rng struct{ lo, hi int64 }
	var small [16]rng // most jobs' files: nothing allocated
	rs := small[:0]
	for _, a := range all {
		if a[3] > 1 {
			return true
		}
		if a[3] == 1 {
			rs = append(rs, rng{a[1], a[2]})
		}
	}
	slices.SortFunc(rs, func(a, b rng) int { return cmp.Compare(a.lo, b.lo) })
	for i := 1; i < len(rs); i++ {
		if rs[i].lo < rs[i-1].hi {
			return true
		}
	}
	return false
}

// twoPhaseHook, when set (by tests), is called by every rank entering
// twoPhase.
var twoPhaseHook func()

// Two-phase I/O's messages on a file's own communicator (tags 1 and 2
// are the shared pointer's). Every call consumes all the messages it
// sends, so the next call finds none of them.
const (
	tagTPMeta = 3 // a rank's pieces in an aggregator's domain: (offset, length) pairs
	tagTPData = 4 // the bytes of one rank's pieces in one window
)

// maxRound caps cb_buffer_size, the file bytes of one round: a round's
// messages count their bytes in an int.
const maxRound = 1 << 30

// tpTouches reports whether the access a (a rank's row of collective's
// Allgather) reaches into the file range [lo, hi): the rank then sends
// the aggregator of that domain its pieces there, none when they all
// fall in the access's holes. Both sides decide with it alone.
func tpTouches(a collArgs, lo, hi int64) bool {
	return a[3] > 0 && a[1] < hi && a[2] > lo
}

// tpDomains cuts the file range that the accesses all cover into one
// domain per aggregator (bounds[d] to bounds[d+1]) and returns them with
// the window size; ok is false when nobody accesses anything. Every rank
// cuts with rank 0's hints, so that all agree.
func tpDomains(all []collArgs, aggrs []int) (bounds []int64, cb int64, ok bool) {
	gl, gh := int64(-1), int64(0)
	for _, a := range all {
		if a[3] == 0 {
			continue
		}
		if gl < 0 || a[1] < gl {
			gl = a[1]
		}
		gh = max(gh, a[2])
	}
	if gl < 0 {
		return nil, 0, false
	}
	cb, align := min(max(all[0][5], 1), maxRound), all[0][6]
	if align <= 0 {
		align = 4096
	}
	return fileio.Domains(gl, gh, len(aggrs), align), cb, true
}

// tpOut is a piece of this rank's access, bound for window w of domain d.
type tpOut struct {
	d, w int
	fileio.Piece
}

// tpIn is a piece an aggregator writes or reads: in window w, of rank
// src; at is its offset in the stream of the aggregator's own access,
// or in the window's buffer for another rank's piece.
type tpIn struct {
	fileio.Seg
	w, src int
	at     int64
}

// tpWin is one window of an aggregator's domain: its pieces ins[lo:hi],
// sorted by offset, and the other ranks' shares of its buffer, in rank
// order.
type tpWin struct {
	lo, hi int
	size   int64
	srcs   []tpSrc
}

// tpSrc is rank r's n bytes at base in a window's buffer.
type tpSrc struct {
	r       int
	n, base int64
}

// twoPhase does the exchange and the aggregators' I/O and returns the
// stream bytes this rank moved. Every aggregator's domain is cut into
// windows (rounds) of cb_buffer_size bytes of the file. Each rank sends
// each aggregator whose domain its access touches one message of its
// pieces there (offsets and lengths), then, for a write, one message of
// bytes per window, straight from its stream when the pieces follow
// each other there (they do unless the view's tiles interleave); a read
// receives into its stream the same way. An aggregator takes its own
// pieces from its stream, never copying them; it receives window k+1
// while it writes window k, and writes each window's runs with one
// pwritev each (or sieves a window whose runs are short). Nothing waits
// for anything but the messages it needs: there is no collective step
// between the Allgather before and the agreement after.
func (f *File) twoPhase(write bool, x *xfer, segs []fileio.Seg, all []collArgs, aggrs []int) (int64, error) {
	if twoPhaseHook != nil {
		twoPhaseHook()
	}
	c := f.comm
	me := c.Rank()
	bounds, cb, ok := tpDomains(all, aggrs)
	if !ok {
		return 0, nil
	}

	// This rank's pieces, by domain and window.
	outs := make([]tpOut, 0, len(segs)+2*len(aggrs))
	ordered := true
	fileio.SplitRounds(segs, bounds, cb, func(d, w int, p fileio.Piece) {
		if n := len(outs); n > 0 && (d < outs[n-1].d || d == outs[n-1].d && w < outs[n-1].w) {
			ordered = false
		}
		outs = append(outs, tpOut{d, w, p})
	})
	if !ordered { // the view's tiles interleave: its stream is not in file order
		sort.SliceStable(outs, func(i, j int) bool {
			return outs[i].d < outs[j].d || outs[i].d == outs[j].d && outs[i].w < outs[j].w
		})
	}

	// Phase 1, this rank's side: offsets and lengths to every other
	// aggregator its access touches, then the bytes of each window
	// (write) or a receive for them (read).
	var reqs []*Request
	type scatter struct {
		buf  []byte
		outs []tpOut
	}
	var scatters []scatter // a read's windows whose pieces do not follow each other in the stream
	meta := make([]int64, 0, 2*len(outs))
	mine := make([][2]int, len(aggrs)) // outs[mine[d][0]:mine[d][1]] are the pieces of domain d
	for i, d := 0, 0; d < len(aggrs); d++ {
		j := i
		for j < len(outs) && outs[j].d == d {
			j++
		}
		mine[d] = [2]int{i, j}
		group := outs[i:j]
		i = j
		if aggrs[d] == me || !tpTouches(all[me], bounds[d], bounds[d+1]) {
			continue
		}
		m0 := len(meta)
		for _, o := range group {
			meta = append(meta, o.Off, o.Len)
		}
		r, err := c.Isend(datatype.SliceBytes(meta[m0:]), 8*(len(meta)-m0), Byte, aggrs[d], tagTPMeta)
		if err != nil {
			return 0, err
		}
		reqs = append(reqs, r)
		for k := 0; k < len(group); {
			l, n, follows := k+1, group[k].Len, true
			for ; l < len(group) && group[l].w == group[k].w; l++ {
				follows = follows && group[l].Stream == group[l-1].Stream+group[l-1].Len
				n += group[l].Len
			}
			win := group[k:l]
			k = l
			var buf []byte
			if follows {
				buf = x.stream[win[0].Stream : win[0].Stream+n]
			} else {
				buf = make([]byte, n)
				if write {
					at := int64(0)
					for _, o := range win {
						at += int64(copy(buf[at:], x.stream[o.Stream:o.Stream+o.Len]))
					}
				} else {
					scatters = append(scatters, scatter{buf, win})
				}
			}
			if write {
				r, err = c.Isend(buf, int(n), Byte, aggrs[d], tagTPData)
			} else {
				r, err = c.Irecv(buf, int(n), Byte, aggrs[d], tagTPData)
			}
			if err != nil {
				return 0, err
			}
			reqs = append(reqs, r)
		}
	}

	// Phase 2, the aggregator's side, for its domain.
	var ioErr error
	for d := range aggrs {
		if aggrs[d] != me {
			continue
		}
		if err := f.aggregate(write, x.stream, outs[mine[d][0]:mine[d][1]], all, bounds[d], bounds[d+1], cb, &ioErr); err != nil {
			return 0, err
		}
	}
	for _, r := range reqs {
		if _, err := r.Wait(); err != nil {
			return 0, err
		}
	}
	if write {
		return x.n, ioErr
	}
	for _, s := range scatters {
		at := int64(0)
		for _, o := range s.outs {
			at += int64(copy(x.stream[o.Stream:o.Stream+o.Len], s.buf[at:]))
		}
	}
	if ioErr != nil {
		return 0, ioErr
	}
	st, err := f.fd.Stat()
	if err != nil {
		return 0, err
	}
	var moved int64
	for _, s := range segs {
		if s.Off >= st.Size() {
			break
		}
		moved += min(s.End(), st.Size()) - s.Off
		if s.End() > st.Size() {
			break
		}
	}
	return moved, nil
}

// aggregate is an aggregator's part of two-phase I/O for its domain [lo,
// hi): it receives every other rank's pieces there (offsets and lengths)
// and, window by window, their bytes, which it writes with its own
// pieces (own, from its stream); or it reads each window and sends each
// rank its bytes. The first I/O error is kept in *ioErr and ends the
// I/O but not the exchange, so that no rank waits for a message that
// never comes; a failed exchange is returned.
func (f *File) aggregate(write bool, stream []byte, own []tpOut, all []collArgs, lo, hi, cb int64, ioErr *error) error {
	c := f.comm
	me := c.Rank()
	ins := make([]tpIn, 0, len(own))
	var m []int64
	for r := range all {
		if r == me {
			for _, o := range own {
				ins = append(ins, tpIn{o.Seg, o.w, me, o.Stream})
			}
			continue
		}
		if !tpTouches(all[r], lo, hi) {
			continue
		}
		st, err := c.Probe(r, tagTPMeta)
		if err != nil {
			return err
		}
		n := st.Bytes() / 8
		if cap(m) < n {
			m = make([]int64, n)
		}
		m = m[:n]
		if _, err := c.Recv(datatype.SliceBytes(m), 8*n, Byte, r, tagTPMeta); err != nil {
			return err
		}
		w, at := -1, int64(0)
		for k := 0; k+1 < n; k += 2 {
			s := fileio.Seg{Off: m[k], Len: m[k+1]}
			if s.Len <= 0 || s.Off < lo || s.End() > hi {
				return fileErr(c, "two-phase I/O", f.name, ErrIntern, nil, "rank %d sent a piece of %d bytes at %d for the domain [%d, %d)", r, s.Len, s.Off, lo, hi)
			}
			if sw := fileio.Window(s.Off, lo, cb); sw != w {
				w, at = sw, 0
			}
			ins = append(ins, tpIn{s, w, r, at})
			at += s.Len
		}
	}
	if len(ins) == 0 {
		return nil
	}
	// Windows in file order, each window's pieces by offset; pieces at
	// the same offset (ranks writing the same bytes) stay in rank order.
	sort.SliceStable(ins, func(i, j int) bool {
		return ins[i].w < ins[j].w || ins[i].w == ins[j].w && ins[i].Off < ins[j].Off
	})
	// Each window's buffer: the other ranks' bytes, in rank order.
	var wins []tpWin
	tot := make(map[int]int64)
	for i := 0; i < len(ins); {
		j := i + 1
		for j < len(ins) && ins[j].w == ins[i].w {
			j++
		}
		clear(tot)
		for _, p := range ins[i:j] {
			if p.src != me {
				tot[p.src] = max(tot[p.src], p.at+p.Len)
			}
		}
		w := tpWin{lo: i, hi: j, srcs: make([]tpSrc, 0, len(tot))}
		for r, n := range tot {
			w.srcs = append(w.srcs, tpSrc{r: r, n: n})
		}
		sort.Slice(w.srcs, func(a, b int) bool { return w.srcs[a].r < w.srcs[b].r })
		base := make(map[int]int64, len(w.srcs))
		for k := range w.srcs {
			w.srcs[k].base = w.size
			base[w.srcs[k].r] = w.size
			w.size += w.srcs[k].n
		}
		for k := i; k < j; k++ {
			if ins[k].src != me {
				ins[k].at += base[ins[k].src]
			}
		}
		wins = append(wins, w)
		i = j
	}
	if write {
		post := func(k int) ([]*Request, []byte, error) {
			w := wins[k]
			buf := f.tpBuf(1+k%2, w.size)
			reqs := make([]*Request, 0, len(w.srcs))
			for _, s := range w.srcs {
				r, err := c.Irecv(buf[s.base:s.base+s.n], int(s.n), Byte, s.r, tagTPData)
				if err != nil {
					return nil, nil, err
				}
				reqs = append(reqs, r)
			}
			return reqs, buf, nil
		}
		reqs, buf, err := post(0)
		if err != nil {
			return err
		}
		for k, w := range wins {
			for _, r := range reqs {
				if _, err := r.Wait(); err != nil {
					return err
				}
			}
			cur := buf
			if k+1 < len(wins) {
				// Window k+1 arrives while window k is written.
				if reqs, buf, err = post(k + 1); err != nil {
					return err
				}
			}
			if *ioErr == nil {
				f.busyBegin()
				*ioErr = f.ioWindow(true, ins[w.lo:w.hi], tpBytes(me, cur, stream))
				f.busyEnd()
			}
		}
		return nil
	}
	var sent [2][]*Request // each window buffer's sends, waited for before it is reused
	for k, w := range wins {
		for _, r := range sent[k%2] {
			if _, err := r.Wait(); err != nil {
				return err
			}
		}
		sent[k%2] = sent[k%2][:0]
		buf := f.tpBuf(1+k%2, w.size)
		if *ioErr == nil {
			f.busyBegin()
			*ioErr = f.ioWindow(false, ins[w.lo:w.hi], tpBytes(me, buf, stream))
			f.busyEnd()
		}
		if *ioErr != nil {
			clear(buf) // no stale bytes: the call fails on every rank anyway
		}
		for _, s := range w.srcs {
			r, err := c.Isend(buf[s.base:s.base+s.n], int(s.n), Byte, s.r, tagTPData)
			if err != nil {
				return err
			}
			sent[k%2] = append(sent[k%2], r)
		}
	}
	for _, reqs := range sent {
		for _, r := range reqs {
			if _, err := r.Wait(); err != nil {
				return err
			}
		}
	}
	return nil
}

// ioWindow writes (or reads) the pieces of one window, sorted by offset,
// each from (into) bytesOf(piece). Runs of pieces
// that follow each other in the file take one pwritev (preadv) each;
// a window of runs shorter than sieveSpan on average (with their holes)
// is sieved instead: one read of its span, the pieces copied in (out),
// and for a write one write back. A read
// past the end of the file gives zeros.
func (f *File) ioWindow(write bool, ps []tpIn, bytesOf func(tpIn) []byte) error {
	segs := make([]fileio.Seg, len(ps))
	lo, hi := ps[0].Off, ps[0].End()
	for i, p := range ps {
		segs[i] = p.Seg
		hi = max(hi, p.End())
	}
	runs := fileio.Runs(segs)
	if len(runs) == 1 || (write && !f.canRead) || hi-lo >= int64(len(runs))*sieveSpan {
		bufs := make([][]byte, 0, len(ps))
		first := 0
		for _, end := range runs {
			bufs = bufs[:0]
			for _, p := range ps[first:end] {
				bufs = append(bufs, bytesOf(p))
			}
			var err error
			if write {
				err = f.writeRun(bufs, ps[first].Off)
			} else {
				err = f.readRun(bufs, ps[first].Off)
			}
			if err != nil {
				return err
			}
			first = end
		}
		return nil
	}
	cover := f.tpBuf(0, hi-lo)
	k, err := f.fd.ReadAt(cover, lo)
	if err != nil && err != io.EOF {
		return err
	}
	clear(cover[k:])
	for _, p := range ps {
		if write {
			copy(cover[p.Off-lo:p.End()-lo], bytesOf(p))
		} else {
			copy(bytesOf(p), cover[p.Off-lo:p.End()-lo])
		}
	}
	if write {
		_, err = f.fd.WriteAt(cover, lo)
	}
	return err
}

// tpBytes returns the bytes of an aggregator's piece: its own (rank me)
// in stream, the others' in the window's buffer buf.
func tpBytes(me int, buf, stream []byte) func(tpIn) []byte {
	return func(p tpIn) []byte {
		if p.src == me {
			return stream[p.at : p.at+p.Len]
		}
		return buf[p.at : p.at+p.Len]
	}
}

// writeRun writes bufs one after the other from file offset off: one
// pwritev where the platform has it.
func (f *File) writeRun(bufs [][]byte, off int64) error {
	if len(bufs) > 1 {
		if done, err := writeVec(f.fd, bufs, off); done {
			return err
		}
	}
	for _, b := range bufs {
		if _, err := f.fd.WriteAt(b, off); err != nil {
			return err
		}
		off += int64(len(b))
	}
	return nil
}

// readRun reads bufs one after the other from file offset off (one
// preadv where the platform has it); past the end of the file they get
// zeros.
func (f *File) readRun(bufs [][]byte, off int64) error {
	want := int64(0)
	for _, b := range bufs {
		want += int64(len(b))
	}
	got := int64(0)
	done := false
	if len(bufs) > 1 {
		var err error
		if done, got, err = readVec(f.fd, bufs, off); err != nil {
			return err
		}
	}
	if !done {
		for _, b := range bufs {
			k, err := f.fd.ReadAt(b, off+got)
			got += int64(k)
			if err == io.EOF {
				break
			}
			if err != nil {
				return err
			}
		}
	}
	// Zeros past the end of the file.
	for _, b := range bufs {
		n := int64(len(b))
		if got >= n {
			got -= n
			continue
		}
		clear(b[got:])
		got = 0
	}
	return nil
}

// tpKeep is the largest two-phase buffer a File keeps from one
// collective call to the next; larger ones are the garbage collector's
// as soon as the call ends.
const tpKeep = 64 << 20

// tpBuf returns n bytes of f's two-phase buffer i (0: the span of a
// window an aggregator sieves, 1 and 2: the other ranks' bytes of an
// aggregator's even and odd windows). Reusing them matters: a fresh buffer of some
// megabytes costs a page fault per 4 KiB page at its first write, which
// made two-phase I/O slower than its own copies. Only on f's queue.
func (f *File) tpBuf(i int, n int64) []byte {
	if n > tpKeep {
		return make([]byte, n)
	}
	if int64(cap(f.tp[i])) < n {
		f.tp[i] = make([]byte, n)
	}
	return f.tp[i][:n]
}

// collAccess is the body of every blocking collective access: kind says
// how the position is found.
type posKind int

const (
	atOffset posKind = iota
	atPointer
	atShared // ordered
)

func (f *File) collAccess(op string, write bool, kind posKind, off int64, buf []byte, count int, dt *Datatype) (Status, error) {
	x, local := f.prepare(op, write, buf, count, dt, kind == atShared, &f.collX)
	var pos int64
	switch kind {
	case atOffset:
		if local == nil && f.amode&ModeSequential != 0 {
			x.finish(0)
			x, local = nil, fileErr(f.comm, "File."+op, f.name, ErrUnsupportedOp, nil, "a file opened ModeSequential is accessed through the shared pointer only")
		}
		if local == nil {
			pos = off * x.view.fesize
		}
	case atPointer:
		if local == nil && f.amode&ModeSequential != 0 {
			x.finish(0)
			x, local = nil, fileErr(f.comm, "File."+op, f.name, ErrUnsupportedOp, nil, "a file opened ModeSequential has no individual pointer")
		}
		if local == nil {
			f.mu.Lock()
			pos = f.pos * x.view.fesize
			f.mu.Unlock()
		}
	case atShared:
		// Ordered: rank r's data follows ranks 0..r-1's from the shared
		// pointer, which then moves past all of it.
		n := int64(-1)
		if local == nil {
			n = x.n / x.view.fesize
		}
		base := int64(0)
		if f.comm.Rank() == 0 {
			base = f.shared.local(0, 0)
		}
		all, err := Allgather(f.comm, [2]int64{n, base})
		if err != nil {
			if x != nil {
				x.finish(0)
			}
			return Status{}, fileErr(f.comm, "File."+op, f.name, ErrorClass(err), err, "")
		}
		var before, total int64
		for r, a := range all {
			if r < f.comm.Rank() {
				before += max(a[0], 0)
			}
			total += max(a[0], 0)
		}
		if f.comm.Rank() == 0 {
			f.shared.set(base + total)
		}
		if local == nil {
			pos = (all[0][1] + before) * x.view.fesize
		}
	}
	st, err := f.collective(op, write, x, pos, local)
	if err == nil && kind == atPointer {
		f.mu.Lock()
		f.pos += int64(st.bytes) / x.view.esize
		f.mu.Unlock()
	}
	return st, err
}

// blockingColl runs a collective access on f's queue.
func (f *File) blockingColl(op string, write bool, kind posKind, off int64, buf []byte, count int, dt *Datatype) (Status, error) {
	if err := f.check(op); err != nil {
		return Status{}, err
	}
	inline, err := f.q.enterInline()
	if err != nil {
		return Status{}, f.handle(err)
	}
	if inline {
		// The usual road, with nothing allocated for the queue.
		st, err := f.collInline(op, write, kind, off, buf, count, dt)
		return st, f.handle(err)
	}
	var st Status
	err = f.q.do(func() error {
		var err error
		st, err = f.collAccess(op, write, kind, off, buf, count, dt)
		return err
	})
	return st, f.handle(err)
}

// collInline is collAccess run on the caller's goroutine, after
// fileQueue.enterInline let it.
func (f *File) collInline(op string, write bool, kind posKind, off int64, buf []byte, count int, dt *Datatype) (Status, error) {
	defer f.q.leaveInline()
	return f.collAccess(op, write, kind, off, buf, count, dt)
}

// ReadAtAll is the collective ReadAt (MPI_File_read_at_all): every rank
// of the file calls it, each with its own offset and buffer.
func (f *File) ReadAtAll(off int64, buf []byte, count int, dt *Datatype) (_ Status, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("File.ReadAtAll", f.commOrNil(), Undefined, Undefined), &err)
	}
	return f.blockingColl("ReadAtAll", false, atOffset, off, buf, count, dt)
}

// WriteAtAll is the collective WriteAt (MPI_File_write_at_all).
func (f *File) WriteAtAll(off int64, buf []byte, count int, dt *Datatype) (_ Status, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("File.WriteAtAll", f.commOrNil(), Undefined, Undefined), &err)
	}
	return f.blockingColl("WriteAtAll", true, atOffset, off, buf, count, dt)
}

// ReadAll is the collective Read at the individual pointers (MPI_File_read_all).
func (f *File) ReadAll(buf []byte, count int, dt *Datatype) (_ Status, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("File.ReadAll", f.commOrNil(), Undefined, Undefined), &err)
	}
	return f.blockingColl("ReadAll", false, atPointer, 0, buf, count, dt)
}

// WriteAll is the collective Write at the individual pointers (MPI_File_write_all).
func (f *File) WriteAll(buf []byte, count int, dt *Datatype) (_ Status, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("File.WriteAll", f.commOrNil(), Undefined, Undefined), &err)
	}
	return f.blockingColl("WriteAll", true, atPointer, 0, buf, count, dt)
}

// ReadOrdered reads at the shared pointer in rank order: rank r's data
// follows ranks 0..r-1's (MPI_File_read_ordered); collective.
func (f *File) ReadOrdered(buf []byte, count int, dt *Datatype) (_ Status, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("File.ReadOrdered", f.commOrNil(), Undefined, Undefined), &err)
	}
	return f.blockingColl("ReadOrdered", false, atShared, 0, buf, count, dt)
}

// WriteOrdered writes at the shared pointer in rank order
// (MPI_File_write_ordered); collective.
func (f *File) WriteOrdered(buf []byte, count int, dt *Datatype) (_ Status, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("File.WriteOrdered", f.commOrNil(), Undefined, Undefined), &err)
	}
	return f.blockingColl("WriteOrdered", true, atShared, 0, buf, count, dt)
}
