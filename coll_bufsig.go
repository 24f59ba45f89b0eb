package mpi

import (
	"hash/fnv"
	"strconv"
	"sync"

	"github.com/mpigo/mpi/internal/datatype"
)

// This file gives the low-level collectives (buffer, count, Datatype) the
// type signatures that the typed collectives carry (coll_call.go).
//
// MPI requires the two sides of every collective transfer to have the
// same type signature: the same sequence of basic types, however the
// datatypes lay them out in memory. A vector(2,1,2,Int32) and two Int32
// have the same signature; an Int32 and a Float32, or 3 and 4 Int32, do
// not. A datatype's signature is a repetition of a shortest sequence, its
// unit (one Int32; one {Float32,Int} pair; for a struct of an Int32 and
// two Float64, that struct's three elements): count elements of a
// datatype are count·per repetitions of its unit. A message of a
// low-level collective carries the unit's hash plus the number of
// repetitions (the same form as the typed Slice forms' element signature
// plus count), so a receiver that compares it with its own learns both
// whether the types agree and, if not, what the sender passed.

// sigUnit is the unit of a datatype's type signature.
type sigUnit struct {
	hash uint64 // the unit's signature; never 0
	per  int64  // repetitions of the unit in one element of the datatype
	name string // the unit as a person reads it: "int32", "{float32,int64}"
}

// emptySig is the signature of an empty message (count 0, or a datatype
// without data), which matches any other empty one, as in MPI.
const emptySig = 0x6d70_6967_6f00_0000 // "mpigo\0"

// kindUnits are the units of the basic kinds, made once. A kind's unit
// is that of the kind it is in signatures (datatype.Basic.Canon): a C
// long's is an int64's.
var kindUnits = func() (u [datatype.BasicLast + 1]*sigUnit) {
	for k := datatype.BasicByte; k <= datatype.BasicLast; k++ {
		u[k] = newUnit([]sigRun{{k.Canon(), 1}}, 1)
	}
	return u
}()

// sigRun is n consecutive basic elements of kind k.
type sigRun struct {
	k datatype.Basic
	n int64
}

// units caches the units of the datatypes that mix basic kinds, by type
// map (type maps are immutable); units maps each unit's hash to it, for
// error messages.
var (
	unitOfType sync.Map // *datatype.Type -> *sigUnit
	unitByHash sync.Map // uint64 -> *sigUnit
)

func newUnit(runs []sigRun, per int64) *sigUnit {
	h := fnv.New64a()
	h.Write([]byte("mpigo-sig"))
	var b [10]byte
	name := ""
	if len(runs) > 1 {
		name = "{"
	}
	for i, r := range runs {
		b[0] = byte(r.k)
		n := 1
		for v := uint64(r.n); ; v >>= 7 {
			if v < 0x80 {
				b[n] = byte(v)
				n++
				break
			}
			b[n] = byte(v) | 0x80
			n++
		}
		h.Write(b[:n])
		if i > 0 {
			name += ","
		}
		if r.n != 1 {
			name += strconv.FormatInt(r.n, 10) + "×"
		}
		name += r.k.String()
	}
	if len(runs) > 1 {
		name += "}"
	}
	s := h.Sum64()
	if s == 0 || s == emptySig {
		s = 1
	}
	unitByHash.LoadOrStore(s, &sigUnit{hash: s, per: 1, name: name})
	return &sigUnit{hash: s, per: per, name: name}
}

// unit returns the unit of d's type signature, or nil when d carries no
// data (a signature of length 0).
func (d *Datatype) unit() *sigUnit {
	if d.packedOf != nil { // a reduction's stand-in for d (packedType)
		d = d.packedOf
	}
	t := d.t
	if t == nil || t.NBasic == 0 {
		return nil
	}
	if len(t.Blocks) == 1 { // the predefined datatypes, contiguous and vectors
		b := t.Blocks[0]
		if int(b.Basic) < len(kindUnits) && kindUnits[b.Basic] != nil {
			if b.N == 1 {
				return kindUnits[b.Basic]
			}
			return &sigUnit{hash: kindUnits[b.Basic].hash, per: b.N, name: kindUnits[b.Basic].name}
		}
	}
	if v, ok := unitOfType.Load(t); ok {
		return v.(*sigUnit)
	}
	u := unitOf(t)
	v, _ := unitOfType.LoadOrStore(t, u)
	return v.(*sigUnit)
}

// unitOf computes the unit of a type map: the shortest sequence whose
// repetition is the type's sequence of basic elements.
func unitOf(t *datatype.Type) *sigUnit {
	var runs []sigRun
	for _, b := range t.Blocks {
		if b.N == 0 {
			continue
		}
		k := b.Basic.Canon()
		if n := len(runs); n > 0 && runs[n-1].k == k {
			runs[n-1].n += b.N
			continue
		}
		runs = append(runs, sigRun{k, b.N})
	}
	m := len(runs)
	if m == 1 {
		k := kindUnits[runs[0].k]
		return &sigUnit{hash: k.hash, per: runs[0].n, name: k.name}
	}
	if runs[0].k != runs[m-1].k {
		// No run merges across the boundary of two repetitions: the unit
		// is a period of the runs.
		p := period(runs)
		return newUnit(runs[:p], int64(m/p))
	}
	// The first and last runs are of one kind a: a repetition of
	// a^x M a^y reads a^x M a^(x+y) M ... M a^y. Folding the first run
	// into the last makes the runs periodic without merges.
	x, y := runs[0].n, runs[m-1].n
	r2 := append([]sigRun(nil), runs[1:]...)
	r2[len(r2)-1].n += x
	p := period(r2)
	unit := append([]sigRun{{runs[0].k, x}}, r2[:p-1]...)
	unit = append(unit, sigRun{runs[0].k, y})
	return newUnit(unit, int64(len(r2)/p))
}

// period returns the smallest p dividing len(r) with r[i] == r[i+p].
func period(r []sigRun) int {
	m := len(r)
outer:
	for p := 1; p < m; p++ {
		if m%p != 0 {
			continue
		}
		for i := p; i < m; i++ {
			if r[i] != r[i-p] {
				continue outer
			}
		}
		return p
	}
	return m
}

// lowSig returns the signature of count elements of d: the unit's hash
// plus the number of its repetitions; emptySig for no data; 0 (no
// signature: matches any) for Packed, whose bytes may hold anything, as
// MPI_PACKED matches any signature.
func lowSig(d *Datatype, count int) uint64 {
	if d == Packed {
		return 0
	}
	u := d.unit()
	if u == nil || count == 0 {
		return emptySig
	}
	return u.hash + uint64(int64(count)*u.per)
}

// lowUnitSig returns the signature of d's unit alone, for the calls whose
// blocks differ in length from rank to rank (Gatherv, Scatterv), which
// check the lengths themselves; emptySig for a datatype without data.
func lowUnitSig(d *Datatype) uint64 {
	if d == Packed {
		return 0
	}
	if u := d.unit(); u != nil {
		return u.hash
	}
	return emptySig
}

// lowUnits returns the number of unit repetitions in count elements of d.
func lowUnits(d *Datatype, count int) int64 {
	if u := d.unit(); u != nil {
		return int64(count) * u.per
	}
	return 0
}

// decodeSig splits a low-level signature into its unit and number of
// repetitions. ok is false when this process has not met the unit.
func decodeSig(sig uint64) (u *sigUnit, n uint64, ok bool) {
	if sig == emptySig {
		return nil, 0, true
	}
	unitByHash.Range(func(k, v any) bool {
		if d := sig - v.(*sigUnit).hash; d < countSpan {
			u, n, ok = v.(*sigUnit), d, true
			return false
		}
		return true
	})
	return u, n, ok
}

// describe names n repetitions of u: "3 × int32", "int32" (n < 0: the
// unit alone), "no data" (u nil).
func (u *sigUnit) describe(n int64) string {
	switch {
	case u == nil:
		return "no data"
	case n < 0:
		return u.name
	}
	return strconv.FormatInt(n, 10) + " × " + u.name
}

// mixSig returns the signature of a v-collective whose every rank must
// pass the same counts (Allgatherv, ReduceScatter): the unit's hash plus
// a hash of the counts in units, so that ranks that disagree about the
// counts see different signatures, and about the type a different unit.
func mixSig(d *Datatype, counts []int) uint64 {
	if d == Packed {
		return 0
	}
	u := d.unit()
	if u == nil {
		return emptySig
	}
	h := uint64(0xcbf2_9ce4_8422_2325)
	for _, n := range counts {
		h ^= uint64(int64(n) * u.per)
		h *= 0x100_0000_01b3
	}
	return u.hash + h&(countSpan-1)
}

// perPeerSig is the call signature of a collective whose every pair of
// ranks has a signature of its own (collCall.sendTo, recvOf); no message
// carries it.
const perPeerSig = 2

// checkOwn compares the signatures of this rank's two sides of a call
// (count elements of dt, which the rest of the call expects, and
// hcount of hdt, which it passes besides): if they differ the call is
// spoiled, and returns an error saying so after taking part.
func (cc *collCall) checkOwn(dt *Datatype, count int, hdt *Datatype, hcount int, what string) {
	want, have := lowSig(dt, count), lowSig(hdt, hcount)
	if want == have || want == 0 || have == 0 { // Packed matches anything
		return
	}
	wu, hu := dt.unit(), hdt.unit()
	class := ErrType
	if wu == nil || hu == nil || wu.hash == hu.hash {
		class = ErrCount
	}
	side := "send block"
	if what == "its send block" {
		side = "receive block"
	}
	msg := "this rank's " + side + " (" + hu.describe(lowUnits(hdt, hcount)) + ") does not match " + what + " (" + wu.describe(lowUnits(dt, count)) + ")"
	cc.spoil(class, msg, cc.sig, have)
}

// blockErr reports a block whose length is not what the receiver's
// count says: got bytes from who, where what (count elements of dt)
// was expected.
func (c *Comm) blockErr(name, who string, got int, what string, count int, dt *Datatype) error {
	u := dt.unit()
	sent := strconv.Itoa(got) + " bytes"
	if u != nil && dt.size > 0 && int64(got)*u.per%int64(dt.size) == 0 {
		sent += " (" + u.describe(int64(got)*u.per/int64(dt.size)) + ")"
	}
	return c.argErr(name, ErrCount, "%s sent %s, but %s is %d × %s (%s)", who, sent, what, count, dt.name, u.describe(lowUnits(dt, count)))
}
