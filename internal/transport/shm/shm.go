// Package shm moves frames between processes on one node through shared
// memory.
//
// Every rank owns an inbox: a file in /dev/shm (mode 0600, named after the
// job and the rank) that holds one single-producer, single-consumer ring per
// local peer. A sender copies a frame into its ring in the receiver's inbox
// and publishes it with one atomic store; the receiver's poller finds it,
// hands it to the engine (in place when it does not wrap) and gives the
// room back. Large messages skip the rings when the kernel allows it: the
// transport exports the sender's buffer as a token (its address; see
// ExportRegion), the engine carries the token in the RTS without looking
// into it, and the receiver's transport copies the message straight into
// the posted receive buffer with process_vm_readv (ReadRegion, Fetch).
//
// Start-up is three steps around the launcher's fences: New creates and
// maps the inbox; after a fence, Attach maps the peers' inboxes and tests
// cross-memory attach towards each; after a second fence, Ready unlinks the
// inbox (every peer has it mapped by then, so nothing is left in /dev/shm
// whatever happens next) and starts the poller.
//
// Waiting: the poller spins for a short while after the last frame, then
// sleeps (on Linux reading a wake-up pipe beside the inbox, elsewhere on
// a futex in it); a sender that publishes a frame wakes it if it sleeps. See "Waking a sleeping poller" in docs/internals.md for why
// no wake-up is lost.
package shm

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/mpigo/mpi/internal/hint"
	"github.com/mpigo/mpi/internal/transport"
	"github.com/mpigo/mpi/internal/wire"
)

const (
	magic   = "mpigoshm"
	version = 5    // 4: frames of wire version 4 (RTS tokens); 5: wake-up pipes (offWake)
	ctlSize = 4096 // control page; the canRead flags follow at ctlFlags
	// offsets in the control page
	offVersion  = 8
	offSlots    = 12
	offRing     = 16
	offPid      = 24
	offProbe    = 32
	offLayout   = 40 // the creator's memory layout: archLayout
	offSleeping = 64
	offWake     = 68 // 1: the poller sleeps on its wake-up pipe (WakeName), not on the futex
	offFlags    = 128
)

// Tunables of the poller, chosen by measurement on 2 cores: spinning
// longer than a few tens of microseconds buys no latency and costs CPU
// that computing ranks need. They are constants: a job that wants another
// spin says so in Config.Spin.
const (
	// SpinTime is how long the poller keeps polling after the last frame
	// before it sleeps on its futex (Config.Spin overrides it).
	SpinTime = 50 * time.Microsecond
	// SleepTime bounds a futex sleep: the poller then checks that its
	// peers are alive.
	SleepTime = 100 * time.Millisecond
	// waiterNap is how long the poller naps while a goroutine of its
	// process polls in Wait (it looks again after each nap).
	waiterNap = 20 * time.Microsecond
)

// Config describes one rank's endpoint.
type Config struct {
	Rank  int    // this rank (world)
	Size  int    // ranks in the job
	JobID uint64 // names the job's files
	// Locals are the world ranks of this node that talk through shared
	// memory, in ascending order, Rank among them.
	Locals []int
	Dir    string // where inboxes live; default DefaultDir()
	// RingSize is each ring's capacity in bytes, a power of two; 0 picks
	// one by the number of local ranks.
	RingSize int
	NoCMA    bool // never copy by cross-memory attach (for tests)
	// Spin is how long the poller polls after the last frame before it
	// sleeps: 0 means SpinTime, a negative value not at all.
	Spin time.Duration
	// Oversubscribed says the node runs more ranks than it has cores:
	// waiting then yields the core to other processes (sched_yield).
	Oversubscribed bool
	Handler        transport.Handler
	// Eager, if set, takes the plain eager frames of the fast boxes (see
	// engine.DeliverEager) instead of Handler: no Frame is built for them.
	Eager func(h *wire.Header, from int, payload []byte) error
	// EagerRun, if set, takes the fast boxes' frames a run at a time
	// instead of Eager: hs[i] with the payload ps[i], in order, all from
	// one sender (see engine.DeliverEagerRun). It returns how many it
	// took: all of them, unless it also returns an error.
	EagerRun func(from int, hs []wire.Header, ps [][]byte) (int, error)
	// Place may give the destination of a payload (see tcp.Config.Place).
	Place func(h *wire.Header, from, n int) []byte
	// OnPeerError is told when a peer's process is gone or sent garbage.
	OnPeerError func(peer int, err error)
}

// DefaultRingSize is the ring capacity for n local ranks: 4 MiB per pair
// up to 4 ranks, where a node's rings take at most 48 MiB of shared memory
// (a container's /dev/shm is 64 MiB unless raised, and touching a page a
// full tmpfs cannot give kills the process); beyond, 1 MiB per pair up to
// 16 ranks, shrinking so that a node's rings stay within 256 MiB, and
// never below 64 KiB. Rings are touched only as they are used. A ring of 4
// MiB holds 16 eager messages of 256 KiB in flight, where one of 1 MiB
// holds 4: 256 KiB bandwidth rose from 15-19 to 23-28 GB/s
// (docs/performance.md, "Rings of 4 MiB").
func DefaultRingSize(n int) int {
	if n*(n-1)*(4<<20) <= 48<<20 {
		return 4 << 20
	}
	c := 1 << 20
	for c > 64<<10 && n*n*c > 256<<20 {
		c >>= 1
	}
	return c
}

// DefaultDir is where inboxes live when Config.Dir (or the dir argument
// of Name, RemoveJob, RemoveStale) is empty: /dev/shm on Linux and the
// temporary folder (os.TempDir) on macOS and FreeBSD. The package reads no
// environment: MPIGO_SHM_DIR reaches it as Config.Dir, from package mpi's
// config.go (and mpigo's own read, for its cleanup).
func DefaultDir() string { return defaultDir() }

// Name is the file of rank's inbox in job jobID.
func Name(dir string, jobID uint64, rank int) string {
	if dir == "" {
		dir = DefaultDir()
	}
	return filepath.Join(dir, "mpigo-"+strconv.FormatUint(jobID, 10)+"-"+strconv.Itoa(rank))
}

// WakeName is the name of the wake-up pipe beside the inbox named inbox
// (see wake_linux.go). Like the inbox, it is linked only while the job
// starts.
func WakeName(inbox string) string { return inbox + ".wake" }

// RemoveJob deletes whatever inboxes of job jobID are left in dir (a launcher
// calls it when the job ends, in case a rank died before unlinking its
// own). It returns how many it removed.
func RemoveJob(dir string, jobID uint64) int {
	if dir == "" {
		dir = DefaultDir()
	}
	names, _ := filepath.Glob(filepath.Join(dir, "mpigo-"+strconv.FormatUint(jobID, 10)+"-*"))
	n := 0
	for _, f := range names {
		if os.Remove(f) == nil {
			n++
		}
	}
	return n
}

// RemoveStale deletes the inboxes in dir (default DefaultDir()) that the
// jobs of dead processes left: a file of this user named like an inbox,
// older than minAge, whose creator (recorded in its control page) is gone,
// or that never got as far as recording it. Every process of a job may be
// killed at once while its inboxes are still linked (between New and
// Ready); the next launcher on the node removes them. It returns how many
// it removed.
//
// A creator in another PID namespace that shares this /dev/shm looks dead
// here: minAge (a minute for the launcher) keeps such a job's inboxes
// while it starts up, which is the only time they are linked.
func RemoveStale(dir string, minAge time.Duration) int {
	if dir == "" {
		dir = DefaultDir()
	}
	names, _ := filepath.Glob(filepath.Join(dir, "mpigo-*-*"))
	n := 0
	for _, name := range names {
		job, rank, ok := strings.Cut(strings.TrimPrefix(filepath.Base(name), "mpigo-"), "-")
		if _, err := strconv.ParseUint(job, 10, 64); err != nil || !ok {
			continue
		}
		if inbox, ok := strings.CutSuffix(name, ".wake"); ok {
			// A wake-up pipe goes with its inbox: when the inbox is gone
			// (removed just above: the names come sorted), so is it.
			st, err := os.Lstat(name)
			if _, ierr := os.Lstat(inbox); err == nil && st.Mode()&os.ModeNamedPipe != 0 && ownedByMe(st) &&
				time.Since(st.ModTime()) >= minAge && errors.Is(ierr, os.ErrNotExist) && os.Remove(name) == nil {
				n++
			}
			continue
		}
		if _, err := strconv.Atoi(rank); err != nil {
			continue
		}
		st, err := os.Lstat(name)
		if err != nil || !st.Mode().IsRegular() || !ownedByMe(st) || time.Since(st.ModTime()) < minAge {
			continue
		}
		var ctl [offPid + 8]byte
		f, err := os.Open(name)
		if err != nil {
			continue
		}
		k, _ := io.ReadFull(f, ctl[:])
		f.Close()
		pid := 0
		if k == len(ctl) && string(ctl[:len(magic)]) == magic {
			pid = int(binary.LittleEndian.Uint64(ctl[offPid:]))
		} else if k >= len(magic) && string(ctl[:len(magic)]) != magic && !allZero(ctl[:k]) {
			continue // not an inbox of ours
		}
		if pid != 0 && alive(pid) {
			continue
		}
		if os.Remove(name) == nil {
			n++
		}
	}
	return n
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// Transport is one rank's shared-memory endpoint.
type Transport struct {
	cfg      Config
	slotOf   []int32 // world rank -> index in Locals, or -1
	me       int     // my index in Locals
	name     string
	mem      []byte
	ringSize int
	sleeping *atomic.Uint32
	wakeR    *os.File // the wake-up pipe the poller sleeps on; nil: the futex
	wakeBuf  [64]byte
	waitSeen atomic.Uint32 // a goroutine polled in Wait since the poller last looked (see markWait)
	napWake  chan struct{} // cuts the poller's nap short (see endWait)
	busy     atomic.Bool   // someone is consuming the rings
	peers    []*peer       // by slot; nil for me
	readers  []reader      // by slot
	pid      int

	closed  atomic.Bool
	started bool
	done    chan struct{}
	once    sync.Once
}

type peer struct {
	t        *Transport
	rank     int
	mu       sync.Mutex
	mem      []byte
	w        writer
	sleeping *atomic.Uint32
	wakeFd   int // the peer's wake-up pipe, or -1: wake its futex
	pid      int
	cma      bool
	dead     atomic.Bool
	box      box
	bpos     uint64 // fast-box frames written
	bhead    uint64 // fast-box frames consumed, as last read
	// heard is how many box frames from the peer this rank had consumed
	// (reply, the head of the peer's box in this rank's inbox) at the
	// last frame sent to it: unchanged, this rank streams (ahead).
	reply *atomic.Uint64
	heard uint64
	dirty bool // the ring may hold frames not yet consumed
	hb    [wire.HeaderSize]byte
}

// New creates and maps this rank's inbox.
func New(cfg Config) (*Transport, error) {
	if ok, why := Available(); !ok {
		return nil, errors.New("shm: " + why)
	}
	t := &Transport{cfg: cfg, slotOf: make([]int32, cfg.Size), me: -1, pid: os.Getpid(), done: make(chan struct{}),
		napWake: make(chan struct{}, 1)}
	for i := range t.slotOf {
		t.slotOf[i] = -1
	}
	for i, r := range cfg.Locals {
		if r < 0 || r >= cfg.Size || (i > 0 && r <= cfg.Locals[i-1]) {
			return nil, fmt.Errorf("shm: bad list of local ranks %v", cfg.Locals)
		}
		t.slotOf[r] = int32(i)
		if r == cfg.Rank {
			t.me = i
		}
	}
	if t.me < 0 {
		return nil, fmt.Errorf("shm: rank %d is not among the local ranks %v", cfg.Rank, cfg.Locals)
	}
	n := len(cfg.Locals)
	t.ringSize = cfg.RingSize
	if t.ringSize == 0 {
		t.ringSize = DefaultRingSize(n)
	}
	if t.ringSize < 4096 || t.ringSize&(t.ringSize-1) != 0 {
		return nil, fmt.Errorf("shm: ring size %d is not a power of two of at least 4096", t.ringSize)
	}
	if offFlags+n > ctlSize {
		return nil, fmt.Errorf("shm: %d local ranks are more than one inbox serves (%d)", n, ctlSize-offFlags)
	}
	size := ctlSize + n*slotBytes(t.ringSize)
	t.name = Name(cfg.Dir, cfg.JobID, cfg.Rank)
	f, err := os.OpenFile(t.name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, fmt.Errorf("shm: rank %d: creating its inbox: %w", cfg.Rank, err)
	}
	defer f.Close()
	if err := f.Truncate(int64(size)); err != nil {
		os.Remove(t.name)
		return nil, fmt.Errorf("shm: rank %d: sizing its inbox (%d bytes): %w", cfg.Rank, size, err)
	}
	if t.mem, err = mapFile(f, size); err != nil {
		os.Remove(t.name)
		return nil, fmt.Errorf("shm: rank %d: mapping its inbox: %w", cfg.Rank, err)
	}
	copy(t.mem, magic)
	le := binary.LittleEndian
	le.PutUint32(t.mem[offVersion:], version)
	le.PutUint32(t.mem[offSlots:], uint32(n))
	le.PutUint64(t.mem[offRing:], uint64(t.ringSize))
	le.PutUint64(t.mem[offPid:], uint64(t.pid))
	le.PutUint64(t.mem[offProbe:], uint64(uintptr(unsafe.Pointer(&t.mem[0]))))
	copy(t.mem[offLayout:], archLayout[:])
	t.sleeping = (*atomic.Uint32)(unsafe.Pointer(&t.mem[offSleeping]))
	if t.wakeR, err = makeWakePipe(WakeName(t.name)); err == nil {
		le.PutUint32(t.mem[offWake:], 1)
	}
	t.readers = make([]reader, n)
	for i := range t.readers {
		off := ctlSize + i*slotBytes(t.ringSize)
		t.readers[i] = reader{box: newBox(t.mem[off:], boxHeadAt(t.mem[off+boxBytes:])), ring: newRing(t.mem[off+boxBytes:], t.ringSize), from: cfg.Locals[i], self: cfg.Rank}
	}
	return t, nil
}

// Attach maps every local peer's inbox and records, in this rank's inbox,
// towards which peers cross-memory attach works. Every local rank must
// have called New before.
func (t *Transport) Attach() error {
	t.peers = make([]*peer, len(t.cfg.Locals))
	le := binary.LittleEndian
	for i, r := range t.cfg.Locals {
		if i == t.me {
			continue
		}
		name := Name(t.cfg.Dir, t.cfg.JobID, r)
		f, err := os.OpenFile(name, os.O_RDWR, 0)
		if err != nil {
			return fmt.Errorf("shm: rank %d: opening the inbox of rank %d: %w", t.cfg.Rank, r, err)
		}
		st, err := f.Stat()
		if err == nil && st.Size() < ctlSize {
			err = fmt.Errorf("it is %d bytes", st.Size())
		}
		var mem []byte
		if err == nil {
			mem, err = mapFile(f, int(st.Size()))
		}
		f.Close()
		if err != nil {
			return fmt.Errorf("shm: rank %d: mapping the inbox of rank %d: %w", t.cfg.Rank, r, err)
		}
		if string(mem[:len(magic)]) != magic || le.Uint32(mem[offVersion:]) != version ||
			int(le.Uint32(mem[offSlots:])) != len(t.cfg.Locals) || int(le.Uint64(mem[offRing:])) != t.ringSize {
			return fmt.Errorf("shm: rank %d: the inbox of rank %d does not match this job's layout", t.cfg.Rank, r)
		}
		if [len(archLayout)]byte(mem[offLayout:offLayout+len(archLayout)]) != archLayout {
			theirs := describeLayout(mem[offLayout : offLayout+len(archLayout)])
			unmap(mem)
			return fmt.Errorf("shm: rank %d: rank %d on the same node runs on a machine of another memory layout (%s; this rank: %s): "+
				"processes of different architectures cannot share memory; run the job with MPIGO_TRANSPORT=tcp",
				t.cfg.Rank, r, theirs, describeLayout(archLayout[:]))
		}
		p := &peer{t: t, rank: r, mem: mem, pid: int(le.Uint64(mem[offPid:])),
			sleeping: (*atomic.Uint32)(unsafe.Pointer(&mem[offSleeping])), wakeFd: -1}
		if le.Uint32(mem[offWake:]) == 1 {
			if p.wakeFd, err = openWakePipe(WakeName(name)); err != nil {
				unmap(mem)
				return fmt.Errorf("shm: rank %d: opening the wake-up pipe of rank %d: %w", t.cfg.Rank, r, err)
			}
		}
		off := ctlSize + t.me*slotBytes(t.ringSize)
		p.box = newBox(mem[off:], boxHeadAt(mem[off+boxBytes:]))
		p.w = writer{ring: newRing(mem[off+boxBytes:], t.ringSize)}
		p.w.pos = p.w.ring.tail.Load()
		p.w.seenHead = p.w.ring.head.Load()
		p.reply = t.readers[i].box.head
		t.peers[i] = p
		if !t.cfg.NoCMA {
			var probe [len(magic)]byte
			if Fetch(uint64(p.pid), le.Uint64(mem[offProbe:]), probe[:]) == nil && string(probe[:]) == magic {
				t.mem[offFlags+i] = 1
			}
		}
	}
	return nil
}

// Ready unlinks this rank's inbox, learns from each peer whether it may
// read this rank's memory, and starts delivering. Every local rank must
// have called Attach before.
func (t *Transport) Ready() {
	os.Remove(t.name)
	os.Remove(WakeName(t.name))
	for _, p := range t.peers {
		if p != nil {
			p.cma = t.peerReads(p)
		}
	}
	t.started = true
	go t.poll()
}

// Abandon removes this rank's inbox file if it still exists: for a start-up
// that failed before Ready.
func (t *Transport) Abandon() {
	os.Remove(t.name)
	os.Remove(WakeName(t.name))
}

// RingSize returns the capacity of each of this transport's rings, in
// bytes.
func (t *Transport) RingSize() int { return t.ringSize }

// EagerRoom is the largest message worth sending eagerly through the rings:
// half a ring (transport.EagerSender).
func (t *Transport) EagerRoom() int { return t.ringSize / 2 }

// Name says what this transport is, for mpigo info and error messages.
func (t *Transport) Name() string { return "shm" }

// ExportRegion returns the token by which peer may read b in place (by
// cross-memory attach): b's address in this process. It reports false if
// peer cannot read this rank's memory (transport.RegionReader).
func (t *Transport) ExportRegion(peer int, b []byte) (uint64, bool) {
	p := t.peer(peer)
	if p == nil || !p.cma || len(b) == 0 {
		return 0, false
	}
	return uint64(uintptr(unsafe.Pointer(&b[0]))), true
}

// Exports reports whether peer can read this rank's memory by
// cross-memory attach (transport.RegionReader). Each rank tries reading
// each peer when it attaches and writes down what it could; the answer
// for peer is there once every rank of the node has attached.
func (t *Transport) Exports(peer int) bool {
	p := t.peer(peer)
	return p != nil && t.peerReads(p)
}

// peerReads reports whether p wrote down, when it attached, that it can
// read this rank's memory.
func (t *Transport) peerReads(p *peer) bool {
	return !t.cfg.NoCMA && p.mem[offFlags+t.me] == 1
}

// ReadRegion copies len(dst) bytes at offset off of the region peer
// exported as token into dst, by cross-memory attach from peer's process
// (transport.RegionReader). The process is the one this transport knows
// for peer, whatever the token says.
func (t *Transport) ReadRegion(peer int, token uint64, off int, dst []byte) error {
	p := t.peer(peer)
	if p == nil {
		return fmt.Errorf("shm: rank %d is not a local peer of rank %d", peer, t.cfg.Rank)
	}
	if p.dead.Load() || t.closed.Load() {
		return fmt.Errorf("shm: rank %d (process %d) is gone", p.rank, p.pid)
	}
	if off < 0 {
		return fmt.Errorf("shm: read at offset %d of a region of rank %d", off, peer)
	}
	return Fetch(uint64(p.pid), token+uint64(off), dst)
}

// CMA reports whether any peer copies from this rank by cross-memory
// attach.
func (t *Transport) CMA() bool {
	for _, p := range t.peers {
		if p != nil && p.cma {
			return true
		}
	}
	return false
}

func (t *Transport) peer(rank int) *peer {
	if rank < 0 || rank >= len(t.slotOf) {
		return nil
	}
	s := t.slotOf[rank]
	if s < 0 || t.peers == nil {
		return nil
	}
	return t.peers[s]
}

// ErrClosed is returned by Send after Close.
var ErrClosed = errors.New("shm: transport closed")

// Send copies f into the receiver's ring. It blocks while the ring is full.
func (t *Transport) Send(f wire.Frame) error {
	p := t.peer(f.To)
	if p == nil {
		return fmt.Errorf("shm: rank %d is not a local peer of rank %d", f.To, t.cfg.Rank)
	}
	if len(f.Payload) > wire.MaxPayload {
		return fmt.Errorf("shm: frame payload of %d bytes exceeds %d", len(f.Payload), wire.MaxPayload)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.usable(); err != nil {
		return err
	}
	if p.putBox(&f) {
		return nil
	}
	p.dirty = true
	f.Header.Marshal(p.hb[:], len(f.Payload))
	return p.w.writeFrame(p.hb[:], f.Payload, p)
}

// TrySend sends f if it can do so at once: its peer's lock is free and the
// frame fits in the box or in the ring's free room (transport.TrySender).
// Otherwise it sends nothing and reports false.
func (t *Transport) TrySend(f wire.Frame) bool {
	p := t.peer(f.To)
	if p == nil || len(f.Payload) > wire.MaxPayload || !p.mu.TryLock() {
		return false
	}
	defer p.mu.Unlock()
	if p.usable() != nil {
		return false
	}
	if p.putBox(&f) {
		return true
	}
	f.Header.Marshal(p.hb[:], len(f.Payload))
	if !p.w.tryWriteFrame(p.hb[:], f.Payload, p) {
		return false
	}
	p.dirty = true
	return true
}

// SendEager sends an eager message that needs no answer, given by its
// parts: Send(Frame{Kind: Eager, ...}) without building the frame or
// calling through an interface (transport.EagerSender). It is the
// runtime's path for small blocking sends, and for small non-blocking
// ones (with a sendID), to a peer on the node.
func (t *Transport) SendEager(to int, ctx uint32, src, tag int32, sig, sendID uint64, payload []byte) error {
	p := t.peer(to)
	if p == nil || len(payload) > wire.MaxPayload {
		return t.Send(wire.Frame{Header: wire.Header{Kind: wire.Eager, Context: ctx, Src: src, Tag: tag, Size: int64(len(payload)), Sig: sig, SendID: sendID},
			From: t.cfg.Rank, To: to, Payload: payload})
	}
	k := cellsFor(len(payload), sendID != 0)
	p.mu.Lock()
	if err := p.usable(); err != nil {
		p.mu.Unlock()
		return err
	}
	if k > 0 && p.boxRoom(k) {
		p.box.putParts(p.bpos, wire.Eager, 0, ctx, src, tag, sig, sendID, payload)
		p.bpos += uint64(k)
		p.ahead()
		p.wake()
		p.mu.Unlock()
		return nil
	}
	err := p.sendRing(ctx, src, tag, sig, sendID, payload)
	p.mu.Unlock()
	return err
}

// sendRing writes an eager frame into p's ring. p.mu is held.
func (p *peer) sendRing(ctx uint32, src, tag int32, sig, sendID uint64, payload []byte) error {
	p.dirty = true
	h := wire.Header{Kind: wire.Eager, Context: ctx, Src: src, Tag: tag, Size: int64(len(payload)), Sig: sig, SendID: sendID}
	h.Marshal(p.hb[:], len(payload))
	return p.w.writeFrame(p.hb[:], payload, p)
}

// usable reports why frames can no longer go to p, if they cannot. p.mu is
// held.
func (p *peer) usable() error {
	if p.t.closed.Load() {
		return ErrClosed
	}
	if p.dead.Load() {
		return fmt.Errorf("shm: rank %d (process %d) is gone", p.rank, p.pid)
	}
	return nil
}

// putBox puts f in p's box and wakes the peer if the box may take it now
// (fits, boxRoom), and reports whether it did. p.mu is held.
func (p *peer) putBox(f *wire.Frame) bool {
	k := fits(f)
	if k == 0 || !p.boxRoom(k) {
		return false
	}
	p.box.put(p.bpos, &f.Header, f.Payload)
	p.bpos += uint64(k)
	p.ahead()
	p.wake()
	return true
}

// ahead asks for the line of the box cell after next, for writing, when
// this rank streams frames to p: p has sent nothing through its box since
// this rank's last frame to it. Writing a cell otherwise waits for the
// line to come back from the receiver, which read it last, at the first
// locked instruction after the write (the seq's publication): a trip of
// the line per message. Asked early, the trip overlaps the work before
// the next frame (8-byte message rate up 40-60%, docs/performance.md,
// "Asking for the next cell early"). Not while the two ranks take turns
// (a ping-pong), where asking for it always made the 8-byte one-way
// latency 0.1 us longer. p.mu is held.
func (p *peer) ahead() {
	if h := p.reply.Load(); h != p.heard {
		p.heard = h
		return
	}
	hint.PrefetchWrite(unsafe.Pointer(&p.box.cell(p.bpos + 1)[0]))
}

// boxRoom reports whether the next frame, of k cells, may go in p's box:
// every frame put in the ring has been consumed (see box) and k cells are
// free. p.mu is held.
func (p *peer) boxRoom(k int) bool {
	if p.dirty {
		if p.w.ring.head.Load() != p.w.pos {
			return false
		}
		p.dirty = false
	}
	need := uint64(boxCells - k)
	if p.bpos-p.bhead > need {
		p.bhead = p.box.head.Load()
	}
	return p.bpos-p.bhead <= need
}

// wake wakes the peer's poller if it sleeps (see the package doc).
func (p *peer) wake() {
	if p.sleeping.Load() == 1 && p.sleeping.CompareAndSwap(1, 0) {
		if p.wakeFd >= 0 {
			wakePipe(p.wakeFd)
		} else {
			futexWake(p.sleeping)
		}
	}
}

// waitRoom waits for the receiver to free room in a full ring.
func (p *peer) waitRoom(spins int) error {
	if p.t.closed.Load() {
		return ErrClosed
	}
	if spins%1024 == 1023 && !alive(p.pid) {
		p.dead.Store(true)
		return fmt.Errorf("shm: rank %d (process %d) is gone", p.rank, p.pid)
	}
	// The receiver usually frees room within microseconds: yield rather
	// than sleep, since a timer sleep lasts far longer than asked (a
	// 20 us sleep cost streamed transfers 90% of their bandwidth).
	if spins < 8192 {
		// Also give the core to other processes: on a loaded node the
		// receiver may be waiting for this very core (measured with the
		// 2 cores shared with other work: 0.9 GB/s streamed at 4 MiB when
		// the wait yielded to goroutines only).
		runtime.Gosched()
		schedYield()
		return nil
	}
	time.Sleep(50 * time.Microsecond)
	return nil
}

// markWait tells the poller that a goroutine polls in Wait. A load, and a
// store only when the poller has cleared the mark since (once per nap): a
// counter of waiters, incremented and decremented around every wait, cost
// two locked instructions per message, about 5% of an 8-byte allreduce.
func (t *Transport) markWait() {
	if t.waitSeen.Load() == 0 {
		t.waitSeen.Store(1)
	}
}

// endWait tells the poller that a goroutine stops polling in Wait to
// park: the poller must deliver in its place from now on, not after its
// nap. (It did finish its nap first, once: a wait that outlasted the
// polling time then cost the nap's 20 us and the timer's lateness, which
// made the peer's next wait outlast it too, and a job could stay in that
// state for good, near 100 us per 8-byte allreduce.)
//
// Not on an oversubscribed node: there the nap gives the core to the
// other ranks, which is what the parked waiter waits for (cutting it short
// made 4 ranks on 2 cores 30% slower).
func (t *Transport) endWait() {
	t.waitSeen.Store(0)
	if t.cfg.Oversubscribed {
		return
	}
	select {
	case t.napWake <- struct{}{}:
	default:
	}
}

// poll is the delivering goroutine: it polls the rings, spins briefly when
// they are empty, then sleeps until a sender wakes it.
func (t *Transport) poll() {
	defer close(t.done)
	deliver := t.cfg.Handler
	spin := t.cfg.Spin
	if spin == 0 {
		spin = SpinTime
	}
	last := time.Now()
	checked := last
	sawWork := false
	nap := time.NewTimer(time.Hour)
	nap.Stop()
	for idle := 0; !t.closed.Load(); {
		if t.progress(deliver) {
			sawWork, idle = true, 0
			runtime.Gosched()
			continue
		}
		if t.waitSeen.Load() != 0 {
			// A goroutine of this process polls in Wait and delivers what
			// comes: stay out of its way. Each turn of this loop cost it a
			// yield (two on an oversubscribed node, where this loop also
			// called sched_yield). Forget the mark: a goroutine still
			// polling after the nap will have marked again.
			t.waitSeen.Store(0)
			nap.Reset(waiterNap)
			select {
			case <-t.napWake:
				nap.Stop()
			case <-nap.C:
			}
			now := time.Now()
			if now.Sub(checked) > SleepTime {
				checked = now
				t.checkPeers()
			}
			last, idle = now, 0
			continue
		}
		// Reading the clock costs more than a poll: look at it seldom.
		if idle++; idle&63 != 0 && spin > 0 {
			t.idle()
			continue
		}
		now := time.Now()
		if sawWork {
			last, sawWork = now, false
		}
		if now.Sub(checked) > SleepTime {
			checked = now
			t.checkPeers()
		}
		// While goroutines poll in Wait, a sleeping poller would only make
		// senders pay a futex wake for nothing.
		if now.Sub(last) < spin || t.waitSeen.Load() != 0 {
			t.idle()
			continue
		}
		t.sleeping.Store(1)
		if t.pending() {
			t.sleeping.Store(0)
			continue
		}
		if t.wakeR != nil {
			t.sleepOnPipe()
		} else {
			futexWait(t.sleeping, 1, SleepTime)
		}
		t.sleeping.Store(0)
		last = time.Now()
	}
}

// sleepOnPipe parks the poller until a sender writes to its wake-up pipe
// or SleepTime has passed, and drains what the pipe holds. A byte that a
// sender wrote after the poller had stopped sleeping only makes the next
// sleep return at once.
func (t *Transport) sleepOnPipe() {
	t.wakeR.SetReadDeadline(time.Now().Add(SleepTime))
	t.wakeR.Read(t.wakeBuf[:])
}

// idle yields to other goroutines, and to other processes on an
// oversubscribed node.
func (t *Transport) idle() {
	runtime.Gosched()
	if t.cfg.Oversubscribed {
		schedYield()
	}
}

// progress consumes what the rings hold unless another goroutine is
// already doing so, and reports whether it found anything.
func (t *Transport) progress(deliver func(f wire.Frame)) bool {
	// Look first, with plain loads: most polls find nothing, and taking
	// busy costs two locked instructions.
	if !t.hasWork() || !t.busy.CompareAndSwap(false, true) {
		return false
	}
	busy := false
	for i := range t.readers {
		if i == t.me {
			continue
		}
		p := t.peers[i]
		if p.dead.Load() {
			continue
		}
		rd := &t.readers[i]
		tail := rd.tail.Load()
		got, err := rd.drainBox(deliver, t.cfg.Eager, t.cfg.EagerRun)
		if err == nil {
			var more bool
			more, err = rd.pollTo(tail, deliver, t.cfg.Eager, t.cfg.Place, wire.MaxPayload)
			got = got || more
		}
		if err != nil {
			t.fail(p, fmt.Errorf("shm: garbage from rank %d: %w", p.rank, err))
		}
		busy = busy || got
	}
	t.busy.Store(false)
	return busy
}

// hasWork reports whether a live peer's box or ring seems to hold a frame.
func (t *Transport) hasWork() bool {
	for i := range t.readers {
		if i != t.me && t.readers[i].hasWork() && !t.peers[i].dead.Load() {
			return true
		}
	}
	return false
}

// pending reports whether some ring or box holds a frame not yet
// consumed; while another goroutine consumes them, it says yes.
func (t *Transport) pending() bool {
	if !t.busy.CompareAndSwap(false, true) {
		return true
	}
	defer t.busy.Store(false)
	for i := range t.readers {
		rd := &t.readers[i]
		if i != t.me && (rd.tail.Load() != rd.ring.head.Load() || rd.box.ready(rd.bpos)) {
			return true
		}
	}
	return false
}

// checkPeers reports peers whose process is gone, once each.
func (t *Transport) checkPeers() {
	for _, p := range t.peers {
		if p == nil || p.dead.Load() || alive(p.pid) {
			continue
		}
		// Take what it sent before it went.
		for t.progress(t.cfg.Handler) {
		}
		t.fail(p, fmt.Errorf("shm: rank %d (process %d) is gone", p.rank, p.pid))
	}
}

func (t *Transport) fail(p *peer, err error) {
	if p.dead.Swap(true) {
		return
	}
	if t.cfg.OnPeerError != nil {
		t.cfg.OnPeerError(p.rank, err)
	}
}

// Close stops the poller and unmaps the memory. It is safe to call more
// than once.
func (t *Transport) Close() error {
	t.once.Do(func() {
		t.closed.Store(true)
		if t.started {
			futexWake(t.sleeping)
			if t.wakeR != nil {
				t.wakeR.Write([]byte{1})
			}
			<-t.done
		}
		os.Remove(t.name)
		if t.wakeR != nil {
			os.Remove(WakeName(t.name))
			t.wakeR.Close()
		}
		for _, p := range t.peers {
			if p != nil {
				p.mu.Lock()
				unmap(p.mem)
				p.mem = nil
				if p.wakeFd >= 0 {
					closeWakePipe(p.wakeFd)
					p.wakeFd = -1
				}
				p.mu.Unlock()
			}
		}
		unmap(t.mem)
	})
	return nil
}

func errTooBig(n, limit int) error {
	return fmt.Errorf("frame payload of %d bytes exceeds the limit of %d", n, limit)
}
