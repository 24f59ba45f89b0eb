package mpi

// Sessions (MPI-4.1 chapter 11): a library's own way into MPI, without
// the world communicator. A session names the process sets the runtime
// knows; a group made from one becomes a communicator in a call that only
// the group's members make.
//
// Every communicator a session makes gets a context id agreed among its
// members alone, so its traffic is apart from world's and from every
// other session's. The members agree on the job's boot communicator (a
// context every rank reserves at start, bootCtxID, and no user
// communicator has), addressing each other by world rank, on a tag drawn
// from the string tag: concurrent creations with different string tags do
// not mix their messages. A first round checks that every member passed
// the same string tag and group; creations whose tags differ never meet,
// and the hang report ends them like every wait that cannot complete.

import (
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/mpigo/mpi/internal/boot"
	"github.com/mpigo/mpi/internal/engine"
)

// bootCtxID is the context id of each rank's boot communicator (the
// sessions' agreements), reserved on every rank by newWorld.
const bootCtxID = 2

// ErrSession is the class of calls on a session that is nil or finalized
// (MPI_ERR_SESSION).
var ErrSession = errors.New("invalid session")

// The process sets every session has (MPI-4.1 section 11.3.2), and the
// ones mpigo adds: its node's ranks and the job's MPMD groups.
const (
	// PsetWorld is every rank of the job (mpi://WORLD).
	PsetWorld = "mpi://WORLD"
	// PsetSelf is the calling rank alone (mpi://SELF).
	PsetSelf = "mpi://SELF"
	// PsetNode is the ranks on the caller's node (mpigo://node): the
	// processes a launcher placed on its host, all goroutine ranks of
	// Run (or its Config.RanksPerNode group of them).
	PsetNode = "mpigo://node"
	// PsetApp is the caller's MPMD group (mpigo://app): the ranks of the
	// program it belongs to in `mpigo run -n 4 a : -n 2 b`, the whole
	// job otherwise. Each group i is also mpigo://app/<i>.
	PsetApp = "mpigo://app"
)

// Session is an MPI session (MPI_Session): a handle on the process sets
// the runtime knows and the error handler of calls that have no
// communicator yet. Sessions are independent of each other and of the
// world communicator; a rank may hold several at once. A Session is safe
// for use by many goroutines.
type Session struct {
	p     *proc
	info  *Info
	errh  atomic.Pointer[ErrHandler]
	freed atomic.Bool
	// buf is the session's buffer for buffered sends
	// (Session.AttachBuffer).
	buf engine.BsendBuffer
	// owned: the session holds a reference on the rank SessionInit
	// started for this process (initState), which it drops at Finalize.
	owned bool
}

// SessionInit starts a session of this process's rank
// (MPI_Session_init). It is for programs that are one rank per process:
// C programs, programs that call Init, or Main's function when the
// launcher started one rank per process. If no rank runs in this process
// yet, SessionInit joins the job as Init would (a singleton without a
// launcher) without starting the world model: Init may still be called,
// before or after. A rank started this way lives until Finalize after
// Init, or, in a program that never calls Init, until FinalizeSessions
// after its last session's Finalize (the C ABI calls it at exit), so
// sessions may be started and finalized again and again on it; a
// process that exits without either leaves the job in the middle, and
// the launcher reports it. Goroutine ranks (Run, or several
// ranks per process) share the process: they start their sessions with
// Comm.SessionInit, which says whose.
//
// info is copied and given back by Session.Info; errh is the session's
// error handler (nil: ErrorsReturn): ErrorsReturn, ErrorsAreFatal or one
// from NewSessionErrHandler.
func SessionInit(info *Info, errh *ErrHandler) (_ *Session, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("SessionInit", nil, Undefined, Undefined), &err)
	}
	const op = "SessionInit"
	if err := checkSessionErrh(op, errh); err != nil {
		return nil, err
	}
	s := &initState
	s.Lock()
	defer s.Unlock()
	var p *proc
	owned := false
	mainRanks.Lock()
	hosted := slices.Clone(mainRanks.procs)
	mainRanks.Unlock()
	switch {
	case s.started && !s.ended:
		p, owned = s.world.p, true
	case len(hosted) == 1:
		p = hosted[0]
	case len(hosted) > 1:
		return nil, sessionErr(nil, op, ErrOther, "this process hosts %d ranks: start a session of one of them with its world's SessionInit", len(hosted))
	case s.ended:
		return nil, sessionErr(nil, op, ErrOther, "MPI was finalized in this process and cannot start again")
	default:
		if err := s.start(op); err != nil {
			return nil, err
		}
		p, owned = s.world.p, true
	}
	if owned {
		s.sessions++
	}
	return newSession(p, info, errh, owned), nil
}

// SessionInit starts a session of the rank that holds c
// (MPI_Session_init for goroutine ranks, which share their process). It
// does not communicate on c, which only names the rank: any communicator
// of the rank will do, its world included.
func (c *Comm) SessionInit(info *Info, errh *ErrHandler) (_ *Session, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.SessionInit", c, Undefined, Undefined), &err)
	}
	const op = "SessionInit"
	if err := c.check(op); err != nil {
		return nil, err
	}
	if err := checkSessionErrh(op, errh); err != nil {
		return nil, err
	}
	return newSession(c.p, info, errh, false), nil
}

func newSession(p *proc, info *Info, errh *ErrHandler, owned bool) *Session {
	s := &Session{p: p, owned: owned}
	if info != nil {
		s.info = info.Dup()
	} else {
		s.info = NewInfo()
	}
	if errh != nil {
		s.errh.Store(errh)
	}
	return s
}

// checkSessionErrh refuses an error handler made for communicators as a
// session's (the standard requires one made for sessions, or a
// predefined one).
func checkSessionErrh(op string, h *ErrHandler) error {
	if h != nil && h.fn != nil {
		return sessionErr(nil, op, ErrArg, "the error handler was made for communicators (NewErrHandler): a session's comes from NewSessionErrHandler")
	}
	return nil
}

// NewSessionErrHandler returns an error handler for sessions
// (MPI_Session_create_errhandler): fn is called with the session and the
// error of a failed call on it, which then returns the error as usual.
func NewSessionErrHandler(fn func(s *Session, err error)) *ErrHandler {
	return &ErrHandler{sfn: fn}
}

// sessionErr builds the error of call op on s.
func sessionErr(s *Session, op string, class error, format string, args ...any) error {
	e := &Error{Class: class, Op: op, Rank: NoRank, Msg: fmt.Sprintf(format, args...)}
	if s != nil && s.p != nil {
		e.Rank = s.p.Rank
	}
	return e
}

// fail passes the error of call op through s's error handler.
func (s *Session) fail(op string, class error, format string, args ...any) error {
	return s.handle(sessionErr(s, op, class, format, args...))
}

// handle passes a failed call's error through s's error handler.
func (s *Session) handle(err error) error {
	if err == nil || s == nil {
		return err
	}
	h := s.errh.Load()
	if h == nil || h == ErrorsReturn {
		return err
	}
	if h.sfn != nil {
		h.sfn(s, err)
	}
	if h.fatal {
		s.p.job.abort(s.p.Rank, 1, fmt.Errorf("error handler ErrorsAreFatal: %w", err))
	}
	return err
}

// check validates s for call op.
func (s *Session) check(op string) error {
	if s == nil || s.p == nil {
		return sessionErr(nil, op, ErrSession, "nil session")
	}
	if s.freed.Load() {
		return sessionErr(s, op, ErrSession, "the session was finalized")
	}
	return nil
}

// Finalize ends the session (MPI_Session_finalize). Communicators made
// from it stay usable until freed, as the standard leaves them to the
// program. A second Finalize is an error of class ErrSession. The last
// session of a rank that SessionInit started, after Init's world was
// finalized, ends the rank as Finalize does.
func (s *Session) Finalize() (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Session.Finalize", nil, Undefined, Undefined), &err)
	}
	const op = "Session.Finalize"
	if err := s.check(op); err != nil {
		return err
	}
	if !s.freed.CompareAndSwap(false, true) {
		return sessionErr(s, op, ErrSession, "the session was finalized")
	}
	if !s.owned {
		return nil
	}
	st := &initState
	st.Lock()
	defer st.Unlock()
	st.sessions--
	if st.sessions == 0 && st.phase == 2 {
		return st.end()
	}
	return nil
}

// SetErrHandler sets the session's error handler
// (MPI_Session_set_errhandler): ErrorsReturn, ErrorsAreFatal or one made
// by NewSessionErrHandler.
func (s *Session) SetErrHandler(h *ErrHandler) (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Session.SetErrHandler", nil, Undefined, Undefined), &err)
	}
	const op = "Session.SetErrHandler"
	if err := s.check(op); err != nil {
		return err
	}
	if h == nil {
		return s.fail(op, ErrArg, "nil error handler")
	}
	if err := checkSessionErrh(op, h); err != nil {
		return s.handle(err)
	}
	s.errh.Store(h)
	return nil
}

// ErrHandler returns the session's error handler
// (MPI_Session_get_errhandler); nil and finalized sessions answer
// ErrorsReturn.
func (s *Session) ErrHandler() *ErrHandler {
	if s == nil {
		return ErrorsReturn
	}
	if h := s.errh.Load(); h != nil {
		return h
	}
	return ErrorsReturn
}

// CallErrHandler passes e through the session's error handler, as a
// failed call on it would (MPI_Session_call_errhandler), and returns it.
func (s *Session) CallErrHandler(e error) (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Session.CallErrHandler", nil, Undefined, Undefined), &err)
	}
	if err := s.check("Session.CallErrHandler"); err != nil {
		return err
	}
	return s.handle(e)
}

// Info returns a copy of the hints the session was started with
// (MPI_Session_get_info), plus "thread_level", which is always
// MPI_THREAD_MULTIPLE. A nil or finalized session gives nil.
func (s *Session) Info() *Info {
	if s.check("Session.Info") != nil {
		return nil
	}
	in := s.info.Dup()
	in.Set("thread_level", "MPI_THREAD_MULTIPLE")
	return in
}

// psets returns the names of the process sets s knows, and the world
// ranks of each.
func (s *Session) psets() ([]string, [][]int) {
	p := s.p
	all := make([]int, p.Size)
	for i := range all {
		all[i] = i
	}
	names := []string{PsetWorld, PsetSelf, PsetNode, PsetApp}
	node := p.nodeRanks
	if len(node) == 0 {
		node = []int{p.Rank}
	}
	apps := p.job.apps
	if len(apps) == 0 {
		apps = []int{p.Size}
	}
	var mine []int
	var appRanks [][]int
	lo := 0
	for _, n := range apps {
		rs := make([]int, n)
		for i := range rs {
			rs[i] = lo + i
		}
		if p.Rank >= lo && p.Rank < lo+n {
			mine = rs
		}
		appRanks = append(appRanks, rs)
		lo += n
	}
	members := [][]int{all, {p.Rank}, node, mine}
	for i, rs := range appRanks {
		names = append(names, PsetApp+"/"+strconv.Itoa(i))
		members = append(members, rs)
	}
	return names, members
}

// pset returns the world ranks of the process set name.
func (s *Session) pset(name string) ([]int, bool) {
	names, members := s.psets()
	for i, n := range names {
		// The mpi:// names are case-insensitive (MPI-4.1 section 11.3.2).
		if n == name || (strings.HasPrefix(n, "mpi://") && strings.EqualFold(n, name)) {
			return members[i], true
		}
	}
	return nil, false
}

// NumPsets returns the number of process sets the session knows
// (MPI_Session_get_num_psets); 0 on a nil or finalized session.
func (s *Session) NumPsets() int {
	if s.check("Session.NumPsets") != nil {
		return 0
	}
	names, _ := s.psets()
	return len(names)
}

// PsetName returns the name of the n-th process set, from 0
// (MPI_Session_get_nth_pset). Sets 0 and 1 are mpi://WORLD and
// mpi://SELF.
func (s *Session) PsetName(n int) (_ string, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Session.PsetName", nil, Undefined, Undefined), &err)
	}
	const op = "Session.PsetName"
	if err := s.check(op); err != nil {
		return "", err
	}
	names, _ := s.psets()
	if n < 0 || n >= len(names) {
		return "", s.fail(op, ErrArg, "process set %d: the session has %d (0 to %d)", n, len(names), len(names)-1)
	}
	return names[n], nil
}

// Psets returns the names of every process set the session knows, in
// PsetName's order.
func (s *Session) Psets() []string {
	if s.check("Session.Psets") != nil {
		return nil
	}
	names, _ := s.psets()
	return names
}

// PsetInfo returns what the session knows of a process set
// (MPI_Session_get_pset_info): "mpi_size", its number of ranks, and
// "mpigo_ranks", their world ranks as ranges (0-3,8). An unknown name is
// an error of class ErrArg.
func (s *Session) PsetInfo(name string) (_ *Info, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Session.PsetInfo", nil, Undefined, Undefined), &err)
	}
	const op = "Session.PsetInfo"
	if err := s.check(op); err != nil {
		return nil, err
	}
	rs, ok := s.pset(name)
	if !ok {
		return nil, s.fail(op, ErrArg, "no process set %q (the session has %s)", name, strings.Join(s.Psets(), ", "))
	}
	in := NewInfo()
	in.Set("mpi_size", strconv.Itoa(len(rs)))
	in.Set("mpigo_ranks", boot.FormatRanks(rs))
	return in, nil
}

// GroupFromPset returns the group of the ranks of a process set
// (MPI_Group_from_session_pset), ordered by world rank. An unknown name
// is an error of class ErrArg.
func (s *Session) GroupFromPset(name string) (_ *Group, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Session.GroupFromPset", nil, Undefined, Undefined), &err)
	}
	const op = "Session.GroupFromPset"
	if err := s.check(op); err != nil {
		return nil, err
	}
	rs, ok := s.pset(name)
	if !ok {
		return nil, s.fail(op, ErrArg, "no process set %q (the session has %s)", name, strings.Join(s.Psets(), ", "))
	}
	g := newGroup(slices.Clone(rs), s.p.Rank)
	g.p, g.sess = s.p, s
	return g, nil
}

// bootComm returns p's boot communicator: every rank of the job, by
// world rank, on bootCtxID.
func (p *proc) bootComm() *Comm {
	p.bootOnce.Do(func() {
		g := make([]int, p.Size)
		for i := range g {
			g[i] = i
		}
		p.boot = newComm(p, 2*bootCtxID, p.Rank, g, "SESSIONS")
	})
	return p.boot
}

// stringTag gives the tag of a string tag on the boot communicator:
// the string's hash, marked as CreateGroup's tags are.
func stringTag(tag string) int {
	h := fnv.New32a()
	h.Write([]byte(tag))
	return groupTagBit | int(h.Sum32()&TagUB)
}

// sameRecord is the record of the check round: a hash of what the member
// passed and its complement, which ANDed over the members equal the
// member's own only if every member passed the same.
func sameRecord(parts ...string) []byte {
	h := fnv.New64a()
	for _, s := range parts {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	v := h.Sum64()
	return append(encodeRanks([]int{int(v)}), encodeRanks([]int{int(^v)})...)
}

// andBytesCombine ANDs in into acc.
func andBytesCombine(acc, in []byte, _ bool) ([]byte, error) {
	if len(acc) != len(in) {
		return nil, fmt.Errorf("check records of %d and %d bytes", len(acc), len(in))
	}
	for i := range acc {
		acc[i] &= in[i]
	}
	return acc, nil
}

// groupKey describes a group's members for the check round.
func groupKey(ranks []int) string {
	var b strings.Builder
	for _, r := range ranks {
		b.WriteString(strconv.Itoa(r))
		b.WriteByte(',')
	}
	return b.String()
}

// fromGroupArgs checks what CommCreateFromGroup and
// IntercommCreateFromGroups share: a group owned by a rank that is in it,
// and a communicator's error handler.
func fromGroupArgs(op string, g *Group, errh *ErrHandler) (*proc, int, error) {
	if err := g.check(op); err != nil {
		return nil, 0, err
	}
	if g.p == nil {
		return nil, 0, g.errorf(op, ErrGroup, "the group belongs to no rank: make it with Session.GroupFromPset or from a communicator's group")
	}
	r, ok := g.index[g.p.Rank]
	if !ok {
		return nil, 0, g.errorf(op, ErrGroup, "the caller (world rank %d) is not a member of the group", g.p.Rank)
	}
	if errh != nil && errh.sfn != nil {
		return nil, 0, g.errorf(op, ErrArg, "the error handler was made for sessions: a communicator's comes from NewErrHandler")
	}
	return g.p, r, nil
}

// CommCreateFromGroup returns a communicator of the members of g, in g's
// order (MPI_Comm_create_from_group). It is collective over g's members
// only, which must pass the same group and tag; concurrent creations whose
// groups overlap must use different tags. g comes from a session's process
// set (or a communicator's group), and operations on groups keep it so.
// The new communicator's error handler is errh (nil: ErrorsReturn) and
// its hints a copy of info.
//
// An empty group (GroupEmpty, or one an operation on groups left empty)
// makes the call local: it returns a nil communicator (MPI_COMM_NULL) and
// no error, so a rank that a Group.Excl left out may still make the call.
//
// Members that pass different tags or groups fail with ErrArg where their
// messages meet; creations that never meet are ended by the hang report,
// as every wait that cannot complete is.
func CommCreateFromGroup(g *Group, tag string, info *Info, errh *ErrHandler) (_ *Comm, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("CommCreateFromGroup", nil, Undefined, Undefined), &err)
	}
	const op = "CommCreateFromGroup"
	if err := g.check(op); err != nil {
		return nil, err
	}
	if g.Size() == 0 {
		// MPI-4.1 section 7.4.2: with MPI_GROUP_EMPTY the call is local
		// and gives MPI_COMM_NULL.
		if errh != nil && errh.sfn != nil {
			return nil, g.errorf(op, ErrArg, "the error handler was made for sessions: a communicator's comes from NewErrHandler")
		}
		return nil, nil
	}
	p, rank, err := fromGroupArgs(op, g, errh)
	if err != nil {
		return nil, err
	}
	bc := p.bootComm()
	cc := subComm{collComm{bc.shadow}, g.ranks, rank}
	t := stringTag(tag)
	ar := func(buf []byte, f func(acc, in []byte, _ bool) ([]byte, error)) ([]byte, error) {
		return tagAllreduce(cc, buf, f, t)
	}
	mine := sameRecord("comm", tag, groupKey(g.ranks))
	all, err := ar(slices.Clone(mine), andBytesCombine)
	if err != nil {
		return nil, bc.errorf(op, ErrOther, loc{}, "tag %q: %v", tag, err)
	}
	if !slices.Equal(all, mine) {
		return nil, bc.errorf(op, ErrArg, loc{}, "tag %q: the members passed different string tags or groups", tag)
	}
	id, err := p.agreeContext(func(buf []byte) ([]byte, error) { return ar(buf, agreeCombine) })
	if err != nil {
		return nil, bc.ctxFail(op, err)
	}
	c := newComm(p, id*2, rank, slices.Clone(g.ranks), "group:"+tag)
	c.sess = g.sess
	if errh != nil {
		c.errh.Store(errh)
	}
	if info != nil {
		c.info.Store(info.Dup())
	}
	return c, nil
}

// IntercommCreateFromGroups returns an intercommunicator between two
// disjoint groups (MPI_Intercomm_create_from_groups). It is collective
// over the members of both: each passes its own group as local, the
// leader of it (a rank of local), the other group as remote and the rank
// of that group's leader in it; every member passes the same tag. The
// new intercommunicator's error handler is errh and its hints a copy of
// info.
func IntercommCreateFromGroups(local *Group, localLeader int, remote *Group, remoteLeader int, tag string, info *Info, errh *ErrHandler) (_ *Comm, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("IntercommCreateFromGroups", nil, Undefined, Undefined), &err)
	}
	const op = "IntercommCreateFromGroups"
	p, rank, err := fromGroupArgs(op, local, errh)
	if err != nil {
		return nil, err
	}
	if err := remote.check(op); err != nil {
		return nil, err
	}
	if localLeader < 0 || localLeader >= len(local.ranks) {
		return nil, local.errorf(op, ErrRank, "local leader %d is not a rank of the local group (size %d)", localLeader, len(local.ranks))
	}
	if remoteLeader < 0 || remoteLeader >= len(remote.ranks) {
		return nil, local.errorf(op, ErrRank, "remote leader %d is not a rank of the remote group (size %d)", remoteLeader, len(remote.ranks))
	}
	for _, w := range remote.ranks {
		if _, in := local.index[w]; in {
			return nil, local.errorf(op, ErrGroup, "world rank %d is in both groups", w)
		}
	}
	// Both groups together agree, on the boot communicator, ordered by
	// world rank so that both sides see the same union.
	union := append(slices.Clone(local.ranks), remote.ranks...)
	slices.Sort(union)
	bc := p.bootComm()
	cc := subComm{collComm{bc.shadow}, union, slices.Index(union, p.Rank)}
	t := stringTag(tag)
	ar := func(buf []byte, f func(acc, in []byte, _ bool) ([]byte, error)) ([]byte, error) {
		return tagAllreduce(cc, buf, f, t)
	}
	// The check: both sides must describe the same pair of groups, each
	// naming its own first; sort the two descriptions so that they agree.
	lk := groupKey(local.ranks) + "@" + strconv.Itoa(local.ranks[localLeader])
	rk := groupKey(remote.ranks) + "@" + strconv.Itoa(remote.ranks[remoteLeader])
	if rk < lk {
		lk, rk = rk, lk
	}
	mine := sameRecord("inter", tag, lk, rk)
	all, err := ar(slices.Clone(mine), andBytesCombine)
	if err != nil {
		return nil, bc.errorf(op, ErrOther, loc{}, "tag %q: %v", tag, err)
	}
	if !slices.Equal(all, mine) {
		return nil, bc.errorf(op, ErrArg, loc{}, "tag %q: the members passed different string tags, groups or leaders", tag)
	}
	id, err := p.agreeContext(func(buf []byte) ([]byte, error) { return ar(buf, agreeCombine) })
	if err != nil {
		return nil, bc.ctxFail(op, err)
	}
	c := newInterComm(p, id, rank, slices.Clone(local.ranks), slices.Clone(remote.ranks), "inter:"+tag)
	c.sess = local.sess
	if errh != nil {
		c.errh.Store(errh)
	}
	if info != nil {
		c.info.Store(info.Dup())
	}
	return c, nil
}

// mainRanks are the ranks of launched jobs (Main, Init) running in this
// process, which SessionInit joins rather than starting another.
var mainRanks struct {
	sync.Mutex
	procs []*proc
}

// hostRanks registers ps as this process's launched ranks until the
// returned function is called.
func hostRanks(ps []*proc) func() {
	mainRanks.Lock()
	mainRanks.procs = append(mainRanks.procs, ps...)
	mainRanks.Unlock()
	return func() {
		mainRanks.Lock()
		mainRanks.procs = slices.DeleteFunc(mainRanks.procs, func(p *proc) bool { return slices.Contains(ps, p) })
		mainRanks.Unlock()
	}
}
