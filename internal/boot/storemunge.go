package boot

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"time"

	"github.com/mpigo/mpi/internal/sockerr"
)

// A store authenticated by MUNGE instead of a shared secret: the side
// channel rank 0 serves under Open MPI's mpirun when the job spans
// several nodes and nothing secret reaches every rank before the store
// exists. munged, which runs on every node of a Slurm-style cluster with
// one key, vouches for the user on each side of each connection:
//
//	(server) mpigo-kvs 1 munge SNONCE   SNONCE: 32 random bytes, in hex
//	auth munge CNONCE CCRED             CCRED: a credential whose payload is
//	                                    "mpigo-kvs client\0" SNONCE "\0" CNONCE
//	                                    "\0" PORT (the store's, as dialed)
//	(server) ok SCRED                   SCRED: payload "mpigo-kvs server\0"
//	                                    SNONCE "\0" CNONCE "\0" PORT, that
//	                                    only the server's uid may decode
//
// The server accepts a client whose credential munged decodes as made by
// the server's own uid for this greeting (munged refuses a replay); the
// client accepts a server whose credential it can decode, made by its own
// uid for this exchange. Another user's process can neither use the store
// nor pose as it.

const kvsMungeLine = 4096 // a line of the munge handshake (credentials are long)

// newMungeServer starts a store whose clients prove with MUNGE (munged
// at sock) that they run as this process's user.
func newMungeServer(addr string, size int, sock string) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("boot: key-value store: %w", err)
	}
	return serveOnAuth(ln, size, nil, sock), nil
}

// mungePayload is what a credential of the handshake carries: the side
// that made it, both nonces and the store's port (as the client dialed
// it; as the store listens), so that a process that took another of the
// job's ports cannot relay a rank's handshake to the store.
func mungePayload(side, snonce, cnonce, port string) []byte {
	return []byte("mpigo-kvs " + side + "\x00" + snonce + "\x00" + cnonce + "\x00" + port)
}

// port is the port the store listens on ("" without a listener: tests).
func (s *Server) port() string {
	if s.ln == nil {
		return ""
	}
	_, port, _ := net.SplitHostPort(s.ln.Addr().String())
	return port
}

// checkMungeCred decodes cred and checks that uid made it with payload.
func checkMungeCred(sock, cred string, uid uint32, payload []byte, d time.Duration) error {
	c, err := mungeDecode(sock, cred, d)
	if err != nil {
		return err
	}
	if c.UID != uid {
		return fmt.Errorf("the credential is uid %d's, not uid %d's", c.UID, uid)
	}
	if string(c.Payload) != string(payload) {
		return errors.New("the credential is for another exchange")
	}
	return nil
}

// mungeHandshake is the server's side of the munge handshake.
func (s *Server) mungeHandshake(c net.Conn, r *bufio.Reader) error {
	c.SetDeadline(time.Now().Add(handshakeTimeout))
	snonce, err := newNonce()
	if err != nil {
		return err
	}
	if _, err := io.WriteString(c, kvsGreeting+" munge "+snonce+"\n"); err != nil {
		return err
	}
	line, err := readLimited(r, kvsMungeLine)
	if err != nil {
		return err
	}
	f := strings.Fields(line)
	if len(f) != 4 || f[0] != "auth" || f[1] != "munge" || len(f[2]) != 64 {
		io.WriteString(c, "err want auth munge CNONCE CREDENTIAL\n")
		return fmt.Errorf("bad handshake %.40q", line)
	}
	me := uint32(os.Geteuid())
	if err := checkMungeCred(s.munge, f[3], me, mungePayload("client", snonce, f[2], s.port()), handshakeTimeout); err != nil {
		io.WriteString(c, "err not this user's job\n")
		return fmt.Errorf("the client's munge credential: %w", err)
	}
	cred, err := mungeEncode(s.munge, mungePayload("server", snonce, f[2], s.port()), me, handshakeTimeout)
	if err != nil {
		io.WriteString(c, "err the store cannot make its credential\n")
		return err
	}
	if _, err := io.WriteString(c, "ok "+cred+"\n"); err != nil {
		return err
	}
	c.SetDeadline(time.Time{})
	return nil
}

// mungeClientHandshake is the client's side of the munge handshake.
func mungeClientHandshake(c net.Conn, r *bufio.Reader, sock, port string, d time.Duration) error {
	c.SetDeadline(time.Now().Add(d))
	defer c.SetDeadline(time.Time{})
	line, err := readLimited(r, 512)
	if err != nil {
		if errors.Is(err, io.EOF) || sockerr.Reset(err) {
			return errNoGreeting
		}
		return fmt.Errorf("no greeting: %w", err)
	}
	snonce, ok := strings.CutPrefix(line, kvsGreeting+" munge ")
	if !ok || len(snonce) != 64 {
		return fmt.Errorf("the store does not ask for a munge credential: not this job's store (greeting %.60q)", line)
	}
	cnonce, err := newNonce()
	if err != nil {
		return err
	}
	me := uint32(os.Geteuid())
	cred, err := mungeEncode(sock, mungePayload("client", snonce, cnonce, port), me, d)
	if err != nil {
		return err
	}
	if _, err := io.WriteString(c, "auth munge "+cnonce+" "+cred+"\n"); err != nil {
		return err
	}
	line, err = readLimited(r, kvsMungeLine)
	if err != nil {
		return fmt.Errorf("handshake: %w", err)
	}
	scred, ok := strings.CutPrefix(line, "ok ")
	if !ok {
		return fmt.Errorf("handshake refused: %.80q", line)
	}
	if err := checkMungeCred(sock, scred, me, mungePayload("server", snonce, cnonce, port), d); err != nil {
		return fmt.Errorf("the store's munge credential: %w: not this user's store", err)
	}
	return nil
}

// dialMungeStore connects rank to the munge-authenticated store at addr,
// within d.
func dialMungeStore(addr string, rank int, sock string, d time.Duration) (KV, error) {
	d = cmp(d, dialHandshakeTimeout)
	c, err := net.DialTimeout("tcp", addr, d)
	if err != nil {
		return nil, fmt.Errorf("boot: cannot reach the key-value store at %s: %w", addr, err)
	}
	r := bufio.NewReaderSize(c, 4096)
	_, port, _ := net.SplitHostPort(addr)
	if err := mungeClientHandshake(c, r, sock, port, d); err != nil {
		c.Close()
		return nil, fmt.Errorf("boot: the key-value store at %s: %w", addr, err)
	}
	k := &client{conn: c, r: r}
	c.SetDeadline(time.Now().Add(d))
	if _, err := k.call(fmt.Sprintf("hello %d", rank)); err != nil {
		c.Close()
		return nil, err
	}
	c.SetDeadline(time.Time{})
	return k, nil
}
