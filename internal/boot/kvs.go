package boot

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"time"
)

// The launcher's store speaks a line protocol over TCP, one request and
// one answer per line, so that it can be debugged with nc:
//
//	hello RANK         -> ok
//	put KEY VALUE      -> ok
//	fence              -> ok            (once every rank has sent fence)
//	get KEY            -> val VALUE | err MESSAGE
//	watch              -> (no answer; the connection stays open while the
//	                      launcher lives, so a rank learns of its death)
//
// Keys contain no spaces; values run to the end of the line and contain no
// newline.

// Server is the launcher's side of the store for a job of Size processes
// (a fence completes when all of them have reached it).
type Server struct {
	ln   net.Listener
	size int

	mu      sync.Mutex
	data    map[string]string
	fenced  int           // ranks waiting at the current fence
	release chan struct{} // closed when the current fence completes
	closed  bool
	conns   map[net.Conn]bool
	wg      sync.WaitGroup
}

// NewServer starts a store for a job of size processes, listening on addr
// (e.g. "127.0.0.1:0").
func NewServer(addr string, size int) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("boot: key-value store: %w", err)
	}
	s := &Server{ln: ln, size: size, data: map[string]string{}, release: make(chan struct{}), conns: map[net.Conn]bool{}}
	s.wg.Add(1)
	go s.accept()
	return s, nil
}

// Preset stores a value before any rank connects (a store served by rank
// 0 of a job started by mpirun says which job it belongs to).
func (s *Server) Preset(key, value string) {
	s.mu.Lock()
	s.data[key] = value
	s.mu.Unlock()
}

// Addr returns the address ranks connect to.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Close stops the server and drops its connections.
func (s *Server) Close() error {
	s.mu.Lock()
	s.closed = true
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	err := s.ln.Close()
	s.wg.Wait()
	return err
}

func (s *Server) accept() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			c.Close()
			return
		}
		s.conns[c] = true
		s.mu.Unlock()
		s.wg.Add(1)
		go s.serve(c)
	}
}

func (s *Server) serve(c net.Conn) {
	defer s.wg.Done()
	defer func() {
		s.mu.Lock()
		delete(s.conns, c)
		s.mu.Unlock()
		c.Close()
	}()
	r := bufio.NewReader(c)
	w := bufio.NewWriter(c)
	reply := func(format string, args ...any) bool {
		fmt.Fprintf(w, format+"\n", args...)
		return w.Flush() == nil
	}
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		cmd, rest, _ := strings.Cut(strings.TrimRight(line, "\r\n"), " ")
		switch cmd {
		case "hello":
			if !reply("ok") {
				return
			}
		case "put":
			key, val, ok := strings.Cut(rest, " ")
			if !ok || key == "" {
				if !reply("err put needs a key and a value") {
					return
				}
				continue
			}
			s.mu.Lock()
			s.data[key] = val
			s.mu.Unlock()
			if !reply("ok") {
				return
			}
		case "get":
			s.mu.Lock()
			v, ok := s.data[rest]
			s.mu.Unlock()
			if ok {
				if !reply("val %s", v) {
					return
				}
			} else if !reply("err no value for key %s", rest) {
				return
			}
		case "watch":
			// Block until the launcher closes the store (or dies): the
			// rank's read then fails and it knows to exit.
			io.Copy(io.Discard, r)
			return
		case "fence":
			s.mu.Lock()
			wait := s.release
			s.fenced++
			if s.fenced == s.size {
				close(s.release)
				s.release = make(chan struct{})
				s.fenced = 0
			}
			s.mu.Unlock()
			<-wait
			if !reply("ok") {
				return
			}
		default:
			if !reply("err unknown command %q", cmd) {
				return
			}
		}
	}
}

// client is a rank's connection to the store.
type client struct {
	mu   sync.Mutex
	conn net.Conn
	r    *bufio.Reader
}

// Dial connects rank to the store at addr.
func Dial(addr string, rank int) (KV, error) {
	return DialTimeout(addr, rank, 0)
}

// DialTimeout is Dial with a bound on the time to connect and be greeted
// (0: none).
func DialTimeout(addr string, rank int, d time.Duration) (KV, error) {
	c, err := net.DialTimeout("tcp", addr, d)
	if err != nil {
		return nil, fmt.Errorf("boot: cannot reach the launcher's key-value store at %s (%s): %w", addr, EnvKVS, err)
	}
	k := &client{conn: c, r: bufio.NewReader(c)}
	if d > 0 {
		c.SetDeadline(time.Now().Add(d))
	}
	if _, err := k.call(fmt.Sprintf("hello %d", rank)); err != nil {
		c.Close()
		return nil, err
	}
	c.SetDeadline(time.Time{})
	return k, nil
}

func (k *client) call(req string) (string, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if _, err := fmt.Fprintf(k.conn, "%s\n", req); err != nil {
		return "", fmt.Errorf("boot: key-value store: %w", err)
	}
	line, err := k.r.ReadString('\n')
	if err != nil {
		return "", fmt.Errorf("boot: key-value store closed the connection (did the launcher exit?): %w", err)
	}
	line = strings.TrimRight(line, "\r\n")
	if msg, ok := strings.CutPrefix(line, "err "); ok {
		return "", errors.New("boot: " + msg)
	}
	return line, nil
}

func (k *client) Put(key, value string) error {
	if strings.ContainsAny(key, " \n") || strings.Contains(value, "\n") {
		return fmt.Errorf("boot: bad key or value %q=%q", key, value)
	}
	_, err := k.call("put " + key + " " + value)
	return err
}

func (k *client) Fence() error {
	_, err := k.call("fence")
	return err
}

func (k *client) Get(key string) (string, error) {
	line, err := k.call("get " + key)
	if err != nil {
		return "", err
	}
	v, ok := strings.CutPrefix(line, "val ")
	if !ok {
		return "", fmt.Errorf("boot: bad answer %q", line)
	}
	return v, nil
}

func (k *client) Close() error { return k.conn.Close() }

// Watch calls lost (on its own goroutine) if the launcher's store goes
// away, which happens when the launcher exits or dies: a rank started on
// another host through ssh has no other way to learn it is orphaned.
func Watch(addr string, lost func()) error {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return fmt.Errorf("boot: cannot watch the launcher at %s: %w", addr, err)
	}
	if _, err := io.WriteString(c, "watch\n"); err != nil {
		c.Close()
		return err
	}
	go func() {
		io.Copy(io.Discard, c)
		lost()
	}()
	return nil
}
