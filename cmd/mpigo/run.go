package main

import (
	"bufio"
	"bytes"
	"cmp"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/mpigo/mpi"
	"github.com/mpigo/mpi/internal/boot"
	"github.com/mpigo/mpi/internal/transport/shm"
)

const runUsage = `Usage: mpigo run [flags] -n N PROGRAM [ARGS...] [: -n M PROGRAM2 [ARGS...] ...]

Starts N ranks of PROGRAM as one MPI job on this machine, one process
each (or --ranks-per-proc K goroutine ranks per process). PROGRAM is an
executable, or a Go package (a directory such as ./examples/pi), which is
built once first. Groups separated by ":" start different programs in one
job (MPMD): ranks are numbered in the order of the groups.

Every rank gets MPIGO_RANK, MPIGO_SIZE, MPIGO_LOCAL_RANK, MPIGO_LOCAL_SIZE,
MPIGO_NODE, MPIGO_NODE_RANKS (the ranks on its node), MPIGO_APPS (the
sizes of the MPMD groups), MPIGO_JOBID and MPIGO_KVS (the address of the job's key-value store) in its environment.
Processes on one node talk through shared memory, others over TCP.
Output is forwarded line by line; standard input goes to rank 0; SIGINT
and SIGTERM are passed on to every rank. The job ends when every rank has
exited, or as soon as one fails: then the others are stopped and mpigo
run exits with the failed rank's status. With --ft the others go on
(they see the failure as mpi.ErrProcFailed) and mpigo run exits with the
status of the first rank that failed once they are done.

Flags:
`

type runConfig struct {
	tagOutput    bool
	timeout      time.Duration
	ranksPerProc int
	hostList     string
	hostfile     string
	agent        string
	transport    string
	fabric       string // --fabric: MPIGO_FABRIC
	verbose      bool   // --verbose: MPIGO_VERBOSE=1
	async        bool   // --async-progress: MPIGO_ASYNC_PROGRESS=1
	insecure     bool
	hosts        []hostSlots
	groups       []runGroup

	env      []string // -x, -genv: VAR=VALUE for every rank
	envWarn  []string // -x VAR that is not set here
	ppn      int      // -ppn
	npernode int      // -npernode
	mapBy    string   // --map-by
	// placementNote says how --map-by was read where it differs from
	// Open MPI's meaning (core, hwthread); printed before the job starts.
	placementNote string
	byNode        bool          // --map-by node: round robin over the hosts
	bindTo        string        // --bind-to
	bind          bool          // --bind-to core
	output        string        // --output-filename DIR[:nocopy]
	outputDir     string        // DIR: DIR/rank.N/stdout and stderr
	outputCopy    bool          // also print the output here (not :nocopy)
	nGiven        bool          // -n was on the command line (of the first group)
	diag          diagFlags     // --hang-report, --check, --trace (diagrun.go)
	gateways      []gatewaySpec // --gateway (gateway.go)

	// spawner starts the processes ranks spawn, for this job and those it
	// spawns (spawnrun.go); dir is a spawned job's working folder ("":
	// the launcher's); spawned says the job was spawned (it takes no
	// standard input).
	spawner *spawner
	dir     string
	spawned bool
}

type runGroup struct {
	n    int
	prog string
	args []string
	env  []string // -env: VAR=VALUE for this group's ranks
	dir  string   // the ranks' working folder, if not the job's (a spawn's info wdir)
}

func runFlags(cfg *runConfig, g *runGroup, n *int, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {} // runCmd says what was wrong in a line or two
	fs.IntVar(n, "n", 1, "number of processes (ranks) to start")
	fs.IntVar(n, "np", 1, "same as -n")
	fs.Var(envList{flag: "env", vals: &g.env}, "env", "`VAR=VALUE` (or -env VAR VALUE) in the environment of this program's ranks (after \":\", of that group's)")
	if cfg != nil {
		fs.BoolVar(&cfg.tagOutput, "tag-output", false, "prefix every output line with [RANK]")
		fs.DurationVar(&cfg.timeout, "timeout", 0, "stop the job after this long (e.g. 30s, 5m) and report the ranks still running")
		fs.IntVar(&cfg.ranksPerProc, "ranks-per-proc", 1, "host this many ranks as goroutines in each process (hybrid: goroutines inside, processes between)")
		fs.StringVar(&cfg.hostList, "host", "", "start ranks on these hosts through the launch agent: h1:2,h2:2 (host:slots; slots default 1)")
		fs.StringVar(&cfg.hostfile, "hostfile", "", "read hosts from this file: lines \"host:N\" (MPICH) or \"host slots=N\" (Open MPI); # comments")
		fs.StringVar(&cfg.agent, "launch-agent", "ssh", "command that runs a command on a host, called as AGENT HOST COMMAND (with --host/--hostfile)")
		fs.Bool("oversubscribe", false, "accepted for mpirun's sake: mpigo always allows more ranks than cores (waiting ranks sleep)")
		fs.StringVar(&cfg.fabric, "fabric", "", "the network library between nodes: ucx, ofi (libfabric), or off for tcp (sets MPIGO_FABRIC; default: ucx if mpigo was built with -tags mpigo_ucx, else ofi with -tags mpigo_ofi; docs/fabric.md)")
		fs.BoolVar(&cfg.verbose, "verbose", false, "each process says which transport reaches each peer of its ranks (shm, ucx, ofi, tcp...) on standard error (sets MPIGO_VERBOSE=1)")
		fs.BoolVar(&cfg.async, "async-progress", false, "give each process one Go processor more than its share of the node's cores, so that it serves its peers (one-sided windows, large messages) while its ranks compute; costs latency over tcp (sets MPIGO_ASYNC_PROGRESS=1; docs/performance.md)")
		fs.StringVar(&cfg.transport, "transport", "", "force the transport between processes of one node: shm (the default) or tcp (sets MPIGO_TRANSPORT)")
		fs.Var(envList{flag: "x", vals: &cfg.env, warn: &cfg.envWarn}, "x", "`VAR[=VALUE]` in the environment of every rank, also on remote hosts; VAR alone passes on this shell's value (Open MPI's -x)")
		fs.Var(envList{flag: "genv", vals: &cfg.env}, "genv", "`VAR=VALUE` (or -genv VAR VALUE) in the environment of every rank, also on remote hosts (Hydra's -genv)")
		fs.IntVar(&cfg.ppn, "ppn", 0, "`N` ranks on each host of --host/--hostfile in turn, whatever their slots, wrapping round (Hydra's -ppn); without -n, N on every host")
		fs.IntVar(&cfg.npernode, "npernode", 0, "`N` ranks on each host, at most (Open MPI's -npernode; the same as --map-by ppr:N:node)")
		fs.StringVar(&cfg.mapBy, "map-by", "", "placement over the hosts: slot (fill each host's slots in turn; the default), node (one rank per host in turn) or ppr:N:node (N ranks on each host, at most); core and hwthread are taken as slot, with a note")
		fs.StringVar(&cfg.bindTo, "bind-to", "none", "core: pin each process to a core of its own (K cores with --ranks-per-proc K; Linux), none: let the kernel place them")
		fs.StringVar(&cfg.output, "output-filename", "", "write each process's output to `DIR`/rank.N/stdout and DIR/rank.N/stderr (N: its first rank) as well as here; DIR:nocopy only to the files")
		addDiagFlags(fs, &cfg.diag)
		fs.Var(gatewayList{&cfg.gateways}, "gateway", "`NET=HOST[:PORT][/PUBLIC]`: ranks in network NET (10.1.0.0/16) reach other networks through a gateway this starts on HOST (ranks in NET reach it at HOST:PORT; other gateways at PUBLIC, if given); repeat for each network (docs/gateways.md)")
		fs.BoolVar(&cfg.insecure, "insecure-fabric", false, "send tcp frames unencrypted and unchecked, for networks where nobody can read or alter traffic (sets MPIGO_TCP_PROTECT=off; the handshake still proves the job's secret)")
	}
	// Help lines fit a terminal: PrintDefaults indents after each newline.
	fs.VisitAll(func(f *flag.Flag) { f.Usage = wrapUsage(f.Usage, 72) })
	return fs
}

// parseRun parses the command line into groups.
func parseRun(args []string, stderr io.Writer) (*runConfig, error) {
	cfg := &runConfig{}
	first := true
	for {
		var n int
		var fs *flag.FlagSet
		var g runGroup
		if first {
			fs = runFlags(cfg, &g, &n, io.Discard)
		} else {
			fs = runFlags(nil, &g, &n, io.Discard)
		}
		if err := fs.Parse(joinPairs(args, fs)); err != nil {
			return nil, err
		}
		if first {
			fs.Visit(func(f *flag.Flag) { cfg.nGiven = cfg.nGiven || f.Name == "n" || f.Name == "np" })
		}
		rest := fs.Args()
		if len(rest) == 0 || rest[0] == ":" {
			return nil, errors.New("no program given (usage: mpigo run -n N PROGRAM [ARGS...])")
		}
		if n < 1 {
			return nil, fmt.Errorf("-n %d: need at least one process", n)
		}
		g.n, g.prog = n, rest[0]
		i := 1
		for i < len(rest) && rest[i] != ":" {
			i++
		}
		g.args = rest[1:i]
		cfg.groups = append(cfg.groups, g)
		if i == len(rest) {
			return cfg, nil
		}
		args = rest[i+1:]
		first = false
	}
}

func runCmd(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, runUsage)
		runFlags(&runConfig{}, &runGroup{}, new(int), stderr).PrintDefaults()
		return 2
	}
	for _, a := range args {
		if isHelp(a) {
			// Asked for: the help goes to stdout (so `| less` shows it).
			fmt.Fprint(stdout, runUsage)
			runFlags(&runConfig{}, &runGroup{}, new(int), stdout).PrintDefaults()
			return 0
		}
		if !strings.HasPrefix(a, "-") {
			break // the program; its own flags are its own
		}
	}
	cfg, err := parseRun(args, stderr)
	if err == nil {
		err = cfg.check()
	}
	if err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintf(stderr, "mpigo run: %v\n", err)
			if hint := mpiexecHint(err); hint != "" {
				fmt.Fprintf(stderr, "mpigo run: %s\n", hint)
			}
			fmt.Fprintln(stderr, `run "mpigo run -h" for the flags`)
		}
		return 2
	}
	if cfg.placementNote != "" {
		fmt.Fprintf(stderr, "mpigo run: %s\n", cfg.placementNote)
	}
	// What killed jobs left behind goes first.
	removeStale()
	// The run folder holds the programs built for the job, and exists
	// only if one is. Its name says whose it is, so that a later launcher
	// can tell one whose launcher is gone (removeStale).
	tmp := ""
	runDir := func() (string, error) {
		if tmp == "" {
			d, err := os.MkdirTemp("", fmt.Sprintf("mpigo-run-%d-", os.Getpid()))
			if err != nil {
				return "", err
			}
			tmp = d
		}
		return tmp, nil
	}
	defer func() {
		if tmp != "" {
			os.RemoveAll(tmp)
		}
	}()
	for i := range cfg.groups {
		path, err := resolveProgram(cfg.groups[i].prog, runDir, i, stderr)
		if err != nil {
			fmt.Fprintf(stderr, "mpigo run: %v\n", err)
			return 1
		}
		cfg.groups[i].prog = path
	}
	cfg.settleArch() // runarch.go
	cfg.spawner = newSpawner(cfg, runDir, stdout, stderr)
	code := launch(cfg, tmp, stdout, stderr)
	cfg.spawner.wait()
	return code
}

// check checks the flags against each other and settles hosts,
// placement, binding and output.
func (cfg *runConfig) check() error {
	var err error
	if cfg.transport != "" && cfg.transport != "shm" && cfg.transport != "tcp" {
		err = fmt.Errorf("-transport %q: want shm or tcp", cfg.transport)
	}
	if err == nil && cfg.ranksPerProc < 1 {
		err = fmt.Errorf("--ranks-per-proc %d: need at least 1", cfg.ranksPerProc)
	}
	if err == nil {
		cfg.hosts, err = parseHosts(cfg.hostList, cfg.hostfile)
	}
	if err == nil {
		var p placement
		if p, err = parsePlacement(cfg.ppn, cfg.npernode, cfg.mapBy); err == nil {
			cfg.placementNote = p.note
			err = cfg.applyPlacement(p, cfg.nGiven)
		}
	}
	if err == nil {
		cfg.bind, err = parseBind(cfg.bindTo)
	}
	if err == nil {
		cfg.outputDir, cfg.outputCopy, err = parseOutput(cfg.output)
	}
	return err
}

// resolveProgram returns an executable for prog, building it first (in
// the folder runDir makes) if it is a Go package.
func resolveProgram(prog string, runDir func() (string, error), i int, stderr io.Writer) (string, error) {
	st, err := os.Stat(prog)
	if err != nil && runtime.GOOS == "windows" && filepath.Ext(prog) == "" {
		// As in cmd.exe, .\pi names .\pi.exe.
		if st2, err2 := os.Stat(prog + ".exe"); err2 == nil && !st2.IsDir() {
			prog, st, err = prog+".exe", st2, nil
		}
	}
	isPkg := err == nil && st.IsDir()
	if !isPkg && err != nil && (strings.HasPrefix(prog, "./") || strings.HasPrefix(prog, "../")) {
		return "", fmt.Errorf("%s: no such file or directory", prog)
	}
	if !isPkg {
		if strings.ContainsRune(prog, os.PathSeparator) || strings.ContainsRune(prog, '/') { // Windows takes both
			if err != nil {
				return "", fmt.Errorf("%s: %v", prog, err)
			}
			return filepath.Abs(prog)
		}
		p, err := exec.LookPath(prog)
		if errors.Is(err, exec.ErrDot) && runtime.GOOS == "windows" {
			// Windows shells (and MS-MPI's mpiexec) run a program of
			// the current folder named without a path: so does mpigo.
			return filepath.Abs(p)
		}
		if err != nil {
			return "", fmt.Errorf("%s: not found in PATH", prog)
		}
		return p, nil
	}
	tmp, err := runDir()
	if err != nil {
		return "", err
	}
	out := filepath.Join(tmp, fmt.Sprintf("%s.%d", filepath.Base(filepath.Clean(prog)), i))
	fmt.Fprintf(stderr, "mpigo run: building %s\n", prog)
	build := exec.Command("go", "build", "-o", out, ".")
	build.Dir = prog
	// The go command's work folder goes inside the run folder, so that a
	// launcher killed while it builds leaves nothing in $TMPDIR that the
	// next launcher's sweep of dead run folders would not remove.
	build.Env = append(os.Environ(), "GOTMPDIR="+tmp)
	build.Stdout, build.Stderr = stderr, stderr
	if err := build.Run(); err != nil {
		return "", fmt.Errorf("building %s failed: %v", prog, err)
	}
	return out, nil
}

// hostSlots is a host and how many ranks it takes.
type hostSlots struct {
	name  string
	slots int
}

// parseHosts reads --host ("h1:2,h2") and --hostfile (lines "h:2",
// "h slots=2" or "h"; # starts a comment).
func parseHosts(list, file string) ([]hostSlots, error) {
	var hosts []hostSlots
	add := func(spec, where string) error {
		spec = strings.TrimSpace(spec)
		if spec == "" {
			return nil
		}
		name, n := spec, 1
		if f := strings.Fields(spec); len(f) > 1 {
			name = f[0]
			for _, kv := range f[1:] {
				k, v, ok := strings.Cut(kv, "=")
				if !ok || (k != "slots" && k != "max_slots") {
					return fmt.Errorf("%s: cannot read %q (want \"host slots=N\")", where, spec)
				}
				if k == "slots" {
					s, err := strconv.Atoi(v)
					if err != nil || s < 1 {
						return fmt.Errorf("%s: bad slot count in %q", where, spec)
					}
					n = s
				}
			}
		} else if h, s, ok := strings.Cut(spec, ":"); ok {
			v, err := strconv.Atoi(s)
			if err != nil || v < 1 {
				return fmt.Errorf("%s: bad slot count in %q (want host:N)", where, spec)
			}
			name, n = h, v
		}
		hosts = append(hosts, hostSlots{name, n})
		return nil
	}
	if list != "" {
		for _, h := range strings.Split(list, ",") {
			if err := add(h, "--host"); err != nil {
				return nil, err
			}
		}
	}
	if file != "" {
		b, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("--hostfile: %v", err)
		}
		for i, line := range strings.Split(string(b), "\n") {
			line, _, _ = strings.Cut(line, "#")
			if err := add(line, fmt.Sprintf("%s:%d", file, i+1)); err != nil {
				return nil, err
			}
		}
		if len(hosts) == 0 {
			return nil, fmt.Errorf("--hostfile %s names no host", file)
		}
	}
	return hosts, nil
}

// hostFor returns the host of slot number slot, filling hosts in order and
// wrapping round when every slot is taken (as MPICH does).
func hostFor(hosts []hostSlots, slot int) string {
	total := 0
	for _, h := range hosts {
		total += h.slots
	}
	slot %= total
	for _, h := range hosts {
		if slot < h.slots {
			return h.name
		}
		slot -= h.slots
	}
	return hosts[0].name
}

func isLoopback(h string) bool {
	return h == "localhost" || h == "127.0.0.1" || h == "::1"
}

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// remoteCommand is the command the launch agent runs on a rank's host.
// The job's secret must not appear on any command line (ps shows them to
// every user of both machines) nor stay in the rank's environment (which
// /proc shows for as long as it runs): the command's shell reads it from
// standard input, where the launcher writes it first, into a file only
// this user can read, opens that file as descriptor 3 and deletes it, then
// runs the rank with MPIGO_SECRET_FD=3; the rank reads and closes the
// descriptor. The program's standard input is what follows (rank 0: the
// launcher's own). It runs in sh, whatever the login shell is. bind, if
// not empty, is shell code that sets b to a command to run the program
// under (remoteBindShell: taskset for --bind-to core).
func remoteCommand(cwd string, env []string, prog string, args []string, bind string) string {
	script := "umask 077 && f=$(mktemp) && IFS= read -r s && printf '%s\\n' \"$s\" >\"$f\" && exec 3<\"$f\" && rm -f \"$f\" && s= && cd " + shellQuote(cwd)
	if bind != "" {
		script += " && " + bind + " && exec $b env"
	} else {
		script += " && exec env"
	}
	for _, e := range env {
		script += " " + shellQuote(e)
	}
	script += " " + shellQuote(prog)
	for _, a := range args {
		script += " " + shellQuote(a)
	}
	return "sh -c " + shellQuote(script)
}

// killGrace is how long ranks get to exit after SIGTERM before SIGKILL,
// so that a failed job is gone within about a second.
const killGrace = time.Second

// waitFor waits for wg at most d and reports whether it is done.
func waitFor(wg *sync.WaitGroup, d time.Duration) bool {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
		return true
	case <-time.After(d):
		return false
	}
}

// rankProc is one launched process, hosting ranks rank .. rank+n-1.
type rankProc struct {
	rank      int
	n         int
	cmd       *exec.Cmd
	state     *os.ProcessState
	err       error
	done      bool
	sigkilled bool // the launcher sent it SIGKILL
}

// sigName names a signal as users know it: SIGINT, SIGTERM.
func sigName(s syscall.Signal) string {
	switch s {
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGHUP:
		return "SIGHUP"
	}
	return s.String()
}

// lineWriter forwards output line by line, optionally prefixed, so lines
// of different ranks never mix.
type lineWriter struct {
	mu   *sync.Mutex
	w    io.Writer
	hold *holdBack // if not nil, collateral failure lines wait for the cause
}

// holdBack holds back the lines in which surviving ranks report that a
// peer failed ("mpigo: ... process failed ...", printed as they exit)
// until the launcher has named the cause. A rank killed by a signal says
// nothing itself: the launcher learns it only when it reaps the process,
// and a survivor that lost its connection often prints first, so that the
// first line a user saw named a healthy rank. Held lines are written when
// the launcher says its own line about a failure (release), or at the
// latest holdMax after the first one was held.
type holdBack struct {
	mu      *sync.Mutex // the output lock, shared with the lineWriters
	w       io.Writer
	held    [][]byte
	done    bool // released: lines pass straight through from now on
	timer   *time.Timer
	holdMax time.Duration
}

// collateral reports whether line is a rank's report that another rank
// failed, which should follow the launcher's word on the cause.
func collateral(line []byte) bool {
	return bytes.Contains(line, []byte("mpigo: ")) && bytes.Contains(line, []byte("process failed"))
}

// take holds line (with its prefix) if it must wait; the caller holds mu.
func (h *holdBack) take(prefix string, line []byte) bool {
	if h.done || !collateral(line) {
		return false
	}
	l := append([]byte(prefix), line...)
	if l[len(l)-1] != '\n' {
		l = append(l, '\n')
	}
	h.held = append(h.held, l)
	if h.timer == nil {
		h.timer = time.AfterFunc(h.holdMax, h.release)
	}
	return true
}

// release writes the held lines and lets later ones through.
func (h *holdBack) release() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.releaseLocked()
}

// releaseLocked is release with mu held.
func (h *holdBack) releaseLocked() {
	if h.done {
		return
	}
	h.done = true
	if h.timer != nil {
		h.timer.Stop()
	}
	for _, l := range h.held {
		h.w.Write(l)
	}
	h.held = nil
}

// copyFrom forwards r's lines to lw (unless show is false) and to file
// (if not nil, without the prefix; closed at the end).
func (lw lineWriter) copyFrom(r io.Reader, prefix string, file io.WriteCloser, show bool, wg *sync.WaitGroup) {
	defer wg.Done()
	if file != nil {
		defer file.Close()
	}
	// A line longer than maxOutLine is passed on in pieces of that size,
	// each ended as a line: the launcher never holds more of a rank's
	// output than that, whatever the rank writes.
	sc := bufio.NewReaderSize(r, maxOutLine)
	for {
		line, err := sc.ReadSlice('\n')
		if len(line) > 0 && file != nil {
			file.Write(line)
			if line[len(line)-1] != '\n' {
				io.WriteString(file, "\n")
			}
		}
		if len(line) > 0 && show {
			lw.mu.Lock()
			if lw.hold != nil && lw.hold.take(prefix, line) {
				lw.mu.Unlock()
				if err != nil && err != bufio.ErrBufferFull {
					return
				}
				continue
			}
			io.WriteString(lw.w, prefix)
			lw.w.Write(line)
			if line[len(line)-1] != '\n' {
				io.WriteString(lw.w, "\n")
			}
			lw.mu.Unlock()
		}
		if err != nil && err != bufio.ErrBufferFull {
			return
		}
	}
}

// maxOutLine is the longest piece of a rank's output line the launcher
// holds.
const maxOutLine = 64 << 10

// launch runs the job; runDir is the run folder, if there is one.
func launch(cfg *runConfig, runDir string, stdout, stderr io.Writer) int {
	size, nprocs := 0, 0
	for _, g := range cfg.groups {
		size += g.n
		nprocs += (g.n + cfg.ranksPerProc - 1) / cfg.ranksPerProc
	}
	remote := false
	for _, h := range cfg.hosts {
		remote = remote || !isLoopback(h.name)
	}
	if _, err := cfg.diag.hangThreshold(); err != nil {
		fmt.Fprintf(stderr, "mpigo run: %v\n", err)
		return 2
	}
	traceDir := ""
	if cfg.diag.trace != "" {
		d, err := os.MkdirTemp("", "mpigo-trace-")
		if err != nil {
			fmt.Fprintf(stderr, "mpigo run: --trace: %v\n", err)
			return 1
		}
		traceDir = d
		defer os.RemoveAll(d)
	}
	kvsAddr := "127.0.0.1:0"
	if remote {
		kvsAddr = ":0"
	}
	var idb [8]byte
	rand.Read(idb[:])
	jobID := binary.LittleEndian.Uint64(idb[:]) >> 1
	secret := make([]byte, 32)
	if _, err := rand.Read(secret); err != nil {
		fmt.Fprintf(stderr, "mpigo run: the job's secret: %v\n", err)
		return 1
	}
	kvs, err := boot.NewServer(kvsAddr, nprocs, secret)
	if err != nil {
		fmt.Fprintf(stderr, "mpigo run: %v\n", err)
		return 1
	}
	defer kvs.Close()
	host, _ := os.Hostname()
	if h := os.Getenv("MPIGO_KVS_HOST"); h != "" {
		// The name remote ranks resolve to reach this launcher, where the
		// short host name does not resolve (a Kubernetes pod: POD.SERVICE).
		host = h
	}
	kvsPublic := kvs.Addr()
	if remote {
		_, port, _ := net.SplitHostPort(kvs.Addr())
		kvsPublic = net.JoinHostPort(host, port)
	}
	cwd, _ := os.Getwd()
	if cfg.dir != "" {
		cwd = cfg.dir
	}
	if cfg.spawner != nil {
		cfg.spawner.serve(kvs)
	}
	slot, proc := 0, 0 // next host slot to fill, next process to place

	var outMu sync.Mutex
	// say writes the launcher's own messages; ranks' lines go through the
	// same lock so the two never mix.
	hold := &holdBack{mu: &outMu, w: stderr, holdMax: time.Second}
	say := func(format string, args ...any) {
		outMu.Lock()
		fmt.Fprintf(stderr, format, args...)
		outMu.Unlock()
	}
	// sayCause writes a line that names why the job fails, and then the
	// survivors' reports of it that waited (holdBack).
	sayCause := func(format string, args ...any) {
		outMu.Lock()
		fmt.Fprintf(stderr, format, args...)
		hold.releaseLocked()
		outMu.Unlock()
	}
	kvs.SetLog(func(msg string) { say("%s\n", msg) })
	out := lineWriter{&outMu, stdout, nil}
	errw := lineWriter{&outMu, stderr, hold}
	var copiers sync.WaitGroup
	procs := make([]*rankProc, 0, nprocs)
	exited := make(chan *rankProc, nprocs)

	// Each rank runs in a process group of its own; signals go to the
	// whole group, so helpers a rank started go too and release its output.
	group, err := newRankGroup()
	if err != nil {
		say("mpigo run: %v\n", err)
		return 1
	}
	defer group.close()
	var lastSent syscall.Signal // the last signal stopAll sent before SIGKILL
	stopAll := func(sig syscall.Signal) {
		if sig != syscall.SIGKILL {
			lastSent = sig
		}
		for _, p := range procs {
			if !p.done && p.cmd.Process != nil {
				if sig == syscall.SIGKILL {
					p.sigkilled = true
				}
				group.signal(p.cmd, sig)
			}
		}
	}
	// Place every process first: ranks learn which ranks share their node.
	nodeOf := make([]string, 0, size)
	for _, g := range cfg.groups {
		for i := 0; i < g.n; i += cfg.ranksPerProc {
			here := min(cfg.ranksPerProc, g.n-i)
			node := host
			if len(cfg.hosts) > 0 {
				node = cfg.nodeFor(slot, proc)
				slot += here
			}
			proc++
			for k := 0; k < here; k++ {
				nodeOf = append(nodeOf, node)
			}
		}
	}
	nodeRanks := map[string][]int{}
	for r, node := range nodeOf {
		nodeRanks[node] = append(nodeRanks[node], r)
	}
	// Whatever happens to the ranks, nothing of the job stays in
	// /dev/shm (ranks unlink their inboxes as soon as their peers have
	// mapped them; this is for ranks killed before that), nor in the run
	// folder; the reaper does it if the launcher is killed.
	for _, w := range cfg.envWarn {
		say("mpigo run: %s\n", w)
	}
	bind := newBinder()
	if cfg.bind {
		switch {
		case len(cfg.hosts) > 0:
			// Remote processes are pinned by taskset on their host.
		case !bindSupported || len(bind.cpus) == 0:
			say("mpigo run: --bind-to core is not supported on this system (%s): the ranks are not pinned\n", goos)
		default:
			if most := maxNodeRanks(nodeRanks); most > len(bind.cpus) {
				say("mpigo run: --bind-to core: %d ranks on %d cores: some share a core\n", most, len(bind.cpus))
			}
		}
	}
	reap := startReaper(jobID, "", runDir)
	defer func() {
		if len(cfg.hosts) == 0 {
			shm.RemoveJob(inboxDir(), jobID)
		}
		if runDir != "" {
			os.RemoveAll(runDir)
		}
		reap.done()
	}()
	// Gateways listen before any rank may dial through them.
	gws, err := startGateways(cfg, group, jobID, secret, cwd, say)
	defer gws.stop()
	if err != nil {
		say("mpigo run: %v\n", err)
		return 1
	}
	// Every rank learns the MPMD groups, its process sets mpigo://app/<i>
	// (session.go).
	apps := make([]string, len(cfg.groups))
	for i, g := range cfg.groups {
		apps[i] = strconv.Itoa(g.n)
	}
	// SIGINT and SIGTERM are the launcher's to pass on from before the
	// first rank starts: one that came while ranks were starting killed
	// the launcher and left the ranks it had started running. Those that
	// come meanwhile wait in the channel for the loop below, which passes
	// them on to the ranks then running.
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sigs)
	rank := 0
	for _, g := range cfg.groups {
		for i := 0; i < g.n; i += cfg.ranksPerProc {
			here := min(cfg.ranksPerProc, g.n-i)
			node, addr := nodeOf[rank], ""
			if len(cfg.hosts) > 0 && !isLoopback(node) {
				addr = node
			}
			local := nodeRanks[node]
			env := []string{
				boot.EnvRank + "=" + strconv.Itoa(rank),
				boot.EnvSize + "=" + strconv.Itoa(size),
				boot.EnvRanksHere + "=" + strconv.Itoa(here),
				boot.EnvLocalRank + "=" + strconv.Itoa(slices.Index(local, rank)),
				boot.EnvLocalSize + "=" + strconv.Itoa(len(local)),
				boot.EnvNodeRanks + "=" + boot.FormatRanks(local),
				boot.EnvNode + "=" + node,
				boot.EnvJobID + "=" + strconv.FormatUint(jobID, 10),
				boot.EnvKVS + "=" + kvsPublic,
				boot.EnvApps + "=" + strings.Join(apps, ","),
			}
			if addr != "" {
				env = append(env, boot.EnvAddr+"="+addr)
			}
			if cfg.transport != "" {
				env = append(env, "MPIGO_TRANSPORT="+cfg.transport)
			}
			if cfg.fabric != "" {
				env = append(env, "MPIGO_FABRIC="+cfg.fabric)
			}
			if cfg.verbose {
				env = append(env, "MPIGO_VERBOSE=1")
			}
			if cfg.async {
				env = append(env, "MPIGO_ASYNC_PROGRESS=1")
			}
			if cfg.insecure {
				env = append(env, "MPIGO_TCP_PROTECT=off")
			}
			if gws.table != "" {
				env = append(env, "MPIGO_GATEWAYS="+gws.table)
			}
			env = append(env, cfg.diag.env(traceDir)...)
			var cmd *exec.Cmd
			var secretR *os.File
			if len(cfg.hosts) == 0 {
				cmd = exec.Command(g.prog, g.args...)
				cmd.Dir = cfg.dir
				if g.dir != "" {
					cmd.Dir = g.dir
				}
				cmd.Env = append(append(os.Environ(), extraEnv(cfg, &g, false)...), env...)
				// A local rank reads the secret from a pipe on descriptor 3.
				r, w, err := os.Pipe()
				if err != nil {
					say("mpigo run: cannot start rank %d (%s): %v\n", rank, g.prog, err)
					stopAll(syscall.SIGKILL)
					return 1
				}
				io.WriteString(w, hex.EncodeToString(secret)+"\n")
				w.Close()
				// The secret is on a descriptor (3 on Unix), never on a
				// command line or in an environment (see secretFor).
				cmd.Env = append(cmd.Env, boot.EnvSecretFD+"="+group.prepare(cmd, r))
				secretR = r
				if rank == 0 && !cfg.spawned {
					cmd.Stdin = os.Stdin
				}
			} else {
				agent := strings.Fields(cfg.agent)
				// The remote shell puts the secret on descriptor 3 (see
				// remoteCommand).
				env = append(env, boot.EnvSecretFD+"=3")
				bindSh := ""
				if cfg.bind {
					bindSh = remoteBindShell(bind.place(node), here, rank)
				}
				cmd = exec.Command(agent[0], append(agent[1:], node, remoteCommand(cmp.Or(g.dir, cwd), append(extraEnv(cfg, &g, true), env...), g.prog, g.args, bindSh))...)
				cmd.Env = os.Environ()
				// A remote rank's shell reads the secret from the agent's
				// standard input before anything the rank reads there.
				var in io.Reader = strings.NewReader(hex.EncodeToString(secret) + "\n")
				if rank == 0 {
					in = io.MultiReader(in, os.Stdin)
				}
				cmd.Stdin = in
				group.prepare(cmd, nil)
			}
			prefix := ""
			if cfg.tagOutput && here == 1 {
				prefix = fmt.Sprintf("[%d] ", rank)
			} else if cfg.tagOutput {
				prefix = fmt.Sprintf("[%d-%d] ", rank, rank+here-1)
			}
			var fo, fe *os.File // --output-filename
			if cfg.outputDir != "" {
				var err error
				if fo, fe, err = outputFiles(cfg.outputDir, rank); err != nil {
					say("mpigo run: %v\n", err)
					stopAll(syscall.SIGKILL)
					return 1
				}
			}
			so, err1 := cmd.StdoutPipe()
			se, err2 := cmd.StderrPipe()
			var err3 error
			if cfg.bind && len(cfg.hosts) == 0 && bindSupported && len(bind.cpus) > 0 {
				err3 = startBound(cmd, bind.localCPUs(bind.place(node), here))
			} else {
				err3 = cmd.Start()
			}
			if secretR != nil {
				secretR.Close()
			}
			if err := errors.Join(err1, err2, err3); err != nil {
				if fo != nil {
					fo.Close()
					fe.Close()
				}
				say("mpigo run: cannot start rank %d (%s): %v\n", rank, g.prog, err)
				stopAll(syscall.SIGKILL)
				return 1
			}
			copiers.Add(2)
			show := cfg.outputDir == "" || cfg.outputCopy
			go out.copyFrom(so, prefix, fileOrNil(fo), show, &copiers)
			go errw.copyFrom(se, prefix, fileOrNil(fe), show, &copiers)
			p := &rankProc{rank: rank, n: here, cmd: cmd}
			procs = append(procs, p)
			reap.rank(cmd.Process.Pid)
			if err := group.started(cmd); err != nil {
				say("mpigo run: rank %d (%s): %v\n", rank, g.prog, err)
				stopAll(syscall.SIGKILL)
				return 1
			}
			go func() {
				// Wait after the pipes are drained would deadlock on a
				// child that fills them; Process.Wait does not touch them.
				p.state, p.err = p.cmd.Process.Wait()
				exited <- p
			}()
			rank += here
		}
	}

	if runDir != "" && len(cfg.hosts) == 0 {
		// Every local rank runs its program now: the run folder is not
		// needed any more (the programs stay as long as they run).
		os.RemoveAll(runDir)
		reap.runDirGone()
	}

	var fam *hangFamily
	if cfg.spawner != nil {
		fam = &cfg.spawner.fam
	}
	hw := newHangWatch(&cfg.diag, kvs, fam) // diagrun.go
	defer hw.stop()
	var timeout <-chan time.Time
	if cfg.timeout > 0 {
		timeout = time.After(cfg.timeout)
	}

	code := 0
	running := nprocs
	var killTimer <-chan time.Time
	failed := false                // the job is being stopped
	stopping := false              // we have sent SIGTERM: deaths by it are ours
	var forwarded syscall.Signal   // a signal the user sent us and we passed on
	var stopTimer <-chan time.Time // stop the job when no culprit shows up
	var culprit *rankProc
	var consequence *rankProc // first rank that failed only because a peer did
	var leftEarly *rankProc   // first process that exited 0 while others ran
	// blameEarly names leftEarly as the culprit when ranks failed for lack
	// of a peer and nothing else failed: it left while they needed it.
	blameEarly := func() {
		if culprit != nil || consequence == nil || leftEarly == nil {
			return
		}
		culprit = leftEarly
		_, how := exitStatus(consequence)
		code = max(code, mpi.ExitPeerFailed)
		sayCause("mpigo run: %s (pid %d) exited (status 0) while other ranks still needed it: %s (pid %d) %s after losing it; "+
			"did %s return from its function, call os.Exit or return from main before its part of the work was done?\n",
			leftEarly.ranks(), leftEarly.cmd.Process.Pid, consequence.ranks(), consequence.cmd.Process.Pid, how, leftEarly.ranks())
	}
	gwFailed := false // a gateway ended while the ranks ran
	gatewayDown := func(e gatewayExit) {
		if failed {
			return
		}
		sayCause("mpigo run: %s on host %s %s while the job ran: ranks in %s cannot reach the other networks; stopping the job\n", e.g.name(), e.g.spec.host, e.how, e.g.spec.prefix)
		if t := strings.TrimSpace(e.g.errs.String()); t != "" {
			say("mpigo run: its last words: %s\n", t)
		}
		gwFailed = true
		code = 1
		failed, stopping = true, true
		stopAll(syscall.SIGTERM)
		killTimer = time.After(killGrace)
	}
	progress := newStartupProgress(kvs, procs, nodeOf, say)
	returns := newReturnWatch(kvs, procs, say)
	for running > 0 {
		select {
		case <-progress.tick():
			progress.report(failed)
		case <-returns.tick():
			returns.check(failed)
		case e := <-gws.exited:
			gatewayDown(e)
		case p := <-exited:
			p.done = true
			running--
			c, how := exitStatus(p)
			if c != 0 && !failed {
				// A rank that lost its connection through a gateway may
				// report before the gateway's end is seen: name the
				// gateway, not the rank.
				if e, ok := gws.recent(300 * time.Millisecond); ok {
					gatewayDown(e)
				}
			}
			if c == 0 && !p.sigkilled && running > 0 && !failed && culprit == nil {
				if joined, inOrder := kvs.Departure(p.rank); joined && !inOrder {
					// It took part in the job and left without finishing
					// mpi.Main: the others may wait for it forever.
					culprit, code = p, 1
					sayCause("mpigo run: %s (pid %d) exited (status 0) before mpi.Main finished, while other ranks still needed it; stopping the other %d process(es) "+
						"(did it call os.Exit, or return from main, before its part of the work was done?)\n", p.ranks(), p.cmd.Process.Pid, running)
					failed, stopping = true, true
					stopAll(syscall.SIGTERM)
					killTimer = time.After(killGrace)
					break
				}
				if leftEarly == nil {
					leftEarly = p
				}
			}
			if p.sigkilled && c == 128+int(syscall.SIGKILL) {
				// Our SIGKILL, because it ignored the signal before: it
				// did not fail, it would not stop.
				say("mpigo run: %s (pid %d) ignored %v and was killed\n", p.ranks(), p.cmd.Process.Pid, sigName(lastSent))
				break
			}
			if c == 0 || culprit != nil || gwFailed || (stopping && (c == 128+int(syscall.SIGTERM) || c == 128+int(forwarded))) {
				if cfg.diag.ft && c != 0 && !stopping {
					say("mpigo run: %s (pid %d) %s; the other %d process(es) go on (--ft)\n", p.ranks(), p.cmd.Process.Pid, how, running)
				}
				break
			}
			if cfg.diag.ft && !stopping {
				// Under --ft the survivors go on; the job's status is the
				// first failure's.
				culprit, code = p, c
				sayCause("mpigo run: %s (pid %d) %s; the other %d process(es) go on (--ft)\n", p.ranks(), p.cmd.Process.Pid, how, running)
				break
			}
			if c == mpi.ExitPeerFailed || (len(cfg.hosts) > 0 && c == 255) {
				// It failed because another rank did (or, through ssh, we
				// cannot tell): name that one if it shows up, this one
				// otherwise, and give the culprit a moment to be reaped.
				if consequence == nil {
					consequence = p
				}
				if leftEarly != nil && !failed {
					blameEarly()
					failed, stopping = true, true
					stopAll(syscall.SIGTERM)
					killTimer = time.After(killGrace)
					break
				}
				if !failed && stopTimer == nil {
					stopTimer = time.After(500 * time.Millisecond)
				}
				break
			} else {
				culprit = p
				if code == 0 {
					code = c
				}
				if running > 0 {
					sayCause("mpigo run: %s (pid %d) %s; stopping the other %d process(es)\n", p.ranks(), p.cmd.Process.Pid, how, running)
				} else {
					sayCause("mpigo run: %s (pid %d) %s\n", p.ranks(), p.cmd.Process.Pid, how)
				}
			}
			if !failed {
				failed, stopping = true, true
				stopAll(syscall.SIGTERM)
				killTimer = time.After(killGrace)
			}
		case <-stopTimer:
			stopTimer = nil
			hold.release() // no cause showed up: the survivors' words are all there is
			if !failed {
				blameEarly()
				failed, stopping = true, true
				stopAll(syscall.SIGTERM)
				killTimer = time.After(killGrace)
			}
		case s := <-sigs:
			say("mpigo run: got %v, passing it on to %d running rank(s)\n", s, running)
			if note := returnedNote(kvs, procs); note != "" && !failed {
				say("%s", note)
			}
			forwarded = s.(syscall.Signal)
			stopAll(forwarded)
			if code == 0 {
				code = 128 + int(s.(syscall.Signal))
			}
			failed, stopping = true, true
			killTimer = time.After(killGrace)
		case <-hw.tick:
			if rep, ok := hw.hung(procs); ok && hw.keep {
				say("%smpigo run: the job hung (diagnosis above); it goes on (MPIGO_HANG_ABORT=0)\n", rep)
			} else if ok {
				sayCause("%smpigo run: the job hung (diagnosis above); stopping it (MPIGO_HANG_ABORT=0 lets it go on, --hang-report 0 turns the report off)\n", rep)
				if !failed {
					code = 1
					failed, stopping = true, true
					stopAll(syscall.SIGTERM)
					killTimer = time.After(killGrace)
				}
			}
		case <-hw.quit:
			say("%s", hw.gather(procs, "SIGQUIT: the state of every rank now", remote))
		case <-timeout:
			say("%s", hw.gather(procs, fmt.Sprintf("--timeout %v expired: the state of every rank", cfg.timeout), remote))
			var left []string
			for _, p := range procs {
				if !p.done {
					left = append(left, strconv.Itoa(p.rank))
				}
			}
			say("mpigo run: timeout after %v; rank(s) still running: %s; stopping them\n", cfg.timeout, strings.Join(left, ", "))
			if note := returnedNote(kvs, procs); note != "" && !failed {
				say("%s", note)
			}
			stopAll(syscall.SIGTERM)
			if !failed {
				code = 124
				failed = true
			}
			stopping = true
			timeout = nil
			killTimer = time.After(killGrace)
		case <-killTimer:
			var left []int
			for _, p := range procs {
				if !p.done {
					left = append(left, p.rank)
				}
			}
			sort.Ints(left)
			say("mpigo run: rank(s) %v did not stop after %v; killing them\n", left, sigName(lastSent))
			stopAll(syscall.SIGKILL)
			killTimer = nil
		}
	}
	// Every process has exited, but a rank started through a launch
	// agent may outlive its agent (the agent died of the SIGTERM, the rank
	// did not, being stuck in a C library) and hold the job's output
	// open: then end what is left of each process group, and never wait
	// for ever.
	if !waitFor(&copiers, killGrace) {
		say("mpigo run: the job's output is still open after its processes exited; killing what is left of them\n")
		for _, p := range procs {
			if p.cmd.Process != nil {
				group.signal(p.cmd, syscall.SIGKILL)
			}
		}
		if !waitFor(&copiers, 5*killGrace) {
			say("mpigo run: a process outside the job's process groups holds its output open; not waiting for it\n")
		}
	}
	hold.release()
	if cfg.diag.trace != "" {
		if n, err := mergeTrace(traceDir, cfg.diag.trace); err != nil {
			say("mpigo run: --trace %s: %v\n", cfg.diag.trace, err)
		} else {
			say("mpigo run: trace of %d rank(s) written to %s (mpigo trace %s; or open it in ui.perfetto.dev)\n", n, cfg.diag.trace, cfg.diag.trace)
		}
	}
	if culprit == nil && consequence != nil {
		_, how := exitStatus(consequence)
		say("mpigo run: %s (pid %d) %s after losing a peer\n", consequence.ranks(), consequence.cmd.Process.Pid, how)
		if code == 0 {
			code = mpi.ExitPeerFailed
		}
	}
	return code
}

// ranks names the ranks p hosts.
func (p *rankProc) ranks() string {
	if p.n <= 1 {
		return fmt.Sprintf("rank %d", p.rank)
	}
	return fmt.Sprintf("ranks %d-%d", p.rank, p.rank+p.n-1)
}

// exitStatus returns the exit code to report for p and a description.
func exitStatus(p *rankProc) (int, string) {
	if p.err != nil {
		return 1, fmt.Sprintf("could not be waited for: %v", p.err)
	}
	ws, ok := p.state.Sys().(syscall.WaitStatus)
	switch {
	case ok && ws.Signaled():
		return 128 + int(ws.Signal()), fmt.Sprintf("was killed by signal %d (%v)", int(ws.Signal()), ws.Signal())
	case p.state.ExitCode() != 0:
		return p.state.ExitCode(), fmt.Sprintf("exited with status %d", p.state.ExitCode())
	}
	return 0, "exited normally"
}

// isHelp reports whether a is a request for help.
func isHelp(a string) bool {
	switch a {
	case "-h", "-help", "--help":
		return true
	}
	return false
}

// mpiexecHints says, for flags of mpiexec, mpirun and srun that mpigo run
// does not have, what to use instead.
var mpiexecHints = map[string]string{
	"machinefile":     "--hostfile FILE",
	"f":               "--hostfile FILE",
	"H":               "--host h1:N,h2:N",
	"hosts":           "--host h1:N,h2:N",
	"wdir":            "mpigo run starts ranks in the current directory: cd there first",
	"genvall":         "local ranks inherit mpigo run's whole environment; for remote ranks name each variable: -x VAR",
	"envall":          "local ranks inherit mpigo run's whole environment; for remote ranks name each variable: -x VAR",
	"genvlist":        "-x VAR for each variable (-x VAR passes on this shell's value)",
	"envlist":         "-x VAR for each variable (-x VAR passes on this shell's value)",
	"genvnone":        "not supported: local ranks always inherit mpigo run's environment",
	"cpu-bind":        "--bind-to core (or --bind-to none)",
	"bind-to-core":    "--bind-to core",
	"rankfile":        "not supported: placement is --host/--hostfile with -ppn or --map-by slot|node|ppr:N:node; binding is --bind-to core",
	"outfile-pattern": "--output-filename DIR (DIR/rank.N/stdout)",
	"errfile-pattern": "--output-filename DIR (DIR/rank.N/stderr)",
	"report-bindings": "not supported: --bind-to core pins the i-th process of a host to core i (docs/tools.md)",
	"timeout":         "--timeout DURATION (e.g. 5m)",
}

// mpiexecHint returns the hint for the undefined flag err names, if any.
func mpiexecHint(err error) string {
	const p = "flag provided but not defined: -"
	msg := err.Error()
	if !strings.HasPrefix(msg, p) {
		return ""
	}
	name := strings.TrimLeft(strings.TrimPrefix(msg, p), "-")
	if h, ok := mpiexecHints[name]; ok {
		return "-" + name + " is a flag of mpiexec/mpirun; with mpigo run: " + h
	}
	return ""
}
