package main

import (
	"bufio"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/mpigo/mpi/internal/boot"
	"github.com/mpigo/mpi/internal/gateway"
)

// Gateways (docs/gateways.md): mpigo run --gateway starts one `mpigo
// gateway` per listed network, through the launch agent on the gateway's
// host, before the ranks; it tells every rank the job's gateway table
// (MPIGO_GATEWAYS) and ends the job, naming the gateway, if one exits
// while the ranks run.

// gatewayUsage is printed by mpigo gateway -h.
const gatewayUsage = `mpigo gateway: relay a job's connections between networks

Usage (mpigo run starts it; see mpigo run --gateway and docs/gateways.md):
  mpigo gateway [--listen ADDR]

It reads the job's id from MPIGO_JOBID and its secret from MPIGO_SECRET_FD,
prints "mpigo gateway: listening on ADDR", relays connections that prove
the job's secret and ends when its standard input closes.
`

// gatewayCmd is mpigo gateway: a relay (tcp.Relay) for one job.
func gatewayCmd(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("mpigo gateway", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, gatewayUsage); fs.PrintDefaults() }
	listen := fs.String("listen", ":0", "`ADDR` to listen on (port 0: any free port)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	job, err := strconv.ParseUint(os.Getenv(boot.EnvJobID), 10, 64)
	if err != nil {
		fmt.Fprintf(stderr, "mpigo gateway: %s=%q is not a job id (mpigo run starts gateways itself)\n", boot.EnvJobID, os.Getenv(boot.EnvJobID))
		return 2
	}
	secret, err := boot.JobSecret(os.LookupEnv)
	if err != nil {
		fmt.Fprintf(stderr, "mpigo gateway: %v\n", err)
		return 2
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		fmt.Fprintf(stderr, "mpigo gateway: %v\n", err)
		return 1
	}
	host, _ := os.Hostname()
	rl := gateway.NewRelay(gateway.Config{JobID: job, Secret: secret, Log: func(s string) {
		fmt.Fprintf(stderr, "mpigo %s (%s)\n", s, host)
	}}, ln)
	defer rl.Close()
	fmt.Fprintf(stdout, "mpigo gateway: listening on %s\n", rl.Addr())
	if f, ok := stdout.(*os.File); ok {
		f.Sync()
	}
	// It ends with its launcher: when standard input closes (mpigo run
	// holds it open), or on a signal.
	gone := make(chan struct{})
	go func() {
		io.Copy(io.Discard, stdin)
		close(gone)
	}()
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sigs)
	select {
	case <-gone:
	case <-sigs:
	}
	return 0
}

// gatewaySpec is one --gateway: the network PREFIX, whose ranks reach its
// gateway at HOST:PORT (PORT 0: the port the gateway gets), and the
// public address other networks' gateways reach it at, if any.
type gatewaySpec struct {
	prefix     netip.Prefix
	host, port string
	public     string // HOST or HOST:PORT; "" for none
}

// gatewayList is the value of --gateway, which may be repeated.
type gatewayList struct{ specs *[]gatewaySpec }

func (l gatewayList) String() string {
	if l.specs == nil {
		return ""
	}
	var s []string
	for _, g := range *l.specs {
		s = append(s, g.prefix.String()+"="+net.JoinHostPort(g.host, g.port))
	}
	return strings.Join(s, ",")
}

// Set reads PREFIX=HOST[:PORT][/PUBLIC[:PORT]].
func (l gatewayList) Set(v string) error {
	g, err := parseGatewaySpec(v)
	if err != nil {
		return err
	}
	*l.specs = append(*l.specs, g)
	return nil
}

func parseGatewaySpec(v string) (gatewaySpec, error) {
	var g gatewaySpec
	pfx, rest, ok := strings.Cut(v, "=")
	if !ok || rest == "" {
		return g, fmt.Errorf("%q: want NETWORK=HOST[:PORT][/PUBLIC[:PORT]], e.g. 10.1.0.0/16=gw1:7000", v)
	}
	p, err := netip.ParsePrefix(pfx)
	if err != nil {
		return g, fmt.Errorf("%q: %q is not a network like 10.1.0.0/16", v, pfx)
	}
	g.prefix = p.Masked()
	in, pub, _ := strings.Cut(rest, "/")
	g.host, g.port = in, "0"
	if h, port, err := net.SplitHostPort(in); err == nil {
		if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
			return g, fmt.Errorf("%q: bad port %q", v, port)
		}
		g.host, g.port = h, port
	}
	if g.host == "" || strings.ContainsAny(g.host, " ,;=") {
		return g, fmt.Errorf("%q: bad gateway host %q", v, g.host)
	}
	if strings.ContainsAny(pub, " ,;=/") {
		return g, fmt.Errorf("%q: bad public address %q", v, pub)
	}
	g.public = pub
	return g, nil
}

// gatewayProc is a started gateway.
type gatewayProc struct {
	spec gatewaySpec
	addr string // HOST:PORT, once listening
	cmd  *exec.Cmd
	hold *os.File // the write end of its standard input
	errs *tailBuffer
}

// name says which gateway g is, for messages.
func (g *gatewayProc) name() string {
	a := g.addr
	if a == "" {
		a = net.JoinHostPort(g.spec.host, g.spec.port)
	}
	return fmt.Sprintf("gateway %s (network %s)", a, g.spec.prefix)
}

// gatewayExit is the end of a gateway process.
type gatewayExit struct {
	g   *gatewayProc
	how string
}

// gateways are the job's gateway processes.
type gateways struct {
	procs  []*gatewayProc
	exited chan gatewayExit
	table  string // MPIGO_GATEWAYS for the ranks
	mu     sync.Mutex
	done   bool
}

// gatewayStart is how long a gateway may take to start listening.
const gatewayStart = 30 * time.Second

// gatewayErrWait bounds how long a gateway that exited may take to let go
// of its standard error, whose last lines say why.
const gatewayErrWait = 2 * time.Second

// startGateways starts cfg's gateways and waits until each listens.
// group keeps local ones like local ranks.
func startGateways(cfg *runConfig, group *rankGroup, jobID uint64, secret []byte, cwd string, say func(string, ...any)) (*gateways, error) {
	gws := &gateways{exited: make(chan gatewayExit, len(cfg.gateways)+1)}
	if len(cfg.gateways) == 0 {
		return gws, nil
	}
	exe, err := os.Executable()
	if err != nil {
		return gws, fmt.Errorf("--gateway: cannot find the mpigo program to start: %v", err)
	}
	var entries []string
	for _, spec := range cfg.gateways {
		g := &gatewayProc{spec: spec, errs: &tailBuffer{max: 4 << 10}}
		if err := gws.start(g, cfg, group, exe, jobID, secret, cwd, say); err != nil {
			gws.stop()
			return gws, err
		}
		e := spec.prefix.String() + "=" + g.addr
		if spec.public != "" {
			pub := spec.public
			if _, _, err := net.SplitHostPort(pub); err != nil {
				_, port, _ := net.SplitHostPort(g.addr)
				pub = net.JoinHostPort(pub, port)
			}
			e += "/" + pub
		}
		entries = append(entries, e)
	}
	gws.table = strings.Join(entries, ";")
	if _, err := gateway.Parse(gws.table); err != nil {
		gws.stop()
		return gws, fmt.Errorf("--gateway: %v", err)
	}
	return gws, nil
}

func (gws *gateways) start(g *gatewayProc, cfg *runConfig, group *rankGroup, exe string, jobID uint64, secret []byte, cwd string, say func(string, ...any)) error {
	args := []string{"gateway", "--listen", ":" + g.spec.port}
	env := []string{boot.EnvJobID + "=" + strconv.FormatUint(jobID, 10)}
	inR, inW, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("cannot start %s: %v", g.name(), err)
	}
	defer inR.Close()
	var secretR *os.File
	if isLoopback(g.spec.host) {
		g.cmd = exec.Command(exe, args...)
		r, w, err := os.Pipe()
		if err != nil {
			inW.Close()
			return fmt.Errorf("cannot start %s: %v", g.name(), err)
		}
		io.WriteString(w, hex.EncodeToString(secret)+"\n")
		w.Close()
		secretR = r
		g.cmd.Env = append(append(os.Environ(), env...), boot.EnvSecretFD+"="+group.prepare(g.cmd, r))
	} else {
		// As for a remote rank (remoteCommand): the secret is the first
		// line of standard input, the rest stays open while the job runs.
		agent := strings.Fields(cfg.agent)
		g.cmd = exec.Command(agent[0], append(agent[1:], g.spec.host, remoteCommand(cwd, append(env, boot.EnvSecretFD+"=3"), exe, args, ""))...)
		g.cmd.Env = os.Environ()
		io.WriteString(inW, hex.EncodeToString(secret)+"\n")
		group.prepare(g.cmd, nil)
	}
	g.cmd.Stdin = inR
	g.hold = inW
	out, err := g.cmd.StdoutPipe()
	var errp io.ReadCloser
	if err == nil {
		errp, err = g.cmd.StderrPipe()
	}
	if err == nil {
		err = g.cmd.Start()
	}
	if secretR != nil {
		secretR.Close()
	}
	if err != nil {
		inW.Close()
		return fmt.Errorf("cannot start %s: %v", g.name(), err)
	}
	gws.mu.Lock()
	gws.procs = append(gws.procs, g)
	gws.mu.Unlock()
	group.started(g.cmd)
	listening := make(chan string, 1)
	var up sync.Once
	started := make(chan struct{})
	errsRead := make(chan struct{}) // closed once its standard error has ended
	go func() {
		// Its messages are kept for an error at start-up, then shown.
		sc := bufio.NewScanner(io.LimitReader(errp, 64<<20))
		for sc.Scan() {
			fmt.Fprintln(g.errs, sc.Text())
			select {
			case <-started:
				say("[%s] %s\n", g.name(), sc.Text())
			default:
			}
		}
		close(errsRead)
		io.Copy(io.Discard, errp)
	}()
	go func() {
		sc := bufio.NewScanner(io.LimitReader(out, 1<<20))
		first := true
		for sc.Scan() {
			line := sc.Text()
			if a, ok := strings.CutPrefix(line, "mpigo gateway: listening on "); ok && first {
				listening <- a
				first = false
				continue
			}
			say("[%s] %s\n", g.name(), line)
		}
		io.Copy(io.Discard, out)
	}()
	waited := make(chan string, 1)
	go func() {
		st, err := g.cmd.Process.Wait()
		how := "exited"
		if err != nil {
			how = err.Error()
		} else {
			how = describeExit(st)
		}
		// Its last words, which say why, may still be in the pipe when
		// the exit is seen: take them before anyone reports it (a
		// process it left behind may hold the pipe open, hence the
		// limit).
		select {
		case <-errsRead:
		case <-time.After(gatewayErrWait):
		}
		waited <- how
		gws.mu.Lock()
		done := gws.done
		gws.mu.Unlock()
		if !done {
			gws.exited <- gatewayExit{g, how}
		}
	}()
	select {
	case a := <-listening:
		_, port, err := net.SplitHostPort(a)
		if err != nil {
			return fmt.Errorf("%s said it listens on %q", g.name(), a)
		}
		g.addr = net.JoinHostPort(g.spec.host, port)
		up.Do(func() { close(started) })
		return nil
	case how := <-waited:
		return fmt.Errorf("%s on host %s %s before it listened: %s", g.name(), g.spec.host, how, strings.TrimSpace(g.errs.String()))
	case <-time.After(gatewayStart):
		return fmt.Errorf("%s on host %s did not start listening within %v: %s", g.name(), g.spec.host, gatewayStart, strings.TrimSpace(g.errs.String()))
	}
}

// describeExit says how a process ended.
func describeExit(st *os.ProcessState) string {
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return fmt.Sprintf("was killed by signal %d (%v)", int(ws.Signal()), ws.Signal())
	}
	c := st.ExitCode()
	if c > 128 && c < 128+32 {
		// The launch agent's shell reports its child's signal so.
		return fmt.Sprintf("exited with status %d (signal %d: %v)", c, c-128, syscall.Signal(c-128))
	}
	return fmt.Sprintf("exited with status %d", c)
}

// stop ends every gateway: it closes their standard input (a gateway
// ends then) and, a moment later, kills what is left.
func (gws *gateways) stop() {
	gws.mu.Lock()
	if gws.done {
		gws.mu.Unlock()
		return
	}
	gws.done = true
	procs := gws.procs
	gws.mu.Unlock()
	for _, g := range procs {
		g.hold.Close()
		if g.cmd.Process != nil {
			g.cmd.Process.Signal(syscall.SIGTERM)
		}
	}
	deadline := time.Now().Add(killGrace)
	for _, g := range procs {
		for g.cmd.ProcessState == nil && time.Now().Before(deadline) {
			if err := g.cmd.Process.Signal(syscall.Signal(0)); err != nil {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		g.cmd.Process.Kill()
	}
}

// recent returns a gateway's end if one comes within d (a rank that lost
// its connection may report before the gateway's exit is seen).
func (gws *gateways) recent(d time.Duration) (gatewayExit, bool) {
	if len(gws.procs) == 0 {
		return gatewayExit{}, false
	}
	select {
	case e := <-gws.exited:
		return e, true
	case <-time.After(d):
		return gatewayExit{}, false
	}
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = t.b[len(t.b)-t.max:]
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}
