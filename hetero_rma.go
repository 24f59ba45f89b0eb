package mpi

import (
	"bytes"

	"github.com/mpigo/mpi/internal/datatype"
)

// One-sided communication with a target of the other byte order
// (docs/hetero.md). Such a target is never reached in memory: newWindow
// leaves it to the message path, and
//
//   - the typed calls (Put, Get, Accumulate, GetAccumulate, FetchAndOp,
//     CompareAndSwap, and the fetch/swap-if steps of user operations) are
//     converted at the target, which knows T: its server reverses the
//     numbers of the data it receives from such an origin and of the data
//     it answers with (serveOne);
//   - the low-level calls (PutBuf, ...) carry only byte runs of the
//     target's memory, so the origin, which has the datatypes, converts:
//     its packed data before it leaves and the packed answer before it is
//     unpacked (hetLow). A user operation is applied at the origin to the
//     converted values, and the values it read go back as read, so the
//     target's compare still sees its own bytes. Where the origin's
//     datatype is raw bytes and the target's is not, nothing says what the
//     bytes are, and the call fails with ErrType.

// hetReach leaves the targets of the other byte order to the message
// path.
func (w *Window[T]) hetReach() {
	for r := range w.reach {
		if r != w.c.rank && w.c.swapFrom(r) {
			w.reach[r] = nil
		}
	}
}

// hetTyped returns the conversions of serveOne for a request from origin:
// of data received (in place) and of data answered (a converted copy).
// Both do nothing when origin's byte order is this rank's.
func (w *Window[T]) hetTyped(origin int) (in func([]byte), out func([]byte) []byte) {
	if !w.c.swapFrom(origin) {
		return func([]byte) {}, func(b []byte) []byte { return b }
	}
	info := typeOf[T]().info
	return info.SwapPlain, func(b []byte) []byte {
		b = bytes.Clone(b)
		info.SwapPlain(b)
		return b
	}
}

// mixLow prepares the low-level call c for its target: if the target's
// byte order differs, it records the datatypes that lay out c's packed
// data (in: the data sent, out: the answer) for hetLow.
func (w *Window[T]) mixLow(c *lowCall, in, out, tdt *Datatype) error {
	if !w.c.swapFrom(c.target) {
		return nil
	}
	var err error
	if c.inT, err = w.convType(c.name, c.target, in, tdt); err != nil {
		return err
	}
	c.outT, err = w.convType(c.name, c.target, out, tdt)
	return err
}

// convType returns the datatype whose packed form converts the origin's
// data of datatype dt (nil: none) towards a target of the other byte
// order, whose part is laid out by tdt; nil if there is nothing to
// convert (bytes on both sides).
func (w *Window[T]) convType(name string, target int, dt, tdt *Datatype) (*Datatype, error) {
	switch {
	case dt == nil:
		return nil, nil
	case dt.t.Words():
		return dt, nil
	case tdt != nil && tdt.t.Words():
		rs := w.c.p.reprs
		return nil, w.errorf(name, ErrType, target,
			"target %d runs with %s and this rank with %s, and the origin datatype %s is raw bytes: nothing says which bytes make up numbers of the target datatype %s, so they cannot be converted (pass the origin data with a datatype of its numbers)",
			target, rs[w.c.group[target]], nativeRepr, dt.name, tdt.name)
	}
	return nil, nil
}

// hetLow converts c's packed data to the target's byte order, and makes
// c.done convert the answer back before it is unpacked.
func (c *lowCall) hetLow() {
	if c.inT != nil && c.inT.size > 0 && !c.hetDone {
		c.in = bytes.Clone(c.in)
		c.inT.t.SwapPacked(c.in, len(c.in)/c.inT.size)
	}
	if t := c.outT; t != nil && t.size > 0 && !c.hetDone {
		out, done := c.out, c.done
		c.done = func() {
			t.t.SwapPacked(out, len(out)/t.size)
			if done != nil {
				done()
			}
		}
	}
	c.hetDone = true
}

// swapPacked converts b, packed elements of t (nil: nothing to convert),
// in a copy.
func swapPacked(t *datatype.Type, size int, b []byte) []byte {
	if t == nil || size == 0 {
		return b
	}
	b = bytes.Clone(b)
	t.SwapPacked(b, len(b)/size)
	return b
}
