package mpi

import (
	"encoding/binary"
	"fmt"
	"strconv"

	"github.com/mpigo/mpi/internal/coll"
	"github.com/mpigo/mpi/internal/datatype"
)

// This file makes jobs whose ranks run on machines of different byte
// order work (mixed-architecture jobs; docs/hetero.md).
//
// Every process of a launched job announces its representation (byte
// order and the size of Go's int) to every other at start-up, with one
// allgather of a 4-byte token over the world communicator. When every
// rank has this rank's representation (the usual case), proc.reprs stays
// nil and nothing else in this file runs: a receive pays one nil check.
//
// Otherwise data travels as the sender's memory, and the receiver makes
// it right: a receive whose sender's byte order differs reverses the
// bytes of every number it got, with the type map of its buffer (the
// datatype's, or the Go type's) or, for encoded values, by walking the
// decoded value. Collectives on a communicator whose members differ run
// simple algorithms over those converting receives (hetero_coll.go).
// Ranks whose Go int differs in size cannot share a job (a Go type then
// has two layouts): start-up fails with an error naming them.

// repr is a machine's representation of data: byte order and word size.
type repr uint8

const (
	reprLE64 repr = iota + 1
	reprBE64
	reprLE32
	reprBE32
)

// reprTokens are what ranks announce; index: repr.
var reprTokens = [...]string{"", "le64", "be64", "le32", "be32"}

// nativeRepr is this machine's representation.
var nativeRepr = func() repr {
	big := binary.NativeEndian.Uint16([]byte{0, 1}) == 1
	switch {
	case strconv.IntSize == 64 && !big:
		return reprLE64
	case strconv.IntSize == 64:
		return reprBE64
	case !big:
		return reprLE32
	}
	return reprBE32
}()

func (r repr) bigEndian() bool { return r == reprBE64 || r == reprBE32 }
func (r repr) wordBits() int {
	if r == reprLE32 || r == reprBE32 {
		return 32
	}
	return 64
}

// String describes r for a person: "big-endian, 64-bit int".
func (r repr) String() string {
	order := "little-endian"
	if r.bigEndian() {
		order = "big-endian"
	}
	return order + ", " + strconv.Itoa(r.wordBits()) + "-bit int"
}

// parseRepr reads a token another rank announced. It accepts exactly the
// tokens of reprTokens.
func parseRepr(b []byte) (repr, bool) {
	for i, t := range reprTokens {
		if i > 0 && string(b) == t {
			return repr(i), true
		}
	}
	return 0, false
}

// quoteToken shows an announced token in an error, bounded.
func quoteToken(b []byte) string {
	if len(b) > 16 {
		return strconv.Quote(string(b[:16])) + "..."
	}
	return strconv.Quote(string(b))
}

// learnReprs exchanges representations with every rank of the job and
// sets p.reprs if any differs from this rank's. It is collective over
// the world communicator and runs before the rank's function.
func (p *proc) learnReprs() error {
	token := reprTokens[nativeRepr]
	if announceOverride != "" {
		token = announceOverride
	}
	return p.noteReprs(coll.Allgather(collComm{p.world.shadow}, []byte(token), p.world.collTag()))
}

// announceOverride replaces the token this process announces. It is set
// only by the tests, at link time (-ldflags -X), to play a peer of an
// unknown representation.
var announceOverride string

// noteReprs checks the tokens every rank announced (parts[r]: rank r's).
func (p *proc) noteReprs(parts [][]byte, err error) error {
	if err != nil {
		return fmt.Errorf("mpi: rank %d: exchanging data representations at start-up: %w", p.Rank, err)
	}
	var reprs []repr
	for r, b := range parts {
		if r == p.Rank {
			continue // this rank's own
		}
		rp, ok := parseRepr(b)
		if !ok {
			return p.world.errorf("start-up", ErrOther, loc{what: "peer", peer: r},
				"rank %d announced the data representation %s, which this rank (%s) does not know: it may run another version of mpigo",
				r, quoteToken(b), nativeRepr)
		}
		if rp.wordBits() != nativeRepr.wordBits() {
			return p.world.errorf("start-up", ErrOther, loc{what: "peer", peer: r},
				"rank %d runs with %s and this rank with %s: a job cannot mix machines whose Go int differs in size (build every program for 64-bit targets, or every one for 32-bit ones)",
				r, rp, nativeRepr)
		}
		if rp != nativeRepr && reprs == nil {
			reprs = make([]repr, len(parts))
			for i := range reprs {
				reprs[i] = nativeRepr
			}
		}
		if reprs != nil {
			reprs[r] = rp
		}
	}
	p.reprs = reprs
	return nil
}

// swapFrom reports whether data from rank src of c must be converted.
func (c *Comm) swapFrom(src int) bool {
	rs := c.p.reprs
	if rs == nil || src < 0 || src >= len(c.group) {
		return false
	}
	w := c.group[src]
	return w < len(rs) && rs[w] != nativeRepr // peers of other jobs: assumed native (docs/spawn.md)
}

// mixed reports whether the members of c (both groups of an
// intercommunicator) do not all share this rank's representation. In a
// job of one representation that is one nil check; in a mixed job the
// members are looked at once per communicator (view) and the answer kept.
func (c *Comm) mixed() bool {
	rs := c.p.reprs
	if rs == nil {
		return false
	}
	switch c.mix.Load() {
	case 1:
		return false
	case 2:
		return true
	}
	m := c.differs(rs)
	if m {
		c.mix.Store(2)
	} else {
		c.mix.Store(1)
	}
	return m
}

// differs reports whether some member of c has a representation in rs
// other than this rank's.
func (c *Comm) differs(rs []repr) bool {
	for _, w := range c.group {
		if w < len(rs) && rs[w] != nativeRepr {
			return true
		}
	}
	if c.inter != nil {
		for _, w := range c.inter.local {
			if w < len(rs) && rs[w] != nativeRepr {
				return true
			}
		}
	}
	return false
}

// swapTyped converts the received bytes b of a plain value or plain slice
// of t in place.
func swapTyped(t *typeInfo, b []byte) {
	switch t.shape {
	case shapePlain:
		t.info.SwapPlain(b)
	case shapePlainSlice:
		t.info.Elem.SwapPlain(b)
	}
}

// convLow is what a low-level receive needs to convert its data once it
// has arrived: elements of the type map tm in buf.
type convLow struct {
	buf []byte
	tm  *datatype.Type
}

// convert converts the data of a completed low-level receive from rank
// src of c that stored n packed bytes, if src's byte order differs.
func (cv *convLow) convert(c *Comm, src, n int) {
	if cv == nil || !c.swapFrom(src) || cv.tm.Size == 0 {
		return
	}
	cv.tm.Swap(cv.buf, n/int(cv.tm.Size))
}

// lowConv returns the conversion of a low-level receive into buf, or nil
// in a job whose ranks all share this rank's representation.
func (c *Comm) lowConv(buf []byte, tm *datatype.Type) *convLow {
	if c.p.reprs == nil || isBottom(buf) {
		return nil
	}
	return &convLow{buf, tm}
}

// decodeFrom is decodeBytes for a message from rank src of c: bytes from
// a machine of the other byte order are converted first (plain values),
// or the decoded value after (encoded ones).
func decodeFrom[T any](c *Comm, src int, t *typeInfo, b []byte, v *T, own bool) error {
	if !c.swapFrom(src) {
		return decodeBytes(t, b, v, own)
	}
	switch t.shape {
	case shapePlain, shapePlainSlice:
		swapTyped(t, b)
		return decodeBytes(t, b, v, own)
	case shapeString:
		return decodeBytes(t, b, v, own)
	}
	p := new(T)
	if err := datatype.DecodeSwapped(b, p, own); err != nil {
		return err
	}
	*v = *p
	return nil
}
