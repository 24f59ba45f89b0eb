package mpi

import (
	"encoding/binary"
	"math"
	"sync/atomic"

	"github.com/mpigo/mpi/internal/coll"
	"github.com/mpigo/mpi/internal/engine"
)

// Partitioned communication (MPI-4.0 chapter 4): one message made of
// partitions that the sender's goroutines hand over one by one (Pready)
// and that the receiver can see arrive one by one (Parrived).
//
// Matching. MPI pairs partitioned sends and receives in the order of
// their Init calls (per communicator, pair of ranks and tag), whatever
// the order of their Starts, and several may be active at once on one
// tag. So each PsendInit takes an id of its own on its communicator
// (Comm.partNext) and sends it at once in a match message, on the
// communicator's collective context with partMatchTag of the user's tag;
// each PrecvInit posts the receive of a match message there at once.
// Messages between two ranks on one tag do not overtake each other, and
// posted receives match in the order they were posted, so the k-th
// receive to be initialised gets the id of the k-th send. Everything
// else the pair of requests sends, in every run, travels on
// partDataTag(id), a tag of that pair alone: the first Start of each
// side waits for its match message to complete (the receive learns the
// id there), so Init itself never blocks.
//
// Each Start of a send runs a goroutine that sends every partition as it
// is readied, in the order they are readied: a 24-byte header (its byte
// offset and length, and the message's size) and then the partition's
// bytes straight from the buffer. Each Start of a receive runs a
// goroutine that receives a header, then the bytes straight into their
// place in the buffer, until the whole message is in, and counts what
// arrived in each receive partition (Parrived). The two sides may divide
// the message into different numbers of partitions: only the total size
// must agree. One goroutine sends on a pair's tag at a time, and
// messages on one tag never overtake each other, so a header is always
// followed by its own data, and one run's messages by the next run's.
//
// Datatypes. Partition i is the elements [i×count, (i+1)×count) of the
// partitions×count elements of the datatype in the buffer, and so the
// packed bytes [i×count×size, (i+1)×count×size) of the message: offsets
// and sizes on the wire are packed bytes. A contiguous datatype's bytes
// are the buffer's own, sent from it and received into it directly. Any
// other datatype (or a buffer at Bottom) has a packed copy of the
// message of its own, made at Init: the sender packs each partition
// into it when it sends it, and the receiver receives into it and
// unpacks each receive partition into the buffer once all its bytes are
// in, before Parrived reports it. So the two sides may use different
// datatypes and numbers of partitions, strided or not, as long as the
// total packed size agrees.
//
// Limits: the source must be a rank (no AnySource or AnyTag, as MPI
// requires).

// The tags of partitioned messages on the collective context: below
// meetTag (and so below checkTag and every collective's tag, which are
// not negative), the match messages first, one tag per user tag, then
// the pairs' own tags, one per id modulo partIDs (an id comes back only
// after 2^29 more partitioned sends on the communicator).
const (
	partMatchBase = meetTag - 1
	partDataBase  = partMatchBase - TagUB - 1
	partIDs       = 1 << 29
)

// The lowest tag of partitioned messages still fits the wire's int32.
const _ = uint32(partDataBase - (partIDs - 1) - math.MinInt32)

// partMatchTag is the tag of the match messages of partitioned requests
// with the user's tag.
func partMatchTag(tag int) int { return partMatchBase - tag }

// partDataTag is the tag of the headers and partitions of the pair of
// partitioned requests with id.
func partDataTag(id uint32) int { return partDataBase - int(id%partIDs) }

// partState is a partitioned request's state (Request.x.part).
type partState struct {
	c    *Comm
	send bool
	peer int
	tag  int // the user's tag
	// buf holds the message's packed bytes: the user's buffer for a
	// contiguous datatype, else the packed copy of lay, the user's
	// elements (packed by the sender, unpacked by the receiver one
	// partition at a time).
	buf    []byte
	lay    engine.Layout
	parts  int
	pbytes int // packed bytes of one partition
	// match is the send or receive of the match message, until the first
	// Start's goroutine has waited for it; matchBuf holds its id and
	// matchErr its failure, which fails every run.
	match    coll.Request
	matchBuf [4]byte
	matchErr error
	// wtag is the tag of the pair's messages (partDataTag), known to a
	// receive once its match message is in.
	wtag int
	// ready holds the sender's readied partitions for the goroutine
	// sending them; readied marks each partition readied in this Start.
	ready   chan int
	readied []atomic.Bool
	// arrived counts the bytes received in each receive partition.
	arrived []atomic.Int64
	started atomic.Bool // has been started at least once
	active  atomic.Bool // started and its goroutine not finished
	er      *engine.Request
	err     error
	run     func()
}

// partInit makes a partitioned send or receive.
func (c *Comm) partInit(op string, send bool, buf []byte, partitions, count int, dt *Datatype, peer, tag int) (*Request, error) {
	var err error
	if send {
		err = c.checkDest(op, peer, tag)
	} else {
		err = c.checkSource(op, peer, tag)
		if err == nil && (peer == AnySource || tag == AnyTag) {
			err = c.fail(op, ErrArg, at("source", peer, tag), "a partitioned receive takes no AnySource or AnyTag")
		}
	}
	if err != nil {
		return nil, err
	}
	l := at("dest", peer, tag)
	if !send {
		l = at("source", peer, tag)
	}
	if c.inter != nil {
		return nil, c.fail(op, ErrComm, l, "partitioned communication on an intercommunicator is not supported")
	}
	if partitions < 1 {
		return nil, c.fail(op, ErrArg, l, "%d partitions: there must be at least one", partitions)
	}
	if count < 0 {
		return nil, c.fail(op, ErrCount, l, "negative count %d", count)
	}
	if dt == nil {
		return nil, c.fail(op, ErrType, l, "nil datatype")
	}
	total, ok := countBytes(partitions, count)
	if !ok {
		return nil, c.fail(op, ErrCount, l, "%d partitions of %d elements overflow an int", partitions, count)
	}
	m, err := c.checkBuf(op, l, buf, total, dt)
	if err != nil {
		return nil, err
	}
	ps := &partState{c: c, send: send, peer: peer, tag: tag, buf: m.b, parts: partitions}
	if m.lay != nil {
		// Not contiguous, or at Bottom: a packed copy of the message.
		ps.lay, ps.buf = m.lay, make([]byte, m.lay.Len())
	}
	ps.pbytes = len(ps.buf) / partitions
	if send {
		ps.ready = make(chan int, partitions)
		ps.readied = make([]atomic.Bool, partitions)
		ps.run = ps.sendAll
	} else {
		ps.arrived = make([]atomic.Int64, partitions)
		ps.run = ps.recvAll
	}
	if peer != ProcNull {
		// The match message, in the order of the Init calls (the last
		// step, so that a failed Init leaves nothing behind).
		cc := collComm{c.shadow}
		if send {
			id := c.partNext.Add(1) - 1
			ps.wtag = partDataTag(id)
			binary.LittleEndian.PutUint32(ps.matchBuf[:], id)
			ps.match, err = cc.Isend(ps.matchBuf[:], peer, partMatchTag(tag))
		} else {
			ps.match, err = cc.Irecv(ps.matchBuf[:], peer, partMatchTag(tag))
		}
		if err != nil {
			return nil, c.handle(c.shadow.collErr(op, err))
		}
	}
	r := c.newRequest(op, l)
	if !send {
		r.setElem(dt.size) // Status.Count: elements of dt
	}
	r.er = nil
	r.set(fLive, false)
	r.set(fFinished, true)
	r.x.start = ps.start
	r.x.finish = func(engine.Status) error { return ps.err }
	r.x.activeFree = true
	r.x.part = ps
	return r, nil
}

// start is the request's Start.
func (ps *partState) start(r *Request) error {
	if ps.peer == ProcNull {
		r.mu.Lock()
		r.er = nil
		r.set(fFinished, true)
		if !ps.send {
			r.setStatus(procNullStatus)
		}
		r.mu.Unlock()
		ps.started.Store(true)
		for i := range ps.arrived {
			ps.arrived[i].Store(int64(ps.pbytes))
		}
		return nil
	}
	if !ps.active.CompareAndSwap(false, true) {
		return r.c.fail("Start", ErrRequest, r.at(), "the previous run of the partitioned request has not finished")
	}
	for i := range ps.readied {
		ps.readied[i].Store(false)
	}
	for i := range ps.arrived {
		ps.arrived[i].Store(0)
	}
	ps.err = nil
	ps.er = r.activate()
	ps.started.Store(true)
	go ps.run()
	return nil
}

// matched waits, in the first run, for the match message to complete;
// a receive takes the pair's tag from it.
func (ps *partState) matched(op string) error {
	if m := ps.match; m != nil {
		ps.match = nil
		n, err := m.Wait()
		switch {
		case err != nil:
			ps.matchErr = ps.c.shadow.collErr(op, err)
		case !ps.send && n != len(ps.matchBuf):
			ps.matchErr = ps.c.errorf(op, ErrOther, at("source", ps.peer, ps.tag), "a malformed partitioned match message (%d bytes)", n)
		case !ps.send:
			ps.wtag = partDataTag(binary.LittleEndian.Uint32(ps.matchBuf[:]))
		}
	}
	return ps.matchErr
}

// done completes the Start in flight with err; a receive's status says
// the message was size bytes, count of them in the buffer.
func (ps *partState) done(err error, size, count int) {
	ps.err = err
	er := ps.er
	ps.active.Store(false)
	er.CompleteOnce(engine.Status{Source: ps.peer, Tag: ps.tag, Size: size, Count: count})
}

// sendAll sends the partitions as they are readied.
func (ps *partState) sendAll() {
	cc := collComm{ps.c.shadow}
	var hdr [24]byte
	err := ps.matched("Psend")
	if len(ps.buf) == 0 {
		// An empty message: one header once every partition is ready,
		// whatever the partition counts (the receiver waits for it).
		for range ps.parts {
			<-ps.ready
		}
		if err == nil {
			if err = cc.Send(hdr[:], ps.peer, ps.wtag); err != nil {
				err = ps.c.shadow.collErr("Psend", err)
			}
		}
		ps.done(err, 0, 0)
		return
	}
	for range ps.parts {
		i := <-ps.ready
		if err != nil {
			continue // a failed send: take the other partitions, send nothing
		}
		off := i * ps.pbytes
		binary.LittleEndian.PutUint64(hdr[:8], uint64(off))
		binary.LittleEndian.PutUint64(hdr[8:], uint64(ps.pbytes))
		binary.LittleEndian.PutUint64(hdr[16:], uint64(len(ps.buf)))
		b := ps.buf[off : off+ps.pbytes]
		if ps.lay != nil {
			ps.lay.Pack(b, off)
		}
		if err = cc.Send(hdr[:], ps.peer, ps.wtag); err == nil {
			err = cc.Send(b, ps.peer, ps.wtag)
		}
	}
	if err != nil {
		err = ps.c.shadow.collErr("Psend", err) // the shadow has no handler: Wait calls c's
	}
	ps.done(err, 0, 0)
}

// recvAll receives partitions until the whole message is in. Each header
// also says the sender's total, so that a message larger than the
// receive is still taken in full (the part that does not fit discarded,
// and ErrTruncate reported) and its sender is not left waiting.
func (ps *partState) recvAll() {
	cc := collComm{ps.c.shadow}
	var hdr [24]byte
	var trunc error
	err := ps.matched("Precv")
	total, got, placed := len(ps.buf), 0, 0
	// At least one header, even into an empty buffer: an empty message
	// is one header, and a larger one must still be taken in full.
	for first := true; err == nil && (first || got < total); first = false {
		var n int
		if n, err = cc.Recv(hdr[:], ps.peer, ps.wtag); err != nil {
			break
		}
		off, size := int(binary.LittleEndian.Uint64(hdr[:8])), int(binary.LittleEndian.Uint64(hdr[8:]))
		total = int(binary.LittleEndian.Uint64(hdr[16:]))
		if n != len(hdr) || off < 0 || size < 0 || total < 0 {
			err = ps.c.errorf("Precv", ErrOther, at("source", ps.peer, ps.tag), "a malformed partition header")
			break
		}
		if size == 0 {
			continue // an empty message's one header (sendAll): no payload follows
		}
		if off > len(ps.buf) || size > len(ps.buf)-off {
			if trunc == nil {
				trunc = ps.c.errorf("Precv", ErrTruncate, at("source", ps.peer, ps.tag), "the %d-byte partitioned message does not fit the %d-byte receive", total, len(ps.buf))
			}
			cc.Recv(nil, ps.peer, ps.wtag) // discarded: ErrTruncate, as said
			got += size
			continue
		}
		if _, err = cc.Recv(ps.buf[off:off+size], ps.peer, ps.wtag); err != nil {
			break
		}
		got += size
		placed += size
		ps.note(off, size)
	}
	if err != nil {
		if _, ok := err.(*Error); !ok {
			err = ps.c.shadow.collErr("Precv", err)
		}
		total, placed = 0, 0
	} else {
		err = trunc
		ps.unpackRest()
	}
	ps.done(err, total, placed)
}

// unpackRest unpacks, once the message is in, the receive partitions
// that it filled only in part (a message shorter than the receive ends
// inside one): note unpacks only full ones. Their counts stay short, so
// Parrived does not report them.
func (ps *partState) unpackRest() {
	if ps.lay == nil {
		return
	}
	for j := range ps.arrived {
		if n := int(ps.arrived[j].Load()); n > 0 && n < ps.pbytes {
			lo := j * ps.pbytes
			ps.lay.Unpack(ps.buf[lo:lo+n], lo)
		}
	}
}

// note counts size bytes received at off in the receive partitions they
// cover. A partition whose bytes are all in is unpacked into the user's
// buffer (a datatype that is not contiguous) before its count says so,
// so that Parrived never reports a partition whose elements are not in
// place. Only the receiving goroutine writes the counts.
func (ps *partState) note(off, size int) {
	if ps.pbytes == 0 {
		return
	}
	for size > 0 {
		j := off / ps.pbytes
		end := min((j+1)*ps.pbytes, off+size)
		got := ps.arrived[j].Load() + int64(end-off)
		if got == int64(ps.pbytes) && ps.lay != nil {
			lo := j * ps.pbytes
			ps.lay.Unpack(ps.buf[lo:lo+ps.pbytes], lo)
		}
		ps.arrived[j].Store(got)
		size -= end - off
		off = end
	}
}

// partOf returns r's partitioned state, or an error for call op.
func (r *Request) partOf(op string, send bool) (*partState, error) {
	if r == nil {
		return nil, (*Comm)(nil).errorf(op, ErrRequest, loc{}, "nil request")
	}
	r.mu.Lock()
	freed := r.is(fFreed)
	var ps *partState
	if r.x != nil {
		ps = r.x.part
	}
	r.mu.Unlock()
	switch {
	case freed:
		return nil, r.c.fail(op, ErrRequest, r.at(), "request has been freed")
	case ps == nil || ps.send != send:
		what := "receive"
		if send {
			what = "send"
		}
		return nil, r.c.fail(op, ErrRequest, r.at(), "not a partitioned %s request (%s)", what, r.opName())
	}
	return ps, nil
}

// ready marks partition i ready.
func (ps *partState) readyOne(r *Request, op string, i int) error {
	if i < 0 || i >= ps.parts {
		return r.c.fail(op, ErrArg, r.at(), "partition %d does not exist (%d partitions)", i, ps.parts)
	}
	if ps.peer == ProcNull && r.active() {
		return nil
	}
	if !ps.active.Load() {
		return r.c.fail(op, ErrRequest, r.at(), "the request is not active: Start it before marking partitions ready")
	}
	if ps.readied[i].Swap(true) {
		return r.c.fail(op, ErrArg, r.at(), "partition %d is ready already in this run", i)
	}
	ps.ready <- i
	return nil
}

// Pready marks partition i of a started partitioned send ready
// (MPI_Pready): it leaves as soon as the request's sender takes it, while
// other partitions are still being filled. Any goroutine may call it. A
// partition out of range, readied twice in one run, or a request that is
// not active is an error.
func (r *Request) Pready(partition int) (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Request.Pready", r.comm(), Undefined, Undefined), &err)
	}
	ps, err := r.partOf("Pready", true)
	if err != nil {
		return err
	}
	return ps.readyOne(r, "Pready", partition)
}

// PreadyRange marks partitions lo to hi, both included, ready
// (MPI_Pready_range).
func (r *Request) PreadyRange(lo, hi int) (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Request.PreadyRange", r.comm(), Undefined, Undefined), &err)
	}
	ps, err := r.partOf("PreadyRange", true)
	if err != nil {
		return err
	}
	if lo < 0 || hi >= ps.parts || lo > hi {
		return r.c.fail("PreadyRange", ErrArg, r.at(), "partitions %d to %d are not a range of the %d partitions", lo, hi, ps.parts)
	}
	for i := lo; i <= hi; i++ {
		if err := ps.readyOne(r, "PreadyRange", i); err != nil {
			return err
		}
	}
	return nil
}

// PreadyList marks the listed partitions ready (MPI_Pready_list).
func (r *Request) PreadyList(partitions []int) (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Request.PreadyList", r.comm(), Undefined, Undefined), &err)
	}
	ps, err := r.partOf("PreadyList", true)
	if err != nil {
		return err
	}
	for _, i := range partitions {
		if i < 0 || i >= ps.parts {
			return r.c.fail("PreadyList", ErrArg, r.at(), "partition %d does not exist (%d partitions)", i, ps.parts)
		}
	}
	for _, i := range partitions {
		if err := ps.readyOne(r, "PreadyList", i); err != nil {
			return err
		}
	}
	return nil
}

// Parrived reports whether partition i of a started partitioned receive
// has arrived in full (MPI_Parrived); its elements are then in the buffer
// (unpacked, for a datatype that is not contiguous) and may be read while
// the others are still coming, whatever the sender's partitions.
func (r *Request) Parrived(partition int) (_ bool, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Request.Parrived", r.comm(), Undefined, Undefined), &err)
	}
	ps, err := r.partOf("Parrived", false)
	if err != nil {
		return false, err
	}
	if partition < 0 || partition >= ps.parts {
		return false, r.c.fail("Parrived", ErrArg, r.at(), "partition %d does not exist (%d partitions)", partition, ps.parts)
	}
	if !ps.started.Load() {
		return false, r.c.fail("Parrived", ErrRequest, r.at(), "the request has never been started")
	}
	if ps.pbytes == 0 {
		// Empty partitions arrive with the message: once the receive
		// has completed, not before the sender readied them (mpi4py's
		// partitioned tests with empty buffers saw them arrive at
		// Start).
		if !ps.active.Load() {
			return true, nil
		}
		r.c.p.collect()
		return !ps.active.Load(), nil
	}
	if ps.arrived[partition].Load() == int64(ps.pbytes) {
		return true, nil
	}
	// Let the rank's mailbox deliver what its senders left there.
	r.c.p.collect()
	return ps.arrived[partition].Load() == int64(ps.pbytes), nil
}

// PsendInit makes a partitioned send (MPI_Psend_init): buf holds
// partitions × count elements of dt, partition i the i-th block of count.
// dt may be any datatype, contiguous or not; buf may be Bottom.
// Each Start begins a new message; Pready hands each partition over.
// info is accepted for MPI's sake (nil will do).
func (c *Comm) PsendInit(buf []byte, partitions, count int, dt *Datatype, dest, tag int, info *Info) (_ *Request, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.PsendInit", c, dest, tag), &err)
	}
	return c.partInit("PsendInit", true, buf, partitions, count, dt, dest, tag)
}

// PrecvInit makes a partitioned receive (MPI_Precv_init) of partitions ×
// count elements of dt into buf, any datatype. The sender may use another
// number of partitions and another datatype, with the same total packed
// size.
func (c *Comm) PrecvInit(buf []byte, partitions, count int, dt *Datatype, source, tag int, info *Info) (_ *Request, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.PrecvInit", c, source, tag), &err)
	}
	return c.partInit("PrecvInit", false, buf, partitions, count, dt, source, tag)
}

// PsendInit is the typed partitioned send: buf (plain elements) is cut
// into partitions equal parts, so its length must be a multiple of
// partitions.
func PsendInit[E any](c *Comm, buf []E, partitions, dest, tag int) (_ *Request, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("PsendInit", c, dest, tag), &err)
	}
	return typedPart(c, "PsendInit", true, buf, partitions, dest, tag)
}

// PrecvInit is the typed partitioned receive into buf, cut into
// partitions equal parts.
func PrecvInit[E any](c *Comm, buf []E, partitions, source, tag int) (_ *Request, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("PrecvInit", c, source, tag), &err)
	}
	return typedPart(c, "PrecvInit", false, buf, partitions, source, tag)
}

func typedPart[E any](c *Comm, op string, send bool, buf []E, partitions, peer, tag int) (*Request, error) {
	if err := c.check(op); err != nil {
		return nil, err
	}
	t := typeOf[E]()
	if t.shape != shapePlain {
		return nil, c.typeErr(op, loc{}, errNotPlain(t))
	}
	if partitions < 1 || len(buf)%partitions != 0 {
		return nil, c.fail(op, ErrCount, loc{}, "%d elements do not divide into %d partitions", len(buf), partitions)
	}
	r, err := c.partInit(op, send, unsafeBytes(buf, t.size), partitions, len(buf)/partitions*t.size, Byte, peer, tag)
	if err == nil && !send {
		r.setElem(t.size) // Status.Count: elements of E
	}
	return r, err
}
