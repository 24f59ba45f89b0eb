package tcp

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/ecdh"
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"

	"github.com/mpigo/mpi/internal/transport"
	"github.com/mpigo/mpi/internal/wire"
)

// Protect says how the frames of a connection are protected once the
// handshake has proved both sides. The zero value, ProtectAuto, is the
// default (see docs/security.md for the measurements behind it).
type Protect uint8

const (
	// ProtectAuto encrypts every connection except one whose two ends
	// are both loopback addresses, when LoopbackPlain is set (see
	// ProtectFor).
	ProtectAuto Protect = iota
	// ProtectEncrypt seals every frame with AES-128-GCM: nobody between
	// the ranks can read, alter, replay, reorder or drop frames unnoticed.
	ProtectEncrypt
	// ProtectOff sends frames as they are, for trusted fabrics. The
	// handshake still proves the job's secret.
	ProtectOff
)

// LoopbackPlain makes ProtectAuto leave a connection unprotected when
// both its ends are loopback addresses: its bytes never leave the
// kernel, and there encryption halves the bandwidth (4 MiB messages
// between two processes: 4499 MB/s plain, 2261 MB/s encrypted, medians of
// 7 alternating rounds; 8-byte latency 8.01 and 8.08 us; docs/security.md).
var LoopbackPlain = true

// ParseProtect reads a protection mode as MPIGO_TCP_PROTECT spells it:
// "" or "auto", "on" (or "encrypt"), "off".
func ParseProtect(s string) (Protect, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "auto":
		return ProtectAuto, nil
	case "on", "encrypt", "1", "true":
		return ProtectEncrypt, nil
	case "off", "0", "false", "none":
		return ProtectOff, nil
	}
	return ProtectAuto, fmt.Errorf("tcp protection %q: want auto, on or off", s)
}

func (p Protect) String() string {
	switch p {
	case ProtectAuto:
		return "auto"
	case ProtectEncrypt:
		return "encrypt"
	case ProtectOff:
		return "off"
	}
	return fmt.Sprintf("Protect(%d)", uint8(p))
}

// ProtectFor returns the protection a connection between local and remote
// gets under p: p itself, unless p is ProtectAuto.
func ProtectFor(p Protect, local, remote net.Addr) Protect {
	if p != ProtectAuto {
		return p
	}
	if LoopbackPlain && isLoopback(local) && isLoopback(remote) {
		return ProtectOff
	}
	return ProtectEncrypt
}

func isLoopback(a net.Addr) bool {
	ta, ok := a.(*net.TCPAddr)
	return ok && ta.IP.IsLoopback()
}

// The handshake (see the package doc):
//
//	acceptor -> dialer: challenge  Na[32]
//	dialer -> acceptor: greeting   hello[18] mode[1] Nd[32] Pd[32] mac[32]
//	acceptor -> dialer: answer     mode[1] redirect[1] Pa[32] mac[32]
//
// hello is magic, wire version, job id and rank; Pd and Pa are ephemeral
// X25519 public keys. The greeting's mac is HMAC-SHA256, keyed with the
// job's secret, of a label, Na and the greeting before the mac; the
// answer's, of another label, Na, the whole greeting, the acceptor's hello
// (as the dialer expects it) and the answer before the mac. A relay that
// does not know the secret can neither complete a handshake of its own nor
// replace a public key, and replaying a recorded greeting or answer fails
// against the fresh challenge of the other side.
const (
	handshakeSize = 5 + 1 + 8 + 4 // magic, version, job, rank
	nonceSize     = 32
	macSize       = sha256.Size
	pubSize       = 32 // X25519
	greetingSize  = handshakeSize + 1 + nonceSize + pubSize + macSize
	answerSize    = 1 + 1 + pubSize + macSize
	keySize       = 16 // AES-128
	tagSize       = 16 // GCM
	// chunkSize is the most payload one sealed record carries: a frame's
	// payload is sealed and checked in records of this size, so a
	// reader never needs more than one record's buffer and a sealed
	// record is written while it is in the cache.
	chunkSize = 64 << 10
)

const (
	dialLabel   = "mpigo tcp dialer v2"
	acceptLabel = "mpigo tcp acceptor v2"
	keysLabel   = "mpigo tcp keys v2"
)

var magic = [5]byte{'M', 'P', 'I', 'G', 'O'}

// hello is the identity part of the handshake of rank in job.
func hello(job uint64, rank int) []byte {
	var hs [handshakeSize]byte
	copy(hs[:], magic[:])
	hs[5] = wire.Version
	binary.LittleEndian.PutUint64(hs[6:], job)
	binary.LittleEndian.PutUint32(hs[14:], uint32(rank))
	return hs[:]
}

// mac proves knowledge of secret for the parts, which are fixed-size
// fields except possibly the last.
func mac(secret []byte, parts ...[]byte) []byte {
	m := hmac.New(sha256.New, secret)
	for _, p := range parts {
		m.Write(p)
	}
	return m.Sum(nil)
}

// greeting is the dialer's answer to the acceptor's challenge.
func greeting(secret, challenge []byte, job uint64, rank int, mode Protect, mine, pub []byte) []byte {
	g := make([]byte, 0, greetingSize)
	g = append(g, hello(job, rank)...)
	g = append(g, byte(mode))
	g = append(g, mine...)
	g = append(g, pub...)
	return append(g, mac(secret, []byte(dialLabel), challenge, g)...)
}

// greetingMsg is a checked greeting.
type greetingMsg struct {
	rank  int
	mode  Protect
	nonce []byte
	pub   []byte
}

// checkGreeting decodes and checks a dialer's greeting to challenge for
// the job of size ranks. It never panics, whatever g holds.
func checkGreeting(secret []byte, job uint64, size int, challenge, g []byte) (greetingMsg, error) {
	var m greetingMsg
	if len(g) != greetingSize {
		return m, fmt.Errorf("tcp: a greeting of %d bytes, want %d", len(g), greetingSize)
	}
	if string(g[:5]) != string(magic[:]) {
		return m, errors.New("tcp: a connection that does not speak mpigo (bad magic)")
	}
	if g[5] != wire.Version {
		return m, fmt.Errorf("tcp: peer speaks wire version %d, we speak %d", g[5], wire.Version)
	}
	if id := binary.LittleEndian.Uint64(g[6:]); id != job {
		return m, fmt.Errorf("tcp: peer belongs to job %d, we are job %d", id, job)
	}
	r := binary.LittleEndian.Uint32(g[14:])
	if uint64(r) >= uint64(size) {
		return m, fmt.Errorf("tcp: peer claims rank %d in a job of %d", r, size)
	}
	signed := g[:greetingSize-macSize]
	if !hmac.Equal(g[len(signed):], mac(secret, []byte(dialLabel), challenge, signed)) {
		return m, errors.New("tcp: peer does not know the job's secret")
	}
	mode := Protect(g[handshakeSize])
	if mode < ProtectEncrypt || mode > ProtectOff {
		return m, fmt.Errorf("tcp: rank %d asks for an unknown protection %d", r, mode)
	}
	off := handshakeSize + 1
	return greetingMsg{rank: int(r), mode: mode, nonce: g[off : off+nonceSize], pub: g[off+nonceSize : off+nonceSize+pubSize]}, nil
}

// answer is the acceptor's reply to greeting g, sent to challenge.
func answer(secret, challenge, g []byte, job uint64, rank int, mode Protect, redirect bool, pub []byte) []byte {
	a := make([]byte, 0, answerSize)
	a = append(a, byte(mode), 0)
	if redirect {
		a[1] = 1
	}
	a = append(a, pub...)
	return append(a, mac(secret, []byte(acceptLabel), challenge, g, hello(job, rank), a)...)
}

// answerMsg is a checked answer.
type answerMsg struct {
	mode     Protect
	redirect bool
	pub      []byte
}

// checkAnswer decodes and checks the answer a of rank peer to greeting g,
// sent to challenge. It never panics, whatever a holds.
func checkAnswer(secret []byte, job uint64, peer int, challenge, g, a []byte) (answerMsg, error) {
	var m answerMsg
	if len(a) != answerSize {
		return m, fmt.Errorf("tcp: an answer of %d bytes, want %d", len(a), answerSize)
	}
	signed := a[:answerSize-macSize]
	if !hmac.Equal(a[len(signed):], mac(secret, []byte(acceptLabel), challenge, g, hello(job, peer), signed)) {
		return m, errors.New("does not know the job's secret")
	}
	mode := Protect(a[0])
	if mode < ProtectEncrypt || mode > ProtectOff || a[1] > 1 {
		return m, fmt.Errorf("answered with unknown protection %d or redirect %d", a[0], a[1])
	}
	return answerMsg{mode: mode, redirect: a[1] == 1, pub: a[2 : 2+pubSize]}, nil
}

// agree computes the secret this side's ephemeral key priv shares with
// the peer's public key.
func agree(priv *ecdh.PrivateKey, peerPub []byte) ([]byte, error) {
	pub, err := ecdh.X25519().NewPublicKey(peerPub)
	if err != nil {
		return nil, fmt.Errorf("key agreement: %w", err)
	}
	shared, err := priv.ECDH(pub)
	if err != nil {
		return nil, fmt.Errorf("key agreement: %w", err)
	}
	return shared, nil
}

// derive makes the two directions' ciphers of a connection from the
// agreed secret, the job's secret and the transcript of the handshake
// (challenge, greeting, answer), so that the keys belong to this
// handshake only. dialer says which side this is.
func derive(secret, shared, challenge, g, a []byte, dialer bool) (*sealer, *opener, error) {
	th := sha256.New()
	th.Write(challenge)
	th.Write(g)
	th.Write(a)
	keys, err := hkdf.Key(sha256.New, shared, secret, keysLabel+string(th.Sum(nil)), 2*keySize)
	if err != nil {
		return nil, nil, fmt.Errorf("key derivation: %w", err)
	}
	toAcceptor, toDialer := keys[:keySize], keys[keySize:]
	if !dialer {
		toAcceptor, toDialer = toDialer, toAcceptor
	}
	w, err := newAEAD(toAcceptor)
	if err != nil {
		return nil, nil, err
	}
	r, err := newAEAD(toDialer)
	if err != nil {
		return nil, nil, err
	}
	return &sealer{aead: w}, &opener{aead: r}, nil
}

func newAEAD(key []byte) (cipher.AEAD, error) {
	b, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(b)
}

// counter sets nonce to the record number n. Every record of a direction
// has its own number, so a record replayed, reordered or dropped on the
// way fails its check.
func counter(nonce *[12]byte, n uint64) []byte {
	binary.BigEndian.PutUint64(nonce[4:], n)
	return nonce[:]
}

// A sealer protects the frames one side writes on a connection; its owner
// serialises the writes.
type sealer struct {
	aead  cipher.AEAD
	n     uint64 // records sealed
	nonce [12]byte
	buf   []byte // the sealed records of one write
}

// errExhausted ends a connection whose record numbers ran out (2^64
// records: never, in practice).
var errExhausted = errors.New("tcp: record counter exhausted")

// write writes the frame with header hdr and payload p to w: the header
// as one record, the payload as records of at most chunkSize bytes.
func (s *sealer) write(w io.Writer, hdr, p []byte) error {
	if s.n > ^uint64(0)-uint64(len(p)/chunkSize)-2 {
		return errExhausted
	}
	need := len(hdr) + tagSize + min(len(p), chunkSize) + tagSize
	if cap(s.buf) < need {
		s.buf = make([]byte, 0, max(need, 4<<10))
	}
	buf := s.aead.Seal(s.buf[:0], counter(&s.nonce, s.n), hdr, nil)
	s.n++
	for {
		k := min(len(p), chunkSize)
		if k > 0 {
			buf = s.aead.Seal(buf, counter(&s.nonce, s.n), p[:k], nil)
			s.n++
			p = p[k:]
		}
		if _, err := w.Write(buf); err != nil {
			return err
		}
		if len(p) == 0 {
			return nil
		}
		buf = buf[:0]
	}
}

// An opener checks and decrypts the frames read from a connection.
type opener struct {
	aead  cipher.AEAD
	n     uint64 // records opened
	nonce [12]byte
	rec   []byte
}

// IntegrityError reports a record that failed its check: the bytes were
// altered, replayed, reordered, cut or dropped between the two ranks.
type IntegrityError struct {
	Record uint64 // the record's number on its connection
}

func (e *IntegrityError) Error() string {
	return fmt.Sprintf("integrity check failed at record %d: the data was altered, replayed, reordered or dropped in transit", e.Record)
}

// ErrIntegrity matches every *IntegrityError with errors.Is.
var ErrIntegrity = errors.New("integrity check failed")

func (e *IntegrityError) Is(target error) bool { return target == ErrIntegrity }

// read reads one record of k plaintext bytes from r and decrypts it into
// dst[:k].
func (o *opener) read(r io.Reader, dst []byte, k int) error {
	if cap(o.rec) < k+tagSize {
		o.rec = make([]byte, max(k+tagSize, 4<<10))
	}
	rec := o.rec[:k+tagSize]
	if _, err := io.ReadFull(r, rec); err != nil {
		return err
	}
	if _, err := o.aead.Open(dst[:0], counter(&o.nonce, o.n), rec, nil); err != nil {
		return &IntegrityError{Record: o.n}
	}
	o.n++
	return nil
}

// readFramesProtected is ReadFrames for a connection protected by o: a
// frame's header is one record, its payload records of at most chunkSize
// bytes, as sealed by the sender.
func readFramesProtected(r io.Reader, o *opener, self, peer, limit int, h transport.Handler, place func(h *wire.Header, from, n int) []byte) error {
	return readFrames(func(b []byte) error {
		for off := 0; off < len(b); off += chunkSize {
			if err := o.read(r, b[off:], min(len(b)-off, chunkSize)); err != nil {
				return err
			}
		}
		return nil
	}, self, peer, limit, h, place)
}
