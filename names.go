package mpi

// The name service (MPI-4.1 section 11.4.4) and CommJoin (11.8). A name
// server of its own (mpigo nameserver), named by MPIGO_NAMESERVER, serves
// every job given its address, under any launcher. Without one, under
// `mpigo run` the launcher serves names to the job and to every job it
// spawned; jobs of goroutine ranks (Run) and singletons share a table in
// their process. Other launchers serve none: the calls fail at once with
// ErrService or ErrName, saying so.

import (
	"bufio"
	"crypto/rand"
	"encoding/binary"

	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mpigo/mpi/internal/boot"
)

// launchInfo is how this process was launched (runLaunched), for the
// launcher's name service.
var launchInfo atomic.Pointer[boot.Info]

var localNames struct {
	sync.Mutex
	m map[string]string
}

// nameSrv is a name service to ask: mpigo run's, or a name server of its
// own (mpigo nameserver, MPIGO_NAMESERVER).
type nameSrv struct {
	who  string // for errors: "mpigo run", "the name server at ADDR"
	dial func() (net.Conn, *bufio.Reader, error)
}

// askNames asks the name service ns req for op, which succeeds or fails
// with the service's answer as an ErrService.
func askNames(op string, ns *nameSrv, req string) error {
	msg, ok, err := ask(ns, req)
	if err != nil {
		return (*Comm)(nil).errorf(op, ErrService, loc{}, "asking %s: %v", ns.who, err)
	}
	if !ok {
		return (*Comm)(nil).errorf(op, ErrService, loc{}, "%s", msg)
	}
	return nil
}

// ask sends one request to a name service and returns its answer's text
// ("val X": X; "ok": ""), or the service's error.
func ask(ns *nameSrv, req string) (string, bool, error) {
	conn, r, err := ns.dial()
	if err != nil {
		return "", false, err
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(conn, req+"\n"); err != nil {
		return "", false, err
	}
	line, err := r.ReadString('\n')
	if err != nil {
		return "", false, err
	}
	line = strings.TrimSpace(line)
	if msg, ok := strings.CutPrefix(line, "err "); ok {
		return msg, false, nil
	}
	v, _ := strings.CutPrefix(line, "val ")
	if line == "ok" {
		v = ""
	}
	return v, true, nil
}

// nameService says which service the name calls use: a name server of its
// own if MPIGO_NAMESERVER names one, else the launcher's, the process's
// own (nil: local), or none (an error).
func nameService(op string) (*nameSrv, error) {
	if v := nameServerSetting(); v != "" {
		addr, secret, err := boot.ParseNameServer(v)
		if err != nil {
			return nil, (*Comm)(nil).errorf(op, ErrService, loc{}, "MPIGO_NAMESERVER: %v", err)
		}
		return &nameSrv{who: "the name server at " + addr, dial: func() (net.Conn, *bufio.Reader, error) {
			return boot.DialNameServer(addr, secret)
		}}, nil
	}
	info := launchInfo.Load()
	switch {
	case info == nil || info.Launcher == boot.LauncherSingleton:
		return nil, nil
	case info.Launcher == boot.LauncherMpigo:
		return &nameSrv{who: "mpigo run", dial: func() (net.Conn, *bufio.Reader, error) { return boot.DialControl(info) }}, nil
	}
	return nil, (*Comm)(nil).errorf(op, ErrService, loc{}, "the job was started by %s, which serves no names: start a name server (mpigo nameserver) and give every job its MPIGO_NAMESERVER, start the jobs with `mpigo run`, or give the port name to the other job another way (a file, its command line)", info.Launcher)
}

func checkServiceName(op, service string) error {
	if service == "" || strings.ContainsAny(service, "\n\r") {
		return (*Comm)(nil).errorf(op, ErrService, loc{}, "service name %q: want a non-empty name on one line", service)
	}
	return nil
}

// maxPortName is MPI_MAX_PORT_NAME: a port name has fewer bytes.
const maxPortName = 1024

// checkPortString checks a port name given to the name service: any
// text of one word (the service keeps it as it is and gives it back), as
// MPI lets a program publish a port name of any other origin (MPICH's
// spawn/namepub publishes "otherhost:122"); only ConnectComm and
// AcceptComm need a port of OpenPort's.
func checkPortString(op, port string) error {
	if port == "" || len(port) >= maxPortName || strings.ContainsAny(port, " \t\n\r") {
		return (*Comm)(nil).errorf(op, ErrPort, loc{}, "port name %.80q: want one word of fewer than %d bytes", port, maxPortName)
	}
	return nil
}

// PublishName publishes port (from OpenPort or any other one-word name) under the name service
// (MPI_Publish_name), for LookupName in other jobs of the same `mpigo run`
// (the job and the jobs it spawned), or of the same process for jobs of
// goroutine ranks. A name already published is ErrService. info is
// ignored and may be nil.
func PublishName(service string, info *Info, port string) (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("PublishName", nil, Undefined, Undefined), &err)
	}
	const op = "PublishName"
	if err := checkServiceName(op, service); err != nil {
		return err
	}
	if err := checkPortString(op, port); err != nil {
		return err
	}
	bi, err := nameService(op)
	if err != nil {
		return err
	}
	if bi == nil {
		localNames.Lock()
		defer localNames.Unlock()
		if localNames.m == nil {
			localNames.m = map[string]string{}
		}
		if _, had := localNames.m[service]; had {
			return (*Comm)(nil).errorf(op, ErrService, loc{}, "the name %q is already published", service)
		}
		localNames.m[service] = port
		return nil
	}
	return askNames(op, bi, "publish "+port+" "+service)
}

// LookupName returns the port published under service (MPI_Lookup_name);
// a name nobody published is ErrName. info is ignored and may be nil.
func LookupName(service string, info *Info) (_ string, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("LookupName", nil, Undefined, Undefined), &err)
	}
	const op = "LookupName"
	if err := checkServiceName(op, service); err != nil {
		return "", err
	}
	bi, err := nameService(op)
	if err != nil {
		return "", (*Comm)(nil).errorf(op, ErrName, loc{}, "%s", err.(*Error).Msg)
	}
	if bi == nil {
		localNames.Lock()
		defer localNames.Unlock()
		if p, ok := localNames.m[service]; ok {
			return p, nil
		}
		return "", (*Comm)(nil).errorf(op, ErrName, loc{}, "the name %q is not published", service)
	}
	v, ok, err := ask(bi, "lookup "+service)
	if err != nil {
		return "", (*Comm)(nil).errorf(op, ErrName, loc{}, "asking %s: %v", bi.who, err)
	}
	if !ok {
		return "", (*Comm)(nil).errorf(op, ErrName, loc{}, "%s", v)
	}
	return v, nil
}

// UnpublishName withdraws service, which names port (MPI_Unpublish_name);
// a name not published with that port is ErrService. info is ignored and
// may be nil.
func UnpublishName(service string, info *Info, port string) (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("UnpublishName", nil, Undefined, Undefined), &err)
	}
	const op = "UnpublishName"
	if err := checkServiceName(op, service); err != nil {
		return err
	}
	if err := checkPortString(op, port); err != nil {
		return err
	}
	bi, err := nameService(op)
	if err != nil {
		return err
	}
	if bi == nil {
		localNames.Lock()
		defer localNames.Unlock()
		if p, ok := localNames.m[service]; !ok || p != port {
			return (*Comm)(nil).errorf(op, ErrService, loc{}, "the name %q is not published with port %.80q", service, port)
		}
		delete(localNames.m, service)
		return nil
	}
	return askNames(op, bi, "unpublish "+port+" "+service)
}

// CommJoin makes an intercommunicator between the calling rank and the
// process at the other end of conn, which calls CommJoin too
// (MPI_Comm_join): each group is the rank alone. conn is a connected
// socket (a *net.TCPConn, a net.Pipe end, or net.FileConn of a
// descriptor); CommJoin uses it only to agree with the other side, and
// does not close it. The caller's world c names the rank.
func CommJoin(c *Comm, conn net.Conn) (_ *Comm, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("CommJoin", c, Undefined, Undefined), &err)
	}
	const op = "CommJoin"
	if err := c.check(op); err != nil {
		return nil, err
	}
	if conn == nil {
		return nil, c.fail(op, ErrArg, loc{}, "nil connection")
	}
	self := c.Self()
	// The conversation writes before it reads on both sides: a
	// connection without buffers (net.Pipe) must not block the writer.
	ac := newAsyncConn(conn)
	defer ac.drain()
	// The two sides draw lots: the higher accepts.
	accepting := false
	for {
		var mine [8]byte
		rand.Read(mine[:])
		conn.SetDeadline(time.Now().Add(portTimeout))
		if err := writeRec(ac, mine[:]); err != nil {
			return nil, c.fail(op, ErrArg, loc{}, "the connection: %v", err)
		}
		theirs, err := readRec(conn)
		if err != nil || len(theirs) != 8 {
			return nil, c.fail(op, ErrArg, loc{}, "the other side did not answer: %v", err)
		}
		a, b := binary.BigEndian.Uint64(mine[:]), binary.BigEndian.Uint64(theirs)
		if a != b {
			accepting = a > b
			break
		}
	}
	conn.SetDeadline(time.Time{})
	ic, err := self.linkGroups(op, 0, accepting, func() (net.Conn, *bufio.Reader, []byte, error) {
		return ac, nil, []byte("mpigo-join"), nil
	})
	conn.SetDeadline(time.Time{})
	if err != nil {
		return nil, err
	}
	ic.errh.Store(c.errh.Load())
	return ic, nil
}

// asyncConn writes on a goroutine of its own, in order, so that its
// writes never wait for the other side to read; Close does not close the
// caller's connection.
type asyncConn struct {
	net.Conn
	q    chan []byte
	done chan struct{}
	err  atomic.Pointer[error]
}

func newAsyncConn(c net.Conn) *asyncConn {
	a := &asyncConn{Conn: c, q: make(chan []byte, 64), done: make(chan struct{})}
	go func() {
		defer close(a.done)
		for b := range a.q {
			if _, err := c.Write(b); err != nil {
				a.err.Store(&err)
			}
		}
	}()
	return a
}

func (a *asyncConn) Write(b []byte) (int, error) {
	if e := a.err.Load(); e != nil {
		return 0, *e
	}
	a.q <- append([]byte(nil), b...)
	return len(b), nil
}

// Close is drain: linkGroups closes its connection when done.
func (a *asyncConn) Close() error { return nil }

// drain waits until every write has gone out, once.
func (a *asyncConn) drain() {
	close(a.q)
	<-a.done
}
