package boot

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"time"
)

// A MUNGE client: credentials made and checked by munged, the
// authentication daemon of Slurm clusters, without libmunge.
//
// munged listens on a unix socket (/run/munge/munge.socket.2). A client
// connects, sends one request and reads one reply; munged learns the
// client's uid and gid from the socket itself (SO_PEERCRED), so a
// credential it makes proves who asked for it to any munged that shares
// the cluster's key. Every message is an 11-byte header and a body, all
// integers big-endian:
//
//	header:  uint32 magic 0x00606d4b, byte version 4, byte type,
//	         byte retry (0 on the first attempt), uint32 body length
//	2 encode request:  byte cipher, byte mac, byte zip (1: munged's
//	         defaults), byte realm length (0), uint32 ttl (0: munged's
//	         default), uint32 uid and uint32 gid allowed to decode
//	         (0xffffffff: anyone), uint32 payload length, payload
//	3 encode reply:    byte error, byte message length, message (with
//	         its NUL), uint32 length, credential ("MUNGE:...:", NUL)
//	4 decode request:  uint32 length, credential with its NUL
//	5 decode reply:    byte error, byte message length, message, byte
//	         cipher, mac, zip, byte realm length, realm, uint32 ttl, byte
//	         address length, address (IPv4 of the encoding host), uint32
//	         time encoded, uint32 time decoded, uint32 uid, uint32 gid
//	         (who made it), uint32 uid, uint32 gid (who may decode it),
//	         uint32 payload length, payload
//
// A credential decodes once (munged refuses a replay) and only within its
// time to live (5 minutes by default).

const (
	mungeMagic   = 0x00606d4b
	mungeVersion = 4
	mungeHdrSize = 11

	mungeEncReq = 2
	mungeEncRsp = 3
	mungeDecReq = 4
	mungeDecRsp = 5

	// mungeAny is the uid or gid that lets anyone decode a credential.
	mungeAny = 0xffffffff

	// maxMungeMsg bounds a reply from munged (a credential is a few
	// hundred bytes; its payload is ours and small).
	maxMungeMsg = 64 << 10
)

// mungeSockets are where munged listens by default.
var mungeSockets = []string{"/run/munge/munge.socket.2", "/var/run/munge/munge.socket.2"}

// mungeSocket is the socket of munged: MPIGO_MUNGE_SOCKET, else the first
// default that exists.
func mungeSocket(env lookupFunc) string {
	if s := getenv(env, "MPIGO_MUNGE_SOCKET"); s != "" {
		return s
	}
	for _, s := range mungeSockets {
		if _, err := os.Stat(s); err == nil {
			return s
		}
	}
	return mungeSockets[0]
}

// mungeErrNames names munged's error numbers.
var mungeErrNames = map[byte]string{
	1: "internal error", 2: "invalid argument", 3: "message too long",
	4: "buffer overflow", 5: "out of memory", 6: "socket error",
	7: "socket timeout", 8: "invalid credential format",
	9: "invalid credential version", 10: "invalid cipher", 11: "invalid MAC",
	12: "invalid compression", 13: "unknown security realm",
	14: "invalid credential", 15: "expired credential",
	16: "rewound credential (made in the future)", 17: "replayed credential",
	18: "not authorized to decode this credential",
}

// mungeError is munged's refusal of a request.
type mungeError struct {
	Num byte
	Msg string
}

func (e *mungeError) Error() string {
	name := mungeErrNames[e.Num]
	if name == "" {
		name = fmt.Sprintf("error %d", e.Num)
	}
	if e.Msg != "" && e.Msg != name {
		return fmt.Sprintf("munged: %s (%s)", name, e.Msg)
	}
	return "munged: " + name
}

// mungeCred is what a decoded credential says.
type mungeCred struct {
	UID, GID         uint32 // who made it
	AuthUID, AuthGID uint32 // who may decode it (mungeAny: anyone)
	Encoded          time.Time
	Addr             net.IP // host it was made on
	Payload          []byte
}

// mungeHeader is the header of a message of type typ with a body of n
// bytes.
func mungeHeader(typ byte, n int) []byte {
	h := binary.BigEndian.AppendUint32(make([]byte, 0, mungeHdrSize), mungeMagic)
	h = append(h, mungeVersion, typ, 0)
	return binary.BigEndian.AppendUint32(h, uint32(n))
}

// parseMungeHeader checks a header and returns its type and body length.
func parseMungeHeader(h []byte) (typ byte, n uint32, err error) {
	if len(h) < mungeHdrSize {
		return 0, 0, errors.New("short header")
	}
	if m := binary.BigEndian.Uint32(h); m != mungeMagic {
		return 0, 0, fmt.Errorf("not munged (magic %#x)", m)
	}
	if h[4] != mungeVersion {
		return 0, 0, fmt.Errorf("munged speaks protocol version %d, not %d", h[4], mungeVersion)
	}
	n = binary.BigEndian.Uint32(h[7:])
	if n > maxMungeMsg {
		return 0, 0, fmt.Errorf("a reply of %d bytes (at most %d make sense)", n, maxMungeMsg)
	}
	return h[5], n, nil
}

// mungeEncodeReq is the body of a request for a credential carrying
// payload that uid (mungeAny: anyone) may decode.
func mungeEncodeReq(payload []byte, uid uint32) []byte {
	b := []byte{1, 1, 1, 0} // munged's cipher, mac, zip; no realm
	b = binary.BigEndian.AppendUint32(b, 0)
	b = binary.BigEndian.AppendUint32(b, uid)
	b = binary.BigEndian.AppendUint32(b, mungeAny)
	b = binary.BigEndian.AppendUint32(b, uint32(len(payload)))
	return append(b, payload...)
}

// mungeDecodeReq is the body of a request to check cred.
func mungeDecodeReq(cred string) []byte {
	b := binary.BigEndian.AppendUint32(nil, uint32(len(cred)+1))
	b = append(b, cred...)
	return append(b, 0)
}

// mungeReader reads the fields of a reply body, remembering the first
// shortfall.
type mungeReader struct {
	b   []byte
	err error
}

func (r *mungeReader) take(n int) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || n > len(r.b) {
		r.err = fmt.Errorf("the reply ends %d bytes early", n-len(r.b))
		return nil
	}
	v := r.b[:n:n]
	r.b = r.b[n:]
	return v
}

func (r *mungeReader) u8() byte {
	if v := r.take(1); v != nil {
		return v[0]
	}
	return 0
}

func (r *mungeReader) u32() uint32 {
	if v := r.take(4); v != nil {
		return binary.BigEndian.Uint32(v)
	}
	return 0
}

// cstr reads a string of n bytes that may end in a NUL.
func (r *mungeReader) cstr(n int) string {
	v := r.take(n)
	for len(v) > 0 && v[len(v)-1] == 0 {
		v = v[:len(v)-1]
	}
	return string(v)
}

// status reads the error number and message that start every reply.
func (r *mungeReader) status() error {
	num := r.u8()
	msg := r.cstr(int(r.u8()))
	if r.err == nil && num != 0 {
		return &mungeError{Num: num, Msg: msg}
	}
	return nil
}

// parseMungeEncodeRsp reads the credential out of an encode reply.
func parseMungeEncodeRsp(b []byte) (string, error) {
	r := &mungeReader{b: b}
	st := r.status()
	cred := r.cstr(int(r.u32()))
	if r.err != nil {
		return "", r.err
	}
	if st != nil {
		return "", st
	}
	if len(cred) == 0 {
		return "", errors.New("munged sent an empty credential")
	}
	return cred, nil
}

// parseMungeDecodeRsp reads what a credential says out of a decode reply.
// The error is munged's verdict (a *mungeError) when the reply is whole.
func parseMungeDecodeRsp(b []byte) (mungeCred, error) {
	var c mungeCred
	r := &mungeReader{b: b}
	st := r.status()
	r.take(3) // cipher, mac, zip
	r.take(int(r.u8()))
	r.u32() // ttl
	if addr := r.take(int(r.u8())); len(addr) == 4 || len(addr) == 16 {
		c.Addr = net.IP(addr)
	}
	c.Encoded = time.Unix(int64(r.u32()), 0)
	r.u32() // decoded
	c.UID, c.GID = r.u32(), r.u32()
	c.AuthUID, c.AuthGID = r.u32(), r.u32()
	c.Payload = r.take(int(r.u32()))
	if r.err != nil {
		return mungeCred{}, r.err
	}
	return c, st
}

// mungeXfer sends munged at sock one request and returns the body of its
// reply of type want, all within d.
func mungeXfer(sock string, typ byte, body []byte, want byte, d time.Duration) ([]byte, error) {
	conn, err := net.DialTimeout("unix", sock, d)
	if err != nil {
		return nil, fmt.Errorf("cannot reach munged at %s (is munged running?): %w", sock, err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(d))
	if _, err := conn.Write(append(mungeHeader(typ, len(body)), body...)); err != nil {
		return nil, fmt.Errorf("munged at %s: %w", sock, err)
	}
	rsp, err := readMungeMsg(conn, want)
	if err != nil {
		return nil, fmt.Errorf("munged at %s: %w", sock, err)
	}
	return rsp, nil
}

// readMungeMsg reads one message of type want from r.
func readMungeMsg(r io.Reader, want byte) ([]byte, error) {
	var h [mungeHdrSize]byte
	if n, err := io.ReadFull(r, h[:]); err != nil {
		return nil, mungeIOError(err, n)
	}
	typ, n, err := parseMungeHeader(h[:])
	if err != nil {
		return nil, err
	}
	if typ != want {
		return nil, fmt.Errorf("a reply of type %d to a request that wants %d", typ, want)
	}
	body := make([]byte, n)
	if got, err := io.ReadFull(r, body); err != nil {
		return nil, mungeIOError(err, got)
	}
	return body, nil
}

func mungeIOError(err error, got int) error {
	switch {
	case errors.Is(err, os.ErrDeadlineExceeded):
		return errors.New("no reply in time")
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Errorf("the connection closed after %d bytes of the reply", got)
	}
	return err
}

// mungeEncode asks munged at sock for a credential carrying payload that
// uid may decode (mungeAny: anyone).
func mungeEncode(sock string, payload []byte, uid uint32, d time.Duration) (string, error) {
	rsp, err := mungeXfer(sock, mungeEncReq, mungeEncodeReq(payload, uid), mungeEncRsp, d)
	if err != nil {
		return "", err
	}
	cred, err := parseMungeEncodeRsp(rsp)
	if err != nil {
		return "", fmt.Errorf("munged at %s: %w", sock, err)
	}
	return cred, nil
}

// mungeDecode asks munged at sock what cred says; a credential munged
// refuses (expired, replayed, forged) is an error.
func mungeDecode(sock, cred string, d time.Duration) (mungeCred, error) {
	if len(cred) == 0 || len(cred)+1 > maxMungeMsg {
		return mungeCred{}, fmt.Errorf("a credential of %d bytes", len(cred))
	}
	rsp, err := mungeXfer(sock, mungeDecReq, mungeDecodeReq(cred), mungeDecRsp, d)
	if err != nil {
		return mungeCred{}, err
	}
	c, err := parseMungeDecodeRsp(rsp)
	if err != nil {
		return mungeCred{}, fmt.Errorf("munged at %s: %w", sock, err)
	}
	return c, nil
}
