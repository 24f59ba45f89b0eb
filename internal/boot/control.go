package boot

// The launcher's services beyond the store, on a connection of their own
// (DialControl): spawning processes for a rank (MPI_Comm_spawn) and the
// name service (MPI_Publish_name, MPI_Lookup_name). Only `mpigo run`
// offers them; a rank under another launcher is told at once that it
// cannot have them.

import (
	"bufio"
	"encoding/hex"
	"fmt"
	"net"
	"strings"
	"sync"
	"time"
)

// Spawner starts the processes that req (JSON, package mpi's spawnReq)
// asks for, or says why it cannot; once they have started, done is
// called when their job ends, with its exit status ("0": success, else
// why).
type Spawner func(req string, done func(status string)) error

// SetSpawn has the store start processes for ranks that ask.
func (s *Server) SetSpawn(f Spawner) {
	s.mu.Lock()
	s.spawn = f
	s.mu.Unlock()
}

// Names is a name service: service names and the ports they name. One
// serves every job of a launcher (the job and the jobs it spawned).
type Names struct {
	mu sync.Mutex
	m  map[string]string
}

// NewNames returns an empty name service.
func NewNames() *Names { return &Names{m: map[string]string{}} }

// SetNames has the store serve names.
func (s *Server) SetNames(n *Names) {
	s.mu.Lock()
	s.names = n
	s.mu.Unlock()
}

// control serves one request of the launcher's services; it reports
// whether the connection lives on.
func (s *Server) control(sc *storeConn, cmd, rest string, reply func(string, ...any) bool) bool {
	s.mu.Lock()
	spawn, names := s.spawn, s.names
	s.mu.Unlock()
	if cmd == "spawn" {
		if spawn == nil {
			return reply("err this launcher cannot spawn")
		}
		c := sc.c
		err := spawn(rest, func(status string) {
			fmt.Fprintf(c, "done %s\n", strings.ReplaceAll(status, "\n", " "))
		})
		if err != nil {
			return reply("err %s", strings.ReplaceAll(err.Error(), "\n", " "))
		}
		return reply("ok")
	}
	if names == nil {
		return reply("err this launcher serves no names")
	}
	names.mu.Lock()
	defer names.mu.Unlock()
	switch cmd {
	case "publish":
		port, name, ok := strings.Cut(rest, " ")
		if !ok || name == "" {
			return reply("err publish needs a port and a name")
		}
		if _, had := names.m[name]; had {
			return reply("err the name %q is already published", name)
		}
		names.m[name] = port
		return reply("ok")
	case "lookup":
		if p, ok := names.m[rest]; ok {
			return reply("val %s", p)
		}
		return reply("err the name %q is not published", rest)
	default: // unpublish
		port, name, _ := strings.Cut(rest, " ")
		if p, ok := names.m[name]; !ok || p != port {
			return reply("err the name %q is not published with that port", name)
		}
		delete(names.m, name)
		return reply("ok")
	}
}

// DialControl opens a connection to the launcher's store of info's job
// for its services (spawn, names), after the handshake.
func DialControl(info *Info) (net.Conn, *bufio.Reader, error) {
	if info == nil || info.KVSAddr == "" {
		return nil, nil, fmt.Errorf("boot: no launcher to ask")
	}
	return dialStore(info.store(), 0)
}

// A name server of its own (mpigo nameserver) is a store that serves only
// names, for jobs started apart, under any launcher. Jobs find it through
// MPIGO_NAMESERVER, "HOST:PORT/SECRET" (the secret in hex): only a
// process given the secret can publish or look up.

// FormatNameServer is the MPIGO_NAMESERVER value of a name server.
func FormatNameServer(addr string, secret []byte) string {
	return addr + "/" + hex.EncodeToString(secret)
}

// ParseNameServer reads an MPIGO_NAMESERVER value.
func ParseNameServer(v string) (addr string, secret []byte, err error) {
	addr, hx, ok := strings.Cut(strings.TrimSpace(v), "/")
	if !ok || addr == "" {
		return "", nil, fmt.Errorf("%.80q: want HOST:PORT/SECRET, as mpigo nameserver prints it", v)
	}
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return "", nil, fmt.Errorf("%.80q: %v", v, err)
	}
	secret, err = hex.DecodeString(hx)
	if err != nil || len(secret) < 16 || len(secret) > 64 {
		return "", nil, fmt.Errorf("%.80q: the secret is not the hex of 16 to 64 bytes", v)
	}
	return addr, secret, nil
}

// DialNameServer opens a connection to the name server at addr, proving
// secret.
func DialNameServer(addr string, secret []byte) (net.Conn, *bufio.Reader, error) {
	return dialStore(storeAddr{addr: addr, secret: secret}, 5*time.Second)
}

// ServeNames starts a name server on addr with secret; Close stops it.
func ServeNames(addr string, secret []byte) (*Server, error) {
	s, err := NewServer(addr, 0, secret)
	if err != nil {
		return nil, err
	}
	s.SetNames(NewNames())
	return s, nil
}
