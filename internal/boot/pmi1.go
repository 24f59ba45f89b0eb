package boot

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// PMI-1, the "simple PMI" wire protocol of MPICH (spoken by Hydra's
// mpiexec, and by Slurm's mpi/pmi2 plugin to PMI-1 clients): one request
// per line, "cmd=NAME key=value key=value\n", one reply line per request
// (none for abort):
//
//	cmd=init pmi_version=1 pmi_subversion=1 -> cmd=response_to_init rc=0 pmi_version=1 pmi_subversion=1
//	cmd=get_maxes                           -> cmd=maxes kvsname_max=256 keylen_max=64 vallen_max=1024
//	cmd=get_appnum                          -> cmd=appnum appnum=0
//	cmd=get_my_kvsname                      -> cmd=my_kvsname kvsname=kvs_123_0
//	cmd=put kvsname=K key=k value=v         -> cmd=put_result rc=0
//	cmd=barrier_in                          -> cmd=barrier_out      (when every process has sent barrier_in)
//	cmd=get kvsname=K key=k                 -> cmd=get_result rc=0 value=v   (rc != 0: not found)
//	cmd=finalize                            -> cmd=finalize_ack
//	cmd=abort exitcode=N
//
// The connection is the inherited socket PMI_FD, or a TCP connection to
// PMI_PORT that first identifies itself with "cmd=initack pmiid=PMI_ID"
// and is told "cmd=set size=N", "cmd=set rank=R", "cmd=set debug=D".

// maxLine bounds a reply line, so that a launcher gone mad cannot make a
// rank allocate without end.
const maxLine = 64 << 10

type pmi1 struct {
	mu      sync.Mutex // one request and its reply at a time: goroutines of a rank look up peers' addresses concurrently
	conn    net.Conn
	r       *bufio.Reader
	who     string // names the launcher in errors
	kvsname string
	vallen  int
	appnum  int
	reply   time.Duration
	fenceT  time.Duration
}

// readLine reads one reply line within d.
func readLine(conn net.Conn, r *bufio.Reader, d time.Duration) (string, error) {
	conn.SetReadDeadline(time.Now().Add(d))
	var line []byte
	for {
		frag, err := r.ReadSlice('\n')
		line = append(line, frag...)
		if len(line) > maxLine {
			return "", fmt.Errorf("reply longer than %d bytes", maxLine)
		}
		if err == nil {
			return strings.TrimRight(string(line), "\r\n"), nil
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			if len(line) > 0 && errors.Is(err, os.ErrDeadlineExceeded) {
				return "", fmt.Errorf("truncated reply %q (no end of line within %v)", line, d)
			}
			if errors.Is(err, os.ErrDeadlineExceeded) {
				return "", fmt.Errorf("no reply within %v", d)
			}
			if len(line) > 0 {
				return "", fmt.Errorf("connection closed in the middle of reply %q", line)
			}
			return "", fmt.Errorf("connection closed (did the launcher exit?): %v", err)
		}
	}
}

// ParsePMI1 reads a PMI-1 line "cmd=NAME k=v k=v" into its attributes. A
// word without '=' continues the previous value (launchers put spaces in
// messages).
func ParsePMI1(line string) (map[string]string, error) {
	if !strings.HasPrefix(line, "cmd=") && !strings.HasPrefix(line, "mcmd=") {
		return nil, errors.New("does not start with cmd=")
	}
	if strings.ContainsAny(line, "\n\x00") {
		return nil, errors.New("holds a newline or NUL")
	}
	m := map[string]string{}
	last := ""
	for _, w := range strings.Split(line, " ") {
		if w == "" {
			continue
		}
		k, v, ok := strings.Cut(w, "=")
		if !ok || k == "" {
			if last == "" {
				return nil, fmt.Errorf("word %q is not key=value", w)
			}
			m[last] += " " + w
			continue
		}
		if _, dup := m[k]; dup {
			return nil, fmt.Errorf("key %q twice", k)
		}
		m[k] = v
		last = k
	}
	if m["cmd"] == "" && m["mcmd"] == "" {
		return nil, errors.New("empty command")
	}
	return m, nil
}

// call sends one request and reads its reply, which must be cmd=want
// with rc 0 (or no rc).
func (p *pmi1) call(req, want string, d time.Duration) (map[string]string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	name, _, _ := strings.Cut(strings.TrimPrefix(req, "cmd="), " ")
	p.conn.SetWriteDeadline(time.Now().Add(d))
	if _, err := p.conn.Write([]byte(req + "\n")); err != nil {
		return nil, fmt.Errorf("%s: cannot send %s: %v", p.who, name, err)
	}
	line, err := readLine(p.conn, p.r, d)
	if err != nil {
		return nil, fmt.Errorf("%s: bad reply to %s: %v", p.who, name, err)
	}
	m, err := ParsePMI1(line)
	if err != nil {
		return nil, fmt.Errorf("%s: bad reply to %s: %q: %v", p.who, name, line, err)
	}
	if m["cmd"] != want {
		return nil, fmt.Errorf("%s: bad reply to %s: %q: want cmd=%s", p.who, name, line, want)
	}
	if rc, ok := m["rc"]; ok && rc != "0" && name != "get" {
		return nil, fmt.Errorf("%s: %s failed: %q", p.who, name, line)
	}
	return m, nil
}

func (p *pmi1) intAttr(m map[string]string, req, key string) (int, error) {
	v, ok := m[key]
	if !ok {
		return 0, fmt.Errorf("%s: bad reply to %s: no %s", p.who, req, key)
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, fmt.Errorf("%s: bad reply to %s: %s=%q is not a number", p.who, req, key, v)
	}
	return n, nil
}

// pmi1Who names the PMI-1 launcher from the hints it leaves.
func pmi1Who(env lookupFunc) string {
	has := func(k string) bool { v, _ := env(k); return v != "" }
	switch {
	case has("SLURM_STEP_ID"):
		return "PMI-1 (Slurm)"
	case has("MPI_LOCALNRANKS") || has("HYDRA_CONTROL_FD"):
		return "PMI-1 (MPICH Hydra)"
	}
	return "PMI-1"
}

// dialPMI1 connects to the launcher (PMI_FD, or PMI_PORT and PMI_ID) and
// initialises PMI-1. It returns the client, the rank and the size.
func dialPMI1(env lookupFunc) (*pmi1, int, int, error) {
	who := pmi1Who(env)
	reply, fence := pmiTimeouts(env)
	var conn net.Conn
	var err error
	rank, size := -1, -1
	p := &pmi1{who: who, reply: reply, fenceT: fence}
	if fd, ok := env("PMI_FD"); ok {
		if conn, err = fdConn(fd); err != nil {
			return nil, 0, 0, fmt.Errorf("%s: %v", who, err)
		}
		p.conn, p.r = conn, bufio.NewReader(conn)
	} else {
		port, _ := env("PMI_PORT")
		if conn, err = net.DialTimeout("tcp", port, reply); err != nil {
			return nil, 0, 0, fmt.Errorf("%s: cannot reach the launcher at PMI_PORT=%s: %v", who, port, err)
		}
		p.conn, p.r = conn, bufio.NewReader(conn)
		if id, ok := env("PMI_ID"); ok {
			if rank, size, err = p.initack(id); err != nil {
				conn.Close()
				return nil, 0, 0, err
			}
		}
	}
	if err := p.init(); err != nil {
		conn.Close()
		return nil, 0, 0, err
	}
	if v, ok := env("PMI_RANK"); ok {
		if rank, err = strconv.Atoi(v); err != nil {
			conn.Close()
			return nil, 0, 0, fmt.Errorf("%s: PMI_RANK=%q is not a number", who, v)
		}
	}
	if v, ok := env("PMI_SIZE"); ok {
		if size, err = strconv.Atoi(v); err != nil {
			conn.Close()
			return nil, 0, 0, fmt.Errorf("%s: PMI_SIZE=%q is not a number", who, v)
		}
	}
	if size < 1 || rank < 0 || rank >= size {
		conn.Close()
		return nil, 0, 0, fmt.Errorf("%s: rank %d of %d makes no sense (PMI_RANK, PMI_SIZE)", who, rank, size)
	}
	return p, rank, size, nil
}

// initack identifies a process that dialled PMI_PORT.
func (p *pmi1) initack(id string) (rank, size int, err error) {
	if _, err := p.call("cmd=initack pmiid="+id, "initack", p.reply); err != nil {
		return 0, 0, err
	}
	rank, size = -1, -1
	for _, want := range []string{"size", "rank", "debug"} {
		line, err := readLine(p.conn, p.r, p.reply)
		if err != nil {
			return 0, 0, fmt.Errorf("%s: bad reply to initack: %v", p.who, err)
		}
		m, err := ParsePMI1(line)
		if err == nil && m["cmd"] != "set" {
			err = errors.New("want cmd=set")
		}
		var n int
		if err == nil {
			n, err = strconv.Atoi(m[want])
		}
		if err != nil {
			return 0, 0, fmt.Errorf("%s: bad reply to initack: %q: want cmd=set %s=N", p.who, line, want)
		}
		switch want {
		case "size":
			size = n
		case "rank":
			rank = n
		}
	}
	return rank, size, nil
}

func (p *pmi1) init() error {
	m, err := p.call("cmd=init pmi_version=1 pmi_subversion=1", "response_to_init", p.reply)
	if err != nil {
		return err
	}
	if v := m["pmi_version"]; v != "" && v != "1" {
		return fmt.Errorf("%s: the launcher speaks PMI version %s, not 1", p.who, v)
	}
	if m, err = p.call("cmd=get_maxes", "maxes", p.reply); err != nil {
		return err
	}
	if p.vallen, err = p.intAttr(m, "get_maxes", "vallen_max"); err != nil {
		return err
	}
	if p.vallen < 16 {
		return fmt.Errorf("%s: bad reply to get_maxes: vallen_max=%d is too small", p.who, p.vallen)
	}
	if m, err = p.call("cmd=get_appnum", "appnum", p.reply); err != nil {
		return err
	}
	if p.appnum, err = p.intAttr(m, "get_appnum", "appnum"); err != nil {
		return err
	}
	if m, err = p.call("cmd=get_my_kvsname", "my_kvsname", p.reply); err != nil {
		return err
	}
	p.kvsname = m["kvsname"]
	if p.kvsname == "" || !validKey(p.kvsname) {
		return fmt.Errorf("%s: bad reply to get_my_kvsname: kvsname %q", p.who, p.kvsname)
	}
	return nil
}

// maxValue keeps values well inside vallen_max and inside the line
// buffers of launchers (Hydra's are 1024 bytes for the whole line).
func (p *pmi1) maxValue() int { return min(p.vallen-1, 512) }

func (p *pmi1) put(key, value string) error {
	_, err := p.call("cmd=put kvsname="+p.kvsname+" key="+key+" value="+value, "put_result", p.reply)
	return err
}

func (p *pmi1) fence() error {
	_, err := p.call("cmd=barrier_in", "barrier_out", p.fenceT)
	return err
}

func (p *pmi1) get(key string) (string, bool, error) {
	m, err := p.call("cmd=get kvsname="+p.kvsname+" key="+key, "get_result", p.reply)
	if err != nil {
		return "", false, err
	}
	if rc, ok := m["rc"]; ok && rc != "0" {
		return "", false, nil
	}
	if m["found"] == "FALSE" || m["found"] == "false" {
		return "", false, nil
	}
	v, ok := m["value"]
	if !ok {
		return "", false, fmt.Errorf("%s: bad reply to get: no value for %s", p.who, key)
	}
	return v, true, nil
}

func (p *pmi1) finalize() error {
	_, err := p.call("cmd=finalize", "finalize_ack", p.reply)
	return err
}

func (p *pmi1) abort(code int, msg string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.conn.SetWriteDeadline(time.Now().Add(p.reply))
	fmt.Fprintf(p.conn, "cmd=abort exitcode=%d\n", code)
}

func (p *pmi1) close() error { return p.conn.Close() }

// detectPMI1 builds the Info of a process started by a PMI-1 launcher.
func detectPMI1(env lookupFunc) (*Info, error) {
	p, rank, size, err := dialPMI1(env)
	if err != nil {
		return nil, err
	}
	info := &Info{Rank: rank, Size: size, Launcher: p.who, JobID: jobIDOf("pmi1/" + p.kvsname)}
	// PMI-1 values travel encoded (decodeValue).
	return pmiDetected(env, info, p, p.who, func() (string, bool, error) {
		v, found, err := p.get("PMI_process_mapping")
		if err != nil || !found {
			return "", found, err
		}
		dv, err := decodeValue(v)
		if err != nil {
			return "", true, fmt.Errorf("%s: %v", p.who, err)
		}
		return dv, true, nil
	})
}
