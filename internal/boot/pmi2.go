package boot

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// PMI-2, as Slurm's mpi/pmi2 plugin speaks it on PMI_FD. The connection
// opens with one PMI-1 line that names the version:
//
//	cmd=init pmi_version=2 pmi_subversion=0\n -> cmd=response_to_init rc=0 pmi_version=2 pmi_subversion=0\n
//
// then every message is a 6-character decimal length, left-justified and
// padded with spaces, followed by that many bytes of "cmd=NAME;k=v;k=v;"
// (";;" is a ';' inside a value):
//
//	cmd=fullinit;pmijobid=J;pmirank=R;threaded=FALSE;  -> cmd=fullinit-response;rc=0;rank=R;size=N;appnum=A;...
//	cmd=job-getid;                                     -> cmd=job-getid-response;rc=0;jobid=J;
//	cmd=info-getjobattr;key=PMI_process_mapping;       -> ...;rc=0;found=TRUE;value=(vector,(0,1,4));
//	cmd=kvs-put;key=k;value=v;                         -> cmd=kvs-put-response;rc=0;
//	cmd=kvs-fence;                                     -> cmd=kvs-fence-response;rc=0;
//	cmd=kvs-get;jobid=J;srcid=-1;key=k;                -> cmd=kvs-get-response;rc=0;found=TRUE;value=v;
//	cmd=finalize;                                      -> cmd=finalize-response;rc=0;
//	cmd=abort;isworld=TRUE;msg=...;                    (no reply)

type pmi2 struct {
	mu     sync.Mutex // one request and its reply at a time
	conn   net.Conn
	r      *bufio.Reader
	who    string
	jobid  string
	reply  time.Duration
	fenceT time.Duration
}

// maxMsg bounds one PMI-2 message (the length field allows 999999).
const maxMsg = 1 << 20

// ParsePMI2 reads the body of a PMI-2 message, "cmd=NAME;k=v;...;", into
// its attributes.
func ParsePMI2(body string) (map[string]string, error) {
	if !strings.HasPrefix(body, "cmd=") {
		return nil, errors.New("does not start with cmd=")
	}
	m := map[string]string{}
	for i := 0; i < len(body); {
		eq := strings.IndexByte(body[i:], '=')
		if eq <= 0 {
			return nil, fmt.Errorf("no key=value at byte %d", i)
		}
		key := body[i : i+eq]
		if strings.ContainsAny(key, ";\x00\n") {
			return nil, fmt.Errorf("bad key %q", key)
		}
		i += eq + 1
		var v strings.Builder
		for {
			if i >= len(body) {
				return nil, fmt.Errorf("value of %s is not terminated by ';'", key)
			}
			c := body[i]
			i++
			if c == ';' {
				if i < len(body) && body[i] == ';' { // an escaped ';'
					v.WriteByte(';')
					i++
					continue
				}
				break
			}
			v.WriteByte(c)
		}
		if _, dup := m[key]; dup {
			return nil, fmt.Errorf("key %q twice", key)
		}
		m[key] = v.String()
	}
	if m["cmd"] == "" {
		return nil, errors.New("empty command")
	}
	return m, nil
}

// readPMI2 reads one length-prefixed message within d.
func readPMI2(conn net.Conn, r *bufio.Reader, d time.Duration) (string, error) {
	conn.SetReadDeadline(time.Now().Add(d))
	var hdr [6]byte
	if n, err := io.ReadFull(r, hdr[:]); err != nil {
		return "", ioProblem(err, hdr[:n], d)
	}
	n, err := strconv.Atoi(strings.TrimRight(string(hdr[:]), " "))
	if err != nil || n < 0 || n > maxMsg {
		return "", fmt.Errorf("bad length field %q", hdr[:])
	}
	body := make([]byte, n)
	if k, err := io.ReadFull(r, body); err != nil {
		return "", ioProblem(err, body[:k], d)
	}
	return string(body), nil
}

func ioProblem(err error, got []byte, d time.Duration) error {
	switch {
	case errors.Is(err, os.ErrDeadlineExceeded) && len(got) > 0:
		return fmt.Errorf("truncated reply %q (the rest did not come within %v)", got, d)
	case errors.Is(err, os.ErrDeadlineExceeded):
		return fmt.Errorf("no reply within %v", d)
	case len(got) > 0:
		return fmt.Errorf("connection closed in the middle of reply %q", got)
	}
	return fmt.Errorf("connection closed (did the launcher exit?): %v", err)
}

// escape2 doubles every ';' of a value.
func escape2(s string) string { return strings.ReplaceAll(s, ";", ";;") }

func (p *pmi2) send(body string, d time.Duration) error {
	if len(body) > 999999 {
		return fmt.Errorf("%s: message too long", p.who)
	}
	p.conn.SetWriteDeadline(time.Now().Add(d))
	_, err := fmt.Fprintf(p.conn, "%-6d%s", len(body), body)
	return err
}

// call sends "cmd=NAME;args" and reads the reply, which must be
// cmd=NAME-response with rc 0.
func (p *pmi2) call(name, args string, d time.Duration) (map[string]string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.send("cmd="+name+";"+args, d); err != nil {
		return nil, fmt.Errorf("%s: cannot send %s: %v", p.who, name, err)
	}
	body, err := readPMI2(p.conn, p.r, d)
	if err != nil {
		return nil, fmt.Errorf("%s: bad reply to %s: %v", p.who, name, err)
	}
	m, err := ParsePMI2(body)
	if err != nil {
		return nil, fmt.Errorf("%s: bad reply to %s: %q: %v", p.who, name, body, err)
	}
	if m["cmd"] != name+"-response" {
		return nil, fmt.Errorf("%s: bad reply to %s: %q: want cmd=%s-response", p.who, name, body, name)
	}
	if rc, ok := m["rc"]; ok && rc != "0" {
		msg := m["errmsg"]
		if msg == "" {
			msg = m["msg"]
		}
		return nil, fmt.Errorf("%s: %s failed with rc=%s: %s", p.who, name, rc, msg)
	}
	return m, nil
}

func pmi2Who(env lookupFunc) string {
	a, _ := env("SLURM_STEP_ID")
	b, _ := env("SLURM_JOB_ID")
	if a != "" || b != "" {
		return "PMI-2 (Slurm)"
	}
	return "PMI-2"
}

// dialPMI2 connects on PMI_FD, agrees on version 2 and sends fullinit.
func dialPMI2(env lookupFunc) (*pmi2, int, int, error) {
	who := pmi2Who(env)
	reply, fence := pmiTimeouts(env)
	fd, _ := env("PMI_FD")
	conn, err := fdConn(fd)
	if err != nil {
		return nil, 0, 0, fmt.Errorf("%s: %v", who, err)
	}
	p := &pmi2{conn: conn, r: bufio.NewReader(conn), who: who, reply: reply, fenceT: fence}
	jobid, _ := env("PMI_JOBID")
	prank, _ := env("PMI_RANK")
	rank, size, err := p.start(jobid, prank)
	if err != nil {
		conn.Close()
		return nil, 0, 0, err
	}
	return p, rank, size, nil
}

func (p *pmi2) start(jobid, prank string) (rank, size int, err error) {
	// The version line, in PMI-1's framing (Slurm reads it with one read:
	// it goes in one write).
	p.conn.SetWriteDeadline(time.Now().Add(p.reply))
	if _, err := p.conn.Write([]byte("cmd=init pmi_version=2 pmi_subversion=0\n")); err != nil {
		return 0, 0, fmt.Errorf("%s: cannot send init: %v", p.who, err)
	}
	line, err := readLine(p.conn, p.r, p.reply)
	if err != nil {
		return 0, 0, fmt.Errorf("%s: bad reply to init: %v", p.who, err)
	}
	m, err := ParsePMI1(line)
	if err == nil && m["cmd"] != "response_to_init" {
		err = errors.New("want cmd=response_to_init")
	}
	if err == nil && m["rc"] != "" && m["rc"] != "0" {
		err = errors.New("the launcher refused PMI version 2")
	}
	if err == nil && m["pmi_version"] != "2" {
		err = errors.New("want pmi_version=2")
	}
	if err != nil {
		return 0, 0, fmt.Errorf("%s: bad reply to init: %q: %v", p.who, line, err)
	}
	args := "pmijobid=" + escape2(jobid) + ";pmirank=" + escape2(prank) + ";threaded=FALSE;"
	if m, err = p.call("fullinit", args, p.reply); err != nil {
		return 0, 0, err
	}
	num := func(key string) (int, error) {
		n, err := strconv.Atoi(m[key])
		if err != nil {
			return 0, fmt.Errorf("%s: bad reply to fullinit: %s=%q is not a number", p.who, key, m[key])
		}
		return n, nil
	}
	if rank, err = num("rank"); err != nil {
		return 0, 0, err
	}
	if size, err = num("size"); err != nil {
		return 0, 0, err
	}
	if size < 1 || rank < 0 || rank >= size {
		return 0, 0, fmt.Errorf("%s: bad reply to fullinit: rank %d of %d", p.who, rank, size)
	}
	if m, err = p.call("job-getid", "", p.reply); err != nil {
		return 0, 0, err
	}
	if p.jobid = m["jobid"]; p.jobid == "" {
		return 0, 0, fmt.Errorf("%s: bad reply to job-getid: no jobid", p.who)
	}
	return rank, size, nil
}

// maxValue: Slurm's and MPICH's PMI-2 values hold 1024 bytes.
func (p *pmi2) maxValue() int { return 512 }

func (p *pmi2) put(key, value string) error {
	_, err := p.call("kvs-put", "key="+key+";value="+escape2(value)+";", p.reply)
	return err
}

func (p *pmi2) fence() error {
	_, err := p.call("kvs-fence", "", p.fenceT)
	return err
}

func (p *pmi2) get(key string) (string, bool, error) {
	m, err := p.call("kvs-get", "jobid="+escape2(p.jobid)+";srcid=-1;key="+key+";", p.reply)
	if err != nil {
		return "", false, err
	}
	return p.found(m, "kvs-get", key)
}

func (p *pmi2) found(m map[string]string, req, key string) (string, bool, error) {
	switch m["found"] {
	case "TRUE", "true":
	case "FALSE", "false":
		return "", false, nil
	default:
		return "", false, fmt.Errorf("%s: bad reply to %s of %s: found=%q", p.who, req, key, m["found"])
	}
	v, ok := m["value"]
	if !ok {
		return "", false, fmt.Errorf("%s: bad reply to %s of %s: no value", p.who, req, key)
	}
	return v, true, nil
}

func (p *pmi2) jobAttr(key string) (string, bool, error) {
	m, err := p.call("info-getjobattr", "key="+key+";", p.reply)
	if err != nil {
		return "", false, err
	}
	return p.found(m, "info-getjobattr", key)
}

func (p *pmi2) finalize() error {
	_, err := p.call("finalize", "", p.reply)
	return err
}

func (p *pmi2) abort(code int, msg string) {
	msg = strings.Map(func(r rune) rune {
		if r < ' ' {
			return ' '
		}
		return r
	}, msg)
	if len(msg) > 900 {
		msg = msg[:900]
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.send("cmd=abort;isworld=TRUE;msg="+escape2(msg)+";", p.reply)
}

func (p *pmi2) close() error { return p.conn.Close() }

// detectPMI2 builds the Info of a process started by a PMI-2 launcher.
func detectPMI2(env lookupFunc) (*Info, error) {
	p, rank, size, err := dialPMI2(env)
	if err != nil {
		return nil, err
	}
	info := &Info{Rank: rank, Size: size, Launcher: p.who, JobID: jobIDOf("pmi2/" + p.jobid)}
	return pmiDetected(env, info, p, p.who, func() (string, bool, error) { return p.jobAttr("PMI_process_mapping") })
}
