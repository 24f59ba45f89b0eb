package ft

import (
	"encoding/binary"
	"hash/fnv"
	"slices"
)

// Kind is the kind of a control message; it travels as the message's tag.
type Kind int

// The kinds of control messages (see the package doc for their bodies).
// The values are the tags mpigo has always used: keep them.
const (
	Heartbeat Kind = 1 + iota
	Revoke
	Propose
	Decide
	Collect
	Failed
)

func (k Kind) String() string {
	switch k {
	case Heartbeat:
		return "heartbeat"
	case Revoke:
		return "revoke"
	case Propose:
		return "propose"
	case Decide:
		return "decide"
	case Collect:
		return "collect"
	case Failed:
		return "failed"
	}
	return "unknown"
}

// Key names a communicator among the ranks: its context and a hash of its
// members' world ranks (GroupHash). Two communicators that have had the
// same context one after the other differ by members, most of the time.
type Key struct {
	Ctx   uint32
	Group uint64
}

// AgreeID names one agreement instance: the Seq-th agreement on the
// communicator Key.
type AgreeID struct {
	Key Key
	Seq uint64
}

// GroupHash is the hash of a communicator's members (world ranks, in
// order) that its Key carries.
func GroupHash(members []int) uint64 {
	h := fnv.New64a()
	var b [4]byte
	for _, r := range members {
		binary.LittleEndian.PutUint32(b[:], uint32(r))
		h.Write(b[:])
	}
	return h.Sum64()
}

// A Notice is a decoded revoke notice.
type Notice struct {
	Key Key
	By  int // the world rank that revoked
}

// encodeRevoke encodes a revoke notice.
func encodeRevoke(n Notice) []byte {
	b := make([]byte, 16)
	binary.LittleEndian.PutUint32(b, n.Key.Ctx)
	binary.LittleEndian.PutUint64(b[4:], n.Key.Group)
	binary.LittleEndian.PutUint32(b[12:], uint32(n.By))
	return b
}

// DecodeRevoke decodes the body of a Revoke message; ok is false for
// malformed bytes.
func DecodeRevoke(b []byte) (n Notice, ok bool) {
	if len(b) != 16 {
		return n, false
	}
	n.Key.Ctx = binary.LittleEndian.Uint32(b)
	n.Key.Group = binary.LittleEndian.Uint64(b[4:])
	n.By = int(binary.LittleEndian.Uint32(b[12:]) & (1<<31 - 1))
	return n, true
}

// encodeFailed encodes a Failed message about world rank r.
func encodeFailed(r int) []byte {
	return binary.LittleEndian.AppendUint32(nil, uint32(r))
}

// decodeFailed decodes a Failed message of a job of size ranks.
func decodeFailed(b []byte, size int) (int, bool) {
	if len(b) != 4 {
		return 0, false
	}
	r := binary.LittleEndian.Uint32(b)
	if uint64(r) >= uint64(size) {
		return 0, false
	}
	return int(r), true
}

// prop is a proposal or decision as it travels.
type prop struct {
	val     []byte
	failed  []int
	decided bool
	answer  bool // a proposal answering a Collect
}

// The flag byte of an agreement message.
const (
	flagPropose = 0
	flagDecided = 1
	flagAnswer  = 2 // a proposal that answers a Collect
)

// agreeHdr is the length of the id that starts every agreement message;
// a Collect is that id alone.
const agreeHdr = 20

// encodeAgree encodes a proposal or decision.
func encodeAgree(id AgreeID, flag byte, val []byte, failed []int) []byte {
	b := make([]byte, 0, agreeHdr+5+len(val)+4+4*len(failed))
	b = binary.LittleEndian.AppendUint32(b, id.Key.Ctx)
	b = binary.LittleEndian.AppendUint64(b, id.Key.Group)
	b = binary.LittleEndian.AppendUint64(b, id.Seq)
	b = append(b, flag)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(val)))
	b = append(b, val...)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(failed)))
	for _, r := range failed {
		b = binary.LittleEndian.AppendUint32(b, uint32(r))
	}
	return b
}

// encodeCollect encodes a Collect.
func encodeCollect(id AgreeID) []byte {
	return encodeAgree(id, flagPropose, nil, nil)[:agreeHdr]
}

// decodeAgree decodes a message of encodeAgree, or a Collect (the id
// alone), from a job of size ranks; ok is false for malformed bytes. The
// value is copied: b may be reused. Lengths are compared as 64-bit
// unsigned numbers, so that no count read from the wire turns negative
// where int has 32 bits.
func decodeAgree(b []byte, size int) (id AgreeID, p prop, ok bool) {
	if len(b) < agreeHdr {
		return id, p, false
	}
	id.Key.Ctx = binary.LittleEndian.Uint32(b)
	id.Key.Group = binary.LittleEndian.Uint64(b[4:])
	id.Seq = binary.LittleEndian.Uint64(b[12:])
	b = b[agreeHdr:]
	if len(b) == 0 {
		return id, p, true
	}
	if len(b) < 5 {
		return id, p, false
	}
	p.decided = b[0] == flagDecided
	p.answer = b[0] == flagAnswer
	n := uint64(binary.LittleEndian.Uint32(b[1:]))
	b = b[5:]
	if n > uint64(len(b)) {
		return id, p, false
	}
	p.val = slices.Clone(b[:n])
	b = b[n:]
	if len(b) < 4 {
		return id, p, false
	}
	nf := uint64(binary.LittleEndian.Uint32(b))
	b = b[4:]
	if nf > uint64(size) || uint64(len(b)) != 4*nf {
		return id, p, false
	}
	for i := range int(nf) {
		r := binary.LittleEndian.Uint32(b[4*i:])
		if uint64(r) >= uint64(size) {
			return id, p, false
		}
		p.failed = append(p.failed, int(r))
	}
	return id, p, true
}
