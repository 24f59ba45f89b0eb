// Package wire defines the frame that carries every message between two
// mpigo ranks, and its byte encoding.
//
// A frame is a fixed 64-byte header followed by an optional payload. The
// header has a magic byte and a version, and every multi-byte field is
// little-endian, so ranks on different architectures agree on the layout.
// Transports that share memory (self, inproc) pass the Frame struct itself
// and never encode it; byte-stream transports (tcp) use Marshal and Unmarshal.
//
// The wire package knows the names of the protocol steps (eager, RTS, CTS,
// ...) but not what they mean: that is the engine's business.
package wire

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Magic is the first byte of every encoded header.
const Magic = 0x4d // 'M'

// Version is the version of the frame format and of the tcp handshake. A
// peer speaking another version is refused when the connection is set up.
// Version 2: a tcp connection carries frames both ways, and both ends
// prove the job's secret. Version 3: the acceptor's proof ends with a byte
// that may send the dialer back to the connection the acceptor is making
// (two ranks that dial each other at once keep one connection). Version 4:
// an RTS may carry a region token (FlagToken, Header.Token) in the bytes
// where other frames carry Offset.
const Version = 4

// HeaderSize is the size in bytes of an encoded header.
const HeaderSize = 64

// Kind is the protocol step a frame carries.
type Kind uint8

// The frame kinds.
const (
	// Eager carries a whole message in its payload.
	Eager Kind = iota + 1
	// RTS (request to send) announces a rendezvous message of Size bytes.
	// It may carry a Region the receiver can read directly, or a Token by
	// which the receiver's transport can read the message in place.
	RTS
	// CTS (clear to send) tells the sender that its RTS matched receive RecvID.
	CTS
	// Data carries part of a rendezvous message, at Offset.
	Data
	// Fin tells the sender that the receiver has read its Region: the send is complete.
	Fin
	// Ack tells a synchronous sender that its message matched.
	Ack
	// CancelReq asks the receiver to withdraw an unmatched message.
	CancelReq
	// CancelAck answers CancelReq; FlagCancelled says whether it was withdrawn.
	CancelAck
	maxKind
)

var kindNames = [...]string{"invalid", "eager", "rts", "cts", "data", "fin", "ack", "cancel-req", "cancel-ack"}

// String returns the kind's name, e.g. "rts".
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// Header flags.
const (
	// FlagSync marks a message from a synchronous send: the receiver answers with Ack when it matches.
	FlagSync uint8 = 1 << iota
	// FlagCancelled in a CancelAck says the message was withdrawn.
	FlagCancelled
	// FlagTruncated in a CTS or Fin says the receiver took fewer bytes than were sent.
	FlagTruncated
	// FlagToken in an RTS says that Token names the message for a single
	// copy: the transport between the two ranks exported the sender's
	// buffer as Token (transport.RegionReader), and the receiver's side of
	// it may read the message in place. A receiver that cannot read it
	// answers with a CTS as usual.
	FlagToken
)

// Header is the fixed part of a frame.
type Header struct {
	Kind    Kind
	Flags   uint8
	Context uint32 // communicator context id
	Src     int32  // sender's rank in the communicator
	Tag     int32
	Size    int64  // total size of the message in bytes
	Offset  int64  // for Data: where the payload goes in the message
	SendID  uint64 // the sender's handle for the message
	RecvID  uint64 // the receiver's handle for the matching receive
	Sig     uint64 // type signature of the payload (0: untyped bytes)
	// Token, in an RTS with FlagToken, names the sender's message for the
	// transport that exported it: opaque to everyone else. It is encoded
	// where other frames carry Offset, which an RTS does not use.
	Token uint64
}

// AnswersRTS reports whether h, a frame from the receiver of a
// rendezvous to its sender, means that the receiver will not read the
// sender's buffer in place (any more): a CTS (it streams the message
// instead), a Fin (it has read it) or a CancelAck that withdrew the
// message. Transports that export buffers (RegionReader) end an export
// on it, whether or not it was read.
func (h *Header) AnswersRTS() bool {
	return h.Kind == CTS || h.Kind == Fin || (h.Kind == CancelAck && h.Flags&FlagCancelled != 0)
}

// Unanswered reports whether h, with a payload of n bytes, is an eager
// frame that needs no answer: the whole message, not synchronous, and
// naming no receive. These are the frames the short road carries (the
// sender's rule is engine.Unanswered; they may carry a SendID, which only
// a cancel uses) and that a receiver may hand to engine.DeliverEager.
func (h *Header) Unanswered(n int) bool {
	return h.Kind == Eager && h.Flags&FlagSync == 0 && h.RecvID == 0 && h.Offset == 0 && h.Size == int64(n)
}

// Frame is a header, the transport addresses, and the payload.
type Frame struct {
	Header
	// From and To are the transport-level endpoints (world ranks). They are
	// not part of the encoded header: the connection implies them.
	From, To int
	// Payload is the data that follows the header. A frame passed to a
	// transport's Send or to a delivery handler borrows its payload: it is
	// valid only until that call returns.
	Payload []byte
	// Region is the sender's whole message, readable in place by the
	// receiver. Only transports that share an address space with the peer
	// set it; it is never encoded.
	Region []byte
	// Source is, instead of Region, a sender's message that is not one run
	// of memory (a derived datatype over the sender's buffer), which the
	// receiver packs from in place: straight into its own buffer, one copy.
	// Like Region it is set only between ranks sharing an address space
	// and never encoded.
	Source Packer
}

// Packer packs the bytes [off, off+len(dst)) of a message held in
// scattered memory into dst.
type Packer interface {
	Pack(dst []byte, off int)
}

// Errors returned by Unmarshal.
var (
	ErrShort   = errors.New("wire: short header")
	ErrMagic   = errors.New("wire: bad magic byte")
	ErrVersion = errors.New("wire: unsupported version")
	ErrKind    = errors.New("wire: unknown frame kind")
	ErrLength  = errors.New("wire: bad length")
)

// MaxPayload is the largest payload one encoded frame may carry.
const MaxPayload = 1 << 30

// Marshal encodes h and the payload length into b, which must hold HeaderSize bytes.
func (h *Header) Marshal(b []byte, payloadLen int) {
	_ = b[HeaderSize-1]
	b[0] = Magic
	b[1] = Version
	b[2] = byte(h.Kind)
	b[3] = h.Flags
	le := binary.LittleEndian
	le.PutUint32(b[4:], h.Context)
	le.PutUint32(b[8:], uint32(h.Src))
	le.PutUint32(b[12:], uint32(h.Tag))
	le.PutUint64(b[16:], uint64(h.Size))
	if h.Kind == RTS {
		le.PutUint64(b[24:], h.Token)
	} else {
		le.PutUint64(b[24:], uint64(h.Offset))
	}
	le.PutUint64(b[32:], h.SendID)
	le.PutUint64(b[40:], h.RecvID)
	le.PutUint64(b[48:], h.Sig)
	le.PutUint32(b[56:], uint32(payloadLen))
	le.PutUint32(b[60:], 0)
}

// Unmarshal decodes a header from b and returns it with the payload length
// that follows. It checks everything that can be checked without context.
func Unmarshal(b []byte) (Header, int, error) {
	var h Header
	if len(b) < HeaderSize {
		return h, 0, ErrShort
	}
	if b[0] != Magic {
		return h, 0, fmt.Errorf("%w: 0x%02x", ErrMagic, b[0])
	}
	if b[1] != Version {
		return h, 0, fmt.Errorf("%w: peer speaks version %d, we speak %d", ErrVersion, b[1], Version)
	}
	h.Kind = Kind(b[2])
	if h.Kind == 0 || h.Kind >= maxKind {
		return h, 0, fmt.Errorf("%w: %d", ErrKind, b[2])
	}
	h.Flags = b[3]
	le := binary.LittleEndian
	h.Context = le.Uint32(b[4:])
	h.Src = int32(le.Uint32(b[8:]))
	h.Tag = int32(le.Uint32(b[12:]))
	h.Size = int64(le.Uint64(b[16:]))
	if h.Kind == RTS {
		h.Token = le.Uint64(b[24:])
	} else {
		h.Offset = int64(le.Uint64(b[24:]))
	}
	h.SendID = le.Uint64(b[32:])
	h.RecvID = le.Uint64(b[40:])
	h.Sig = le.Uint64(b[48:])
	n := le.Uint32(b[56:])
	if h.Size < 0 || n > MaxPayload || le.Uint32(b[60:]) != 0 || h.Offset < 0 || h.Offset > h.Size {
		return h, 0, fmt.Errorf("%w: size %d offset %d payload %d", ErrLength, h.Size, h.Offset, n)
	}
	if h.Token != 0 && h.Flags&FlagToken == 0 {
		return h, 0, fmt.Errorf("%w: rts carries token %#x without its flag", ErrLength, h.Token)
	}
	if (h.Kind == Eager || h.Kind == Data) && h.Offset+int64(n) > h.Size {
		return h, 0, fmt.Errorf("%w: payload %d at offset %d overruns message of %d bytes", ErrLength, n, h.Offset, h.Size)
	}
	return h, int(n), nil
}
