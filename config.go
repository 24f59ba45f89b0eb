package mpi

// Config: the tunables of a job, and their defaults from MPIGO_* variables.
//
// This file is the only one of package mpi that reads the environment:
// DefaultConfig reads every MPIGO_* setting of a job into a Config, once
// per job; Main's MPIGO_NP, the control variables of the tools interface
// (Cvar.Read) and the collectives' selection table (MPIGO_COLL_*, read by
// internal/coll through the reader installed here) go through lookupEnv.
// docs/environment.md has the table of every variable; a test
// (TestEnvironmentTable) checks that it and the code name the same ones.

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/mpigo/mpi/internal/boot"
	"github.com/mpigo/mpi/internal/coll"
	"github.com/mpigo/mpi/internal/device"
	"github.com/mpigo/mpi/internal/engine"
	"github.com/mpigo/mpi/internal/memcopy"
)

// lookupEnv reads a variable of the process's environment. It is package
// mpi's only way to read it.
func lookupEnv(name string) (string, bool) { return os.LookupEnv(name) }

// launchSize is the job's size as its launcher gave it in the environment
// (0 without a launcher: a process not started by one may run any number
// of goroutine ranks): what a process knows of its job before its rank
// starts (InfoCreateEnv's "maxprocs").
func launchSize() int {
	if p := boot.Probe(lookupEnv); p.Launcher != boot.LauncherSingleton && p.Size > 0 {
		return p.Size
	}
	return 0
}

// getenv is lookupEnv's value, "" if the variable is not set.
func getenv(name string) string {
	v, _ := lookupEnv(name)
	return v
}

// The collectives' selection table reads MPIGO_COLL_* through package
// mpi's reader when first used.
func init() { coll.UseEnv(lookupEnv) }

// envInt reads an integer environment variable.
func envInt(name string) (int, bool) {
	s, ok := lookupEnv(name)
	if !ok || s == "" {
		return 0, false
	}
	v, err := strconv.Atoi(s)
	if err != nil {
		return 0, false
	}
	return v, true
}

// Config holds the tunables of the runtime. The zero value is not useful;
// start from DefaultConfig.
type Config struct {
	// EagerLimit is the largest message, in bytes, sent eagerly; larger
	// ones use the rendezvous protocol. Environment: MPIGO_EAGER_LIMIT.
	EagerLimit int
	// ShmEagerLimit is the eager limit towards processes reached through
	// shared memory, for jobs started by a launcher. 0 chooses, on a node
	// with a core per rank unless EagerLimit was changed from its
	// default: 32 KiB towards a process that copies large messages once,
	// straight from this one's memory (cross-memory attach), else half a
	// ring (at most 512 KiB); EagerLimit otherwise. Over
	// the rings a rendezvous copies as much as an eager message does and
	// adds a round trip; with more ranks than cores, eager senders stall
	// on receivers that are not running, so it stays off there
	// (docs/performance.md, "Why the code is as it is"). Environment:
	// MPIGO_SHM_EAGER_LIMIT.
	ShmEagerLimit int
	// NoDirectRead makes goroutine ranks use the streamed rendezvous
	// protocol (CTS, then Data frames) that byte-stream transports use,
	// instead of copying straight out of the sender's buffer. It exists to
	// test and measure that protocol.
	NoDirectRead bool
	// TCPSockBuf, if positive, sets the kernel socket buffer sizes of tcp
	// connections, in bytes (0: the kernel's default, which autotunes).
	// Environment: MPIGO_TCP_SOCKBUF.
	TCPSockBuf int
	// TCPProtect says how tcp connections protect their frames once the
	// handshake has proved both ends: "auto" (the default) encrypts every
	// connection except one between two loopback addresses, whose bytes
	// never leave the kernel and where encryption costs most of the
	// bandwidth (docs/performance.md, "Why the code is as it is");
	// "on" encrypts every connection (AES-128-GCM with keys agreed per
	// connection: nobody between the ranks can read, alter, replay,
	// reorder or drop frames unnoticed); "off" encrypts none, for trusted
	// fabrics (the handshake still proves the job's secret). Every rank of
	// a job must use the same; docs/security.md has the design and its
	// cost. Environment: MPIGO_TCP_PROTECT (mpigo run --insecure-fabric
	// sets "off").
	TCPProtect string
	// Transport connects the goroutine ranks of Run: "inproc" (the
	// default), "tcp", which sends every message over loopback TCP as
	// separate processes would, or "shm", which sends it through shared
	// memory rings as processes on one node would; the last two exist to
	// test and measure those transports with the same programs. In a job
	// started by mpigo run it forces the transport between processes of
	// one node: "tcp" or "shm" (the default). Environment: MPIGO_TRANSPORT.
	Transport string
	// Spin is how long a waiting goroutine rank of Run watches for the
	// message or result it waits for before it parks, when the ranks talk
	// through inproc and each has a processor of its own (no more ranks
	// than GOMAXPROCS). 0, the default, is 50 us; below 0, every wait
	// parks at once. While a rank watches, its senders leave small
	// messages in its memory and it delivers them itself (inproc's
	// mailboxes), so neither waits for the other's wake-up or engine
	// lock: on a 2-core machine, 8-byte one-way latency 0.4 -> 0.2 us.
	// Watching keeps the processor busy while it lasts
	// (docs/performance.md, "Mailboxes between goroutine ranks").
	// Environment: MPIGO_SPIN (a duration, e.g. 50us, or off).
	Spin time.Duration
	// RanksPerNode, if positive, makes Run treat each run of RanksPerNode
	// consecutive goroutine ranks as one node, as processes on several
	// machines would be: node-aware collectives (docs/collectives.md) then
	// apply. It exists to test and measure them on one machine; it has no
	// effect on a job started by a launcher, which knows its nodes.
	// Environment: MPIGO_RANKS_PER_NODE.
	RanksPerNode int
	// HangReport is how long every live rank must have been blocked in
	// MPI calls, with no wait completing anywhere, before the job prints
	// a hang report and fails (docs/troubleshooting.md); 0 or less
	// disables it. Default 10s; environment: MPIGO_HANG_REPORT (a
	// duration, 0 to disable).
	HangReport time.Duration
	// Check makes every collective compare its name and root with the
	// other ranks' (one small message per rank and call): a mismatch
	// fails the job with both calls named instead of hanging or
	// returning garbage. Environment: MPIGO_CHECK=1 (mpigo run --check).
	Check bool
	// Trace, if set, records every MPI call and message of the job and
	// writes the timeline to this file when Run returns, in the
	// Chrome/Perfetto trace format (docs/trace.md). Environment:
	// MPIGO_TRACE=FILE (mpigo run --trace FILE).
	Trace string
	// FT keeps the job running when a rank fails (a process exits or is
	// killed, a connection is lost, a goroutine rank returns an error or
	// panics): operations that need the failed rank fail with
	// ErrProcFailed, and Revoke, Shrink, Agree, GetFailed and AckFailed
	// let the survivors recover (docs/fault-tolerance.md). Environment:
	// MPIGO_FT=1 (mpigo run --ft).
	FT bool
	// FTHeartbeat is how often, under FT, each process tells the others
	// it is alive (default 250ms), and FTTimeout how long a silent
	// process (stopped, hung in the kernel, cut off) may stay silent
	// before the others treat it as failed (default 3s). Environment:
	// MPIGO_FT_HEARTBEAT, MPIGO_FT_TIMEOUT (durations).
	FTHeartbeat, FTTimeout time.Duration

	// The settings of a process started by a launcher, which the
	// launcher passes (mpigo run's flags) rather than the program.
	gateways string        // MPIGO_GATEWAYS: docs/gateways.md
	shmSpin  time.Duration // MPIGO_SHM_SPIN: a launched job's poll time, if shmSpinSet
	// shmSpinSet: MPIGO_SHM_SPIN is a duration.
	shmSpinSet bool
	shmNoCMA   bool   // no single-copy reads between processes (shmCMA)
	traceDir   string // MPIGO_TRACE_DIR: where mpigo run collects trace parts
	// hangKeep: MPIGO_HANG_ABORT=0, a hang report is printed and the
	// job goes on instead of ending (the default ends it, under every
	// launcher as under Run).
	hangKeep bool
	shmDir   string // MPIGO_SHM_DIR: where shared-memory inboxes and segments live ("": the platform's)
	// asyncProgress is MPIGO_ASYNC_PROGRESS=1 (mpigo run
	// --async-progress): a launched process takes one Go processor more
	// than its share of the node's cores, so that the library's
	// goroutines serve its peers while its ranks compute
	// (device.ShareCores).
	asyncProgress bool
	// MPIGO_FABRIC, MPIGO_FABRIC_LOCAL, MPIGO_FABRIC_GATHER, MPIGO_VERBOSE:
	// docs/fabric.md.
	fabric       string
	fabricLocal  bool
	fabricGather string
	fabricRMA    int8 // MPIGO_FABRIC_RMA: rmaAuto, rmaOff (0), rmaAlways (1)
	// fabricAtomics is MPIGO_FABRIC_ATOMICS=1: windows may take the
	// fabric's atomics (rma_atomic.go).
	fabricAtomics bool
	verbose       bool
	// parentPort is MPIGO_PARENT_PORT: the port of the job that spawned
	// this one, which its world connects to before the program runs
	// (spawn.go); universe (MPIGO_UNIVERSE_SIZE) and appNum
	// (MPIGO_APPNUM) are the attributes of the same names.
	parentPort       string
	universe, appNum int
	// family is the hang-diagnosis family of the job that spawned this
	// one as goroutine ranks of the same process (spawn.go), nil if none.
	family *device.Family
}

// DefaultConfig returns the built-in tunables, overridden by the
// environment (the MPIGO_* variables named in each field's comment; the
// table is docs/environment.md).
func DefaultConfig() Config {
	c := Config{EagerLimit: engine.DefaultConfig().EagerLimit, HangReport: defaultHangReport}
	if v := getenv("MPIGO_HANG_REPORT"); v != "" {
		if v == "off" || v == "0" {
			c.HangReport = -1
		} else if d, err := time.ParseDuration(v); err == nil {
			c.HangReport = d
			if d <= 0 {
				c.HangReport = -1
			}
		} else {
			fmt.Fprintf(stderr, "mpigo: MPIGO_HANG_REPORT=%q is not a duration (e.g. 10s, 2m, 0 to disable); using %v\n", v, defaultHangReport)
		}
	}
	switch getenv("MPIGO_HANG_ABORT") {
	case "0", "off", "false", "no":
		c.hangKeep = true
	}
	c.Trace = getenv("MPIGO_TRACE")
	if v := getenv("MPIGO_SPIN"); v == "off" {
		c.Spin = -1
	} else if v != "" {
		if d, err := time.ParseDuration(v); err == nil {
			c.Spin = d
		} else {
			fmt.Fprintf(stderr, "mpigo: MPIGO_SPIN=%q is not a duration (e.g. 50us) or off; using the default\n", v)
		}
	}
	switch getenv("MPIGO_CHECK") {
	case "1", "true", "on", "yes":
		c.Check = true
	}
	if v := getenv("MPIGO_FT"); v != "" && v != "0" {
		c.FT = true
	}
	if d, err := time.ParseDuration(getenv("MPIGO_FT_HEARTBEAT")); err == nil && d > 0 {
		c.FTHeartbeat = d
	}
	if d, err := time.ParseDuration(getenv("MPIGO_FT_TIMEOUT")); err == nil && d > 0 {
		c.FTTimeout = d
	}
	if v, ok := envInt("MPIGO_EAGER_LIMIT"); ok && v >= 0 {
		c.EagerLimit = v
	}
	if v, ok := envInt("MPIGO_SHM_EAGER_LIMIT"); ok && v >= 0 {
		c.ShmEagerLimit = v
	}
	if v, ok := envInt("MPIGO_TCP_SOCKBUF"); ok && v >= 0 {
		c.TCPSockBuf = v
	}
	c.Transport = getenv("MPIGO_TRANSPORT")
	c.TCPProtect = getenv("MPIGO_TCP_PROTECT")
	if v, ok := envInt("MPIGO_RANKS_PER_NODE"); ok && v >= 0 {
		c.RanksPerNode = v
	}
	c.gateways = getenv("MPIGO_GATEWAYS")
	if d, err := time.ParseDuration(getenv("MPIGO_SHM_SPIN")); err == nil {
		c.shmSpin, c.shmSpinSet = d, true
	}
	c.shmNoCMA = !shmCMA(getenv("MPIGO_SHM_CMA"))
	c.traceDir = getenv("MPIGO_TRACE_DIR")
	c.shmDir = getenv("MPIGO_SHM_DIR")
	switch v := getenv("MPIGO_ASYNC_PROGRESS"); v {
	case "", "0", "off", "false", "no":
	case "1", "on", "true", "yes":
		c.asyncProgress = true
	default:
		fmt.Fprintf(stderr, "mpigo: MPIGO_ASYNC_PROGRESS=%q: want 1 or 0; using 0\n", v)
	}
	c.fabric = getenv("MPIGO_FABRIC")
	c.fabricLocal = getenv("MPIGO_FABRIC_LOCAL") == "1"
	c.fabricGather = getenv("MPIGO_FABRIC_GATHER")
	switch getenv("MPIGO_FABRIC_RMA") {
	case "0", "off":
		c.fabricRMA = rmaOff
	case "1", "on":
		c.fabricRMA = rmaAlways
	}
	switch getenv("MPIGO_FABRIC_ATOMICS") {
	case "1", "on":
		c.fabricAtomics = true
	}
	c.verbose = getenv("MPIGO_VERBOSE") == "1"
	c.parentPort = getenv("MPIGO_PARENT_PORT")
	c.universe, _ = envInt("MPIGO_UNIVERSE_SIZE")
	c.appNum, _ = envInt("MPIGO_APPNUM")
	return c
}

// singletonRanks is the number of goroutine ranks for a program started
// without a launcher: MPIGO_NP, or 1 if it is not set (np false). A value
// that is not a positive number is an error, not silently one rank.
func singletonRanks() (n int, np bool, err error) {
	s, ok := lookupEnv("MPIGO_NP")
	if !ok || s == "" {
		return 1, false, nil
	}
	v, perr := strconv.Atoi(strings.TrimSpace(s))
	if perr != nil || v < 1 {
		return 0, true, fmt.Errorf("MPIGO_NP=%q: want a positive number of ranks, e.g. MPIGO_NP=4", s)
	}
	return v, true, nil
}

// gomaxprocsSet reports whether GOMAXPROCS is set in the environment.
func gomaxprocsSet() bool {
	_, set := lookupEnv("GOMAXPROCS")
	return set
}

// shmCMA reports whether large messages between processes of a node are
// copied once, by cross-memory attach, given MPIGO_SHM_CMA's value v: "0"
// streams them through the rings, "1" (any other value) reads them in
// place, and unset chooses the rings where copies between cores are
// string moves (memcopy.Fast: there the rings' pipelined copy measured
// faster than the single copy, 1 MiB one way in 51 us against 118, and
// as fast or faster in bandwidth; docs/performance.md, "Copying between
// cores"), the single copy elsewhere.
func shmCMA(v string) bool {
	if v == "" {
		return !memcopy.Fast()
	}
	return v != "0"
}

// nameServerSetting is MPIGO_NAMESERVER: the name server the name calls
// ask (names.go), "" for the launcher's or the process's own.
func nameServerSetting() string { return getenv("MPIGO_NAMESERVER") }
