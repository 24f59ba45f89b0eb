package mpi

import (
	"errors"
	"reflect"
	"strconv"
	"sync"
	"unsafe"

	"github.com/mpigo/mpi/internal/coll"
	"github.com/mpigo/mpi/internal/datatype"
	"github.com/mpigo/mpi/internal/engine"
)

// This file carries type signatures through the typed collectives, as
// point-to-point messages carry them (p2p_typed.go).
//
// A typed collective runs its algorithm over a collCall instead of the
// plain collComm: every message it sends carries the signature of the
// caller's type (for the Slice forms, plus the number of elements), and
// every message it receives is compared with it. Receives are posted
// untyped, so a mismatch never fails a receive in the engine: the call
// records it and goes on, so that its partners, which wait for its
// messages, are not left hanging. From then on:
//
//   - a received message that disagrees counts as len(buf) bytes, however
//     long it was, so that the algorithm's steps line up as they would
//     have;
//   - Combine functions of the call do nothing (they would decode the
//     foreign bytes);
//   - every message this rank sends carries a poisoned signature (the two
//     signatures that disagreed XOR poisonKey), which disagrees with every
//     rank's own, so the ranks downstream of the mismatch learn of it too
//     rather than return a result built from garbage; a rank of either
//     type recovers the other type from it by XOR with its own.
//
// At the end the call's error is ErrType (ErrCount when only the lengths
// of the Slice forms differ) naming this rank's type and the other rank's
// and type, whatever the algorithm returned. A rank whose result does not
// depend on a mismatched rank's data (a broadcast's root, a gather's
// non-roots) returns correct data and no error.
//
// The cost on the hot path is a pooled object per call and a compare per
// received message: messages were already carrying a (zero) signature.

// poisonKey marks the signature of a message sent by a rank that has seen
// a mismatch.
const poisonKey = 0xa5c3_96e1_7d2b_4f08

// countSpan bounds the element counts a Slice form's signature can carry
// recognisably: sig = elemSig + count.
const countSpan = 1 << 40

// collCall is one typed collective call's view of the collective context.
// It is used by one goroutine at a time.
type collCall struct {
	c     *Comm     // shadow of the communicator the algorithm runs on now
	top   *Comm     // the caller's communicator
	sig   uint64    // what this rank's messages carry; 0: untyped
	t     *typeInfo // the caller's type
	count int       // elements passed (Slice forms); -1: not part of sig
	slice bool      // the caller passed a slice of t's elements
	// anyCount: the call accepts a slice of t's elements of any length
	// (the root of an intercommunicator's ReduceSlice, whose own v is
	// not used); sig is t's signature plus 0.
	anyCount bool

	bad    bool   // a mismatch was seen
	from   int    // world rank whose message disagreed
	their  uint64 // the signature it carried
	wanted uint64 // the signature this rank expected of it
	poison uint64 // what this rank's messages carry once bad

	// The low-level collectives (coll_bufsig.go): signatures of datatypes.
	low    bool     // sig is a datatype's signature (lowSig)
	mixed  bool     // sig folds in the call's counts (mixSig)
	sendTo []uint64 // per destination rank: what this rank sends it (nil: sig)
	recvOf []uint64 // per source rank: what this rank expects of it (nil: sig)
	local  string   // this rank's own arguments disagree (set before the call)
	lclass error    // the class of local

	// small is the receive buffer of a short vector's reduction
	// (allreduceFast), so that it needs no pooled one.
	small [64]byte
	// val holds a single value's contribution and result (Allreduce of
	// a plain T: allreduceValue), 8-byte aligned for the kernels.
	val [8]uint64
	// spare is a slot for Recv kept from one call to the next (done
	// keeps it): a collective on a communicator reuses its call, and
	// with it the slot, cheaper than the slot pool.
	spare *slot

	// mix is rootMix(root) of a rooted collective, folded into sig
	// (atRoot); 0 otherwise.
	mix  uint64
	root int
}

// Different roots (issue 40). A rooted collective (Bcast, Gather,
// Scatter, Reduce and their forms) folds its root into the signature its
// messages carry (atRoot), so that a message from a rank that passed
// another root disagrees with the receiver's signature, as a message of
// another type does: the receiver records it (saw), goes on without
// using its bytes, poisons what it sends on, and returns ErrRoot naming
// both roots (rootErr) instead of a result built from the other rank's
// view of the tree. It costs one multiply and XOR per call. It catches
// only what the algorithm's messages carry between ranks that disagree:
// a rank that believes itself the root of a Bcast or a Scatter receives
// nothing, and a rank whose partners in its view never send to it waits
// (the hang report ends it); check mode (--check, MPIGO_CHECK=1), which
// tells every rank its neighbour's call, catches every case.

// rootKey is odd, so that rootMix is invertible (rootKeyInv).
const rootKey = 0x9e3779b97f4a7c15

// rootKeyInv is rootKey's inverse modulo 2^64.
var rootKeyInv = func() uint64 {
	x := uint64(rootKey) // Newton's iteration: correct to 3, 6, 12, ... bits
	for range 6 {
		x *= 2 - rootKey*x
	}
	return x
}()

// rootMix is what a collective to root folds into its signature.
func rootMix(root int) uint64 { return uint64(root+1) * rootKey }

// atRoot folds root into the call's signature (root < 0: no root; an
// untyped call, signature 0, stays untyped) and returns cc.
func (cc *collCall) atRoot(root int) *collCall {
	if root >= 0 && cc.sig != 0 {
		cc.mix, cc.root = rootMix(root), root
		cc.sig ^= cc.mix
	}
	return cc
}

// unroot takes the call's root out of a signature of a rank that passed
// the same root, for naming its type.
func (cc *collCall) unroot(sig uint64) uint64 { return sig ^ cc.mix }

// otherRoot reports the root that the rank whose message disagreed
// passed, if the disagreement was the root alone: directly, or through a
// poisoned signature (saw).
func (cc *collCall) otherRoot() (int, bool) {
	if cc.mix == 0 || cc.top == nil {
		return 0, false
	}
	n := uint64(len(cc.top.group))
	for _, x := range [2]uint64{cc.their ^ cc.wanted, cc.their ^ poisonKey} {
		r := (x^cc.mix)*rootKeyInv - 1
		if r < n && int(r) != cc.root {
			return int(r), true
		}
	}
	return 0, false
}

// rootErr is the error of a call whose ranks passed different roots.
func (cc *collCall) rootErr(op string, r int) error {
	who := cc.who(cc.from)
	if cc.their^cc.wanted != rootMix(r)^cc.mix {
		who = "another rank (reported by " + who + ")"
	}
	return cc.top.fail(op, ErrRoot, loc{}, "this rank passed root %d, %s passed root %d: every rank must pass the same root (run with --check, or MPIGO_CHECK=1, to see every rank's call)", cc.root, who, r)
}

var callPool = sync.Pool{New: func() any { return new(collCall) }}

// valBytes returns the first n bytes of cc.val (n at most 64).
func (cc *collCall) valBytes(n int) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(&cc.val)), n)
}

// typedCall returns a call of c's collective context whose messages carry
// t's signature. count >= 0 makes the number of elements part of it.
func (c *Comm) typedCall(t *typeInfo, count int) *collCall {
	// The communicator keeps one spare call: a loop of collectives on one
	// communicator takes and gives back the same one, cheaper than the
	// pool. A second call at once (another goroutine, a non-blocking
	// collective's view) finds none and takes one from the pool.
	cc := c.spareCall.Swap(nil)
	if cc == nil {
		cc = callPool.Get().(*collCall)
	}
	cc.c, cc.top, cc.t, cc.count = c.shadow, c, t, count
	cc.slice = t.shape == shapePlainSlice
	cc.sig = t.sig
	if count >= 0 {
		cc.sig += uint64(count)
		cc.slice = true
	}
	return cc
}

// sliceCall is typedCall for the Slice forms, whose t is the element's.
func sliceCall[E any](c *Comm, n int) *collCall { return c.typedCall(typeOf[E](), n) }

// via returns c's collective context as a coll.Comm for the call cc (nil:
// untyped).
func (c *Comm) via(cc *collCall) coll.Comm {
	if cc == nil {
		return collComm{c.shadow}
	}
	cc.c = c.shadow
	return cc
}

// done turns what the call learned into its error (a mismatch outranks
// the algorithm's error, which is likely its consequence) and returns cc
// to the pool.
func (cc *collCall) done(op string, err error) error {
	if cc.bad {
		err = cc.mismatchErr(op)
	} else if err != nil {
		err = cc.top.collErr(op, err)
	}
	top, spare := cc.top, cc.spare
	*cc = collCall{}
	cc.spare = spare
	if top == nil || !top.spareCall.CompareAndSwap(nil, cc) {
		callPool.Put(cc)
	}
	return err
}

func (cc *collCall) Rank() int { return cc.c.rank }
func (cc *collCall) Size() int { return len(cc.c.group) }

func (cc *collCall) sendSig(dst int) uint64 {
	switch {
	case cc.bad:
		return cc.poison
	case cc.sendTo != nil:
		return cc.sendTo[dst]
	}
	return cc.sig
}

// want returns the signature this rank expects of a message from src.
func (cc *collCall) want(src int) uint64 {
	if cc.recvOf != nil {
		return cc.recvOf[src]
	}
	return cc.sig
}

// saw reports whether a message with signature sig from src disagrees
// with the call, and records the first that does.
func (cc *collCall) saw(sig uint64, src int) bool {
	want := cc.want(src)
	if sig == want || sig == 0 || want == 0 || cc.anyCount && sig-want < countSpan {
		return false
	}
	if !cc.bad {
		cc.bad, cc.from, cc.their, cc.wanted = true, cc.c.group[src], sig, want
		// The poisoned signature is poisonKey XOR the two signatures
		// that disagreed, so that a rank of either type can tell the
		// other; it is passed on as it is.
		cc.poison = sig ^ poisonKey ^ want
		if !cc.known(sig) && cc.known(sig^poisonKey^want) {
			cc.poison = sig
		}
	}
	return true
}

// known reports whether this process can name what signature sig stands
// for in the call's terms.
func (cc *collCall) known(sig uint64) bool {
	sig = cc.unroot(sig)
	if cc.low {
		_, _, ok := decodeSig(sig)
		return ok
	}
	_, _, ok := cc.sigName(sig)
	return ok
}

// spoil marks the call bad before it starts, because this rank's own
// arguments disagree (a Gather's root whose send and receive signatures
// differ): it still takes part, so that no rank waits for it, but sends
// the poisoned signature, and returns the error msg of class class.
func (cc *collCall) spoil(class error, msg string, mine, other uint64) {
	if cc.bad {
		return
	}
	cc.bad, cc.local, cc.lclass = true, msg, class
	cc.from, cc.their, cc.wanted = cc.top.group[0], other, mine
	if cc.top.inter == nil {
		cc.from = cc.top.group[cc.top.rank]
	}
	cc.poison = other ^ poisonKey ^ mine
}

func (cc *collCall) Send(buf []byte, dst, tag int) error {
	sig := cc.sendSig(dst)
	c := cc.c
	if ok, err := c.p.SendShort(engine.Standard, c.ctx, c.rank, c.group[dst], tag, sig, buf); ok {
		return collComm{c}.sendErr(dst, tag, err)
	}
	s := getSlot()
	cc.c.startSend(&s.er, buf, sig, dst, tag, engine.Standard)
	st := cc.c.p.Wait(&s.er)
	putSlot(s)
	return (collComm{cc.c}).err("collective send", at("dest", dst, tag), st)
}

// getSlot returns the call's spare slot, or one from the pool.
func (cc *collCall) getSlot() *slot {
	if s := cc.spare; s != nil {
		cc.spare = nil
		return s
	}
	return getSlot()
}

// putSlot is putSlot (p2p_buf.go) for a slot of cc.getSlot: it keeps one
// as the call's spare.
func (cc *collCall) putSlot(s *slot) {
	if cc.spare != nil {
		putSlot(s)
		return
	}
	s.er.Reset() // as putSlot does
	s.inline = [8]uint64{}
	s.c, s.call = nil, nil
	cc.spare = s
}

func (cc *collCall) Recv(buf []byte, src, tag int) (int, error) {
	s := cc.getSlot()
	cc.c.startSlotRecv(s, buf, nil, 0, src, tag)
	st := cc.c.p.WaitRef(&s.er)
	n := st.Count
	var err error
	if st.Sig != cc.sig && cc.saw(st.Sig, src) {
		n = len(buf)
		if errors.Is(st.Err, engine.ErrTruncate) {
			st.Err = nil
		}
	}
	if st.Err != nil {
		err = cc.c.statusErr("collective receive", at("source", src, tag), *st)
	}
	cc.putSlot(s)
	return n, err
}

func (cc *collCall) RecvAlloc(src, tag int) ([]byte, error) {
	s := getSlot()
	cc.c.startSlotRecv(s, nil, allocBytes, 0, src, tag)
	st := cc.c.p.Wait(&s.er)
	b := s.er.Buffer()
	putSlot(s)
	if b == nil {
		b = []byte{}
	}
	if st.Sig != cc.sig {
		cc.saw(st.Sig, src)
	}
	return b[:st.Count], (collComm{cc.c}).err("collective receive", at("source", src, tag), st)
}

func (cc *collCall) Isend(buf []byte, dst, tag int) (coll.Request, error) {
	sig := cc.sendSig(dst)
	c := cc.c
	if ok, err := c.p.SendShort(engine.Standard, c.ctx, c.rank, c.group[dst], tag, sig, buf); ok {
		if err != nil {
			return nil, collComm{c}.sendErr(dst, tag, err)
		}
		return doneReq{}, nil
	}
	s := getSlot()
	s.c, s.at = cc.c, at("dest", dst, tag)
	cc.c.startSend(&s.er, buf, sig, dst, tag, engine.Standard)
	return s, nil
}

func (cc *collCall) Irecv(buf []byte, src, tag int) (coll.Request, error) {
	s := getSlot()
	s.c, s.at, s.call, s.src = cc.c, at("source", src, tag), cc, src
	cc.c.startSlotRecv(s, buf, nil, 0, src, tag)
	return s, nil
}

// combine wraps a typed Combine: once the call has seen a mismatch the
// operands may be foreign bytes, and combining does nothing.
func (cc *collCall) combine(f coll.Combine) coll.Combine {
	return func(acc, in []byte, accFirst bool) ([]byte, error) {
		if cc.bad {
			return acc, nil
		}
		return f(acc, in, accFirst)
	}
}

// rankIn returns world rank w's rank in c, or -1.
func rankIn(c *Comm, w int) int {
	for i, g := range c.group {
		if g == w {
			return i
		}
	}
	return -1
}

// sigName describes what a signature stands for in the call's terms: the
// type (as the caller would write it) and, for the Slice forms, the count
// (-1 when not known). ok is false when this process has never met the
// type.
func (cc *collCall) sigName(sig uint64) (name string, count int, ok bool) {
	name, count = "", -1
	show := func(t reflect.Type) string {
		if cc.slice {
			return "[]" + t.String()
		}
		return t.String()
	}
	if cc.count < 0 {
		if t := datatype.TypeBySig(sig); t != nil {
			return show(t), -1, true
		}
		return "", -1, false
	}
	if d := sig - cc.t.sig; d < countSpan {
		return show(cc.t.info.Type), int(d), true
	}
	datatype.RangeSigs(func(s uint64, t reflect.Type) bool {
		if d := sig - s; d < countSpan {
			name, count, ok = show(t), int(d), true
			return false
		}
		return true
	})
	return name, count, ok
}

// who names world rank w in the caller's terms: its rank in the
// communicator, or on an intercommunicator in the remote or local group.
func (cc *collCall) who(w int) string {
	c := cc.top
	if r := rankIn(c, w); r >= 0 {
		if c.inter != nil {
			return "remote rank " + strconv.Itoa(r)
		}
		return "rank " + strconv.Itoa(r)
	}
	if c.inter != nil {
		if r := rankIn(c.inter.lc, w); r >= 0 {
			return "local rank " + strconv.Itoa(r)
		}
	}
	return "world rank " + strconv.Itoa(w)
}

// mismatchErr describes the mismatch the call recorded.
func (cc *collCall) mismatchErr(op string) error {
	if cc.local == "" {
		if r, ok := cc.otherRoot(); ok {
			return cc.rootErr(op, r)
		}
	}
	if cc.low {
		return cc.lowMismatchErr(op)
	}
	c := cc.top
	mine := cc.t.info.Type.String()
	if cc.slice {
		mine = "[]" + mine
	}
	who := cc.who(cc.from)
	name, count, ok := cc.sigName(cc.unroot(cc.their))
	if !ok { // a poisoned signature: see saw
		name, count, ok = cc.sigName(cc.unroot(cc.their ^ poisonKey ^ cc.wanted))
		who = "another rank (reported by " + who + ")"
	}
	var msg string
	class := ErrType
	switch {
	case !ok:
		msg = "this rank passed " + mine + ", " + who + " passed a type this process has not used (signature " + hex(cc.unroot(cc.their)) + ")"
	case name == mine && count != cc.count:
		class = ErrCount
		msg = "rank " + strconv.Itoa(c.rank) + " passed " + strconv.Itoa(cc.count) + " elements, " + who + " passed " + strconv.Itoa(count)
	case count != cc.count:
		msg = "this rank passed " + mine + " (" + strconv.Itoa(cc.count) + " elements), " + who + " passed " + name + " (" + strconv.Itoa(count) + " elements)"
	default:
		msg = "this rank passed " + mine + ", " + who + " passed " + name
	}
	return c.fail(op, class, loc{}, "%s", msg)
}

func hex(v uint64) string {
	const digits = "0123456789abcdef"
	b := []byte("0x0000000000000000")
	for i := 17; i >= 2; i-- {
		b[i] = digits[v&15]
		v >>= 4
	}
	return string(b)
}

// lowMismatchErr is mismatchErr for the low-level collectives, whose
// signatures are datatypes' (coll_bufsig.go).
func (cc *collCall) lowMismatchErr(op string) error {
	c := cc.top
	if cc.local != "" {
		return c.fail(op, cc.lclass, loc{}, "%s", cc.local)
	}
	who := cc.who(cc.from)
	mu, mn, _ := decodeSig(cc.unroot(cc.wanted))
	tu, tn, ok := decodeSig(cc.unroot(cc.their))
	if !ok { // a poisoned signature: see saw
		tu, tn, ok = decodeSig(cc.unroot(cc.their ^ poisonKey ^ cc.wanted))
		who = "another rank (reported by " + who + ")"
	}
	n := func(v uint64) int64 {
		if cc.mixed || cc.count < 0 {
			return -1
		}
		return int64(v)
	}
	mine := "this rank passed " + mu.describe(n(mn))
	if cc.recvOf != nil {
		mine = "this rank expects " + mu.describe(n(mn)) + " of " + cc.who(cc.from)
	}
	var msg string
	class := ErrType
	switch {
	case !ok:
		msg = mine + ", " + who + " passed a datatype this process has not used (signature " + hex(cc.their) + ")"
	case mu != nil && tu != nil && mu.hash == tu.hash && cc.mixed:
		class = ErrCount
		msg = "this rank and " + who + " passed different counts of " + mu.name
	case mu != nil && tu != nil && mu.hash == tu.hash || mu == nil || tu == nil:
		class = ErrCount
		msg = mine + ", " + who + " passed " + tu.describe(n(tn))
	default:
		msg = mine + ", " + who + " passed " + tu.describe(n(tn))
	}
	return c.fail(op, class, loc{}, "%s", msg)
}

// lowCall returns a call of c's collective context for a low-level
// collective whose messages carry the datatype signature sig (coll_bufsig.go).
// counted is false when sig is a unit's alone (the blocks of the call
// differ in length from rank to rank).
func (c *Comm) lowCall(sig uint64, counted bool) *collCall {
	cc := callPool.Get().(*collCall)
	cc.c, cc.top, cc.sig, cc.low = c.shadow, c, sig, true
	cc.count = 0
	if !counted {
		cc.count = -1
	}
	return cc
}
