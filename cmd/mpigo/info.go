package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/mpigo/mpi"
	"github.com/mpigo/mpi/internal/boot"
	"github.com/mpigo/mpi/internal/coll"
	"github.com/mpigo/mpi/internal/transport/ofi"
	"github.com/mpigo/mpi/internal/transport/shm"
	"github.com/mpigo/mpi/internal/transport/ucx"
)

// findLib returns the path of a shared library named name (libucp.so)
// in the usual places and LD_LIBRARY_PATH, or "" if there is none: mpigo
// info says what a fabric build would find, even in a build without one.
func findLib(name string) string {
	dirs := strings.Split(os.Getenv("LD_LIBRARY_PATH"), ":")
	dirs = append(dirs, "/usr/lib/"+runtime.GOARCH+"-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu",
		"/usr/lib64", "/usr/lib", "/usr/local/lib", "/usr/local/lib64", "/opt/ucx/lib")
	for _, d := range dirs {
		if d == "" {
			continue
		}
		m, _ := filepath.Glob(filepath.Join(d, name+"*"))
		if len(m) > 0 {
			return m[0]
		}
	}
	return ""
}

// fabricStatus says which fabric library mpigo uses between nodes, what it
// found, and why it uses none (docs/fabric.md).
func fabricStatus() []string {
	mode := os.Getenv("MPIGO_FABRIC")
	var out []string
	// Which one a job takes by default, or as MPIGO_FABRIC asks (the
	// device's chooseFabric decides alike).
	chosen := ""
	switch mode {
	case "", "auto":
		if ucx.Built {
			chosen = "ucx"
		} else if ofi.Built {
			chosen = "ofi"
		}
	case "ucx":
		chosen = "ucx"
	case "ofi", "libfabric":
		chosen = "ofi"
	}
	why := func(name string) string {
		switch {
		case chosen == name:
			return "used between nodes; MPIGO_FABRIC=off for tcp"
		case mode == "off" || mode == "tcp":
			return "not used: MPIGO_FABRIC=" + mode
		case mode == "" || mode == "auto":
			return "not used: " + chosen + " comes first; MPIGO_FABRIC=" + name + " takes this one"
		}
		return "not used: MPIGO_FABRIC=" + mode + "; MPIGO_FABRIC=" + name + " takes this one"
	}
	if ucx.Built {
		desc, err := ucx.Available()
		if err != nil {
			out = append(out, fmt.Sprintf("ucx: built in, but unusable here: %v (a job's ranks here then reach other nodes over tcp, with a warning; with MPIGO_FABRIC=ucx they fail to start)", err))
		} else {
			out = append(out, desc+" ("+why("ucx")+")")
		}
	} else {
		lib := findLib("libucp.so")
		where := "not found (apt-get install libucx-dev)"
		if lib != "" {
			where = "found " + lib
		}
		out = append(out, fmt.Sprintf("ucx: %s; not in this build: CGO_ENABLED=1 go build -tags mpigo_ucx builds it in", where))
	}
	if ofi.Built {
		desc, err := ofi.Available()
		if err != nil {
			out = append(out, fmt.Sprintf("libfabric: built in, but unusable here: %v (a job's ranks here then reach other nodes over tcp, with a warning; with MPIGO_FABRIC=ofi they fail to start)", err))
		} else {
			out = append(out, desc+" ("+why("ofi")+")")
		}
	} else {
		lib := findLib("libfabric.so")
		where := "not found (apt-get install libfabric-dev)"
		if lib != "" {
			where = "found " + lib
		}
		out = append(out, fmt.Sprintf("libfabric: %s; not in this build: CGO_ENABLED=1 go build -tags mpigo_ofi builds it in", where))
	}
	return out
}

// shmStatus says whether processes of one node can talk through shared
// memory here: the platform has a shared-memory transport and its folder
// (/dev/shm on Linux) can hold a job's inboxes.
func shmStatus() string {
	ok, how := shm.Available()
	if !ok {
		return "unavailable: " + how
	}
	dir := inboxDir()
	f, err := os.CreateTemp(dir, "mpigo-info-*")
	if err != nil {
		return fmt.Sprintf("unavailable (%v): processes of one node will need MPIGO_TRANSPORT=tcp", err)
	}
	f.Close()
	os.Remove(f.Name())
	return how + ", in " + dir
}

func info(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("info", flag.ContinueOnError)
	fs.SetOutput(stderr)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	cfg := mpi.DefaultConfig()
	fmt.Fprintf(stdout, "mpigo %s (MPI %d.%d semantics)\n", mpi.Version, mpi.StandardVersion, mpi.StandardSubversion)
	fmt.Fprintf(stdout, "go:          %s %s/%s, GOMAXPROCS=%d\n", runtime.Version(), runtime.GOOS, runtime.GOARCH, runtime.GOMAXPROCS(0))
	shmWord := "shm (processes of one node)"
	if ok, _ := shm.Available(); !ok {
		shmWord = "no shm on " + runtime.GOOS + " (processes of one node use tcp)"
	}
	fmt.Fprintf(stdout, "transports:  self (a rank to itself), inproc (goroutine ranks, single copy), %s, tcp (other processes)\n", shmWord)
	fmt.Fprintf(stdout, "shm:         %s\n", shmStatus())
	for i, line := range fabricStatus() {
		if i == 0 {
			fmt.Fprintf(stdout, "fabric:      %s\n", line)
		} else {
			fmt.Fprintf(stdout, "             %s\n", line)
		}
	}
	haveShm, _ := shm.Available()
	_, why := shm.CMAStatus()
	cma := true
	if v, err := mpi.LookupCvar("MPIGO_SHM_CMA"); err == nil {
		if x, err := v.Read(); err == nil {
			cma, _ = x.(bool)
		}
	}
	switch {
	case !haveShm: // nothing to say
	case !cma:
		fmt.Fprintf(stdout, "shm large messages: streamed through the rings, a pipelined copy (with MPIGO_SHM_CMA=1: %s)\n", why)
	default:
		fmt.Fprintf(stdout, "shm large messages: %s (MPIGO_SHM_CMA=0 streams them through the rings)\n", why)
	}
	fmt.Fprintf(stdout, "launchers:   mpigo run, MPICH Hydra (PMI-1), Slurm srun --mpi=pmix (PMIx) or --mpi=pmi2 (PMI-2), Open MPI mpirun (PMIx), singleton (docs/launchers.md)\n")
	plan := boot.Probe(os.LookupEnv)
	where := ""
	switch {
	case plan.Rank >= 0 && plan.Size > 0:
		where = fmt.Sprintf(": rank %d of %d", plan.Rank, plan.Size)
	case plan.Err == nil:
		where = ": rank and size come from the launcher"
	}
	vars := "no launcher variables"
	if len(plan.Vars) > 0 {
		vars = strings.Join(plan.Vars, " ")
	}
	fmt.Fprintf(stdout, "launcher:    %s%s (%s)\n", plan.Launcher, where, vars)
	if plan.Detail != "" {
		fmt.Fprintf(stdout, "             %s\n", plan.Detail)
	}
	if plan.Err != nil {
		fmt.Fprintf(stdout, "             cannot start: %v\n", plan.Err)
	}
	fmt.Fprintf(stdout, "thread level: multiple (every call is safe from any goroutine)\n")
	fmt.Fprintf(stdout, "tunables:\n")
	fmt.Fprintf(stdout, "  MPIGO_EAGER_LIMIT = %d bytes (largest eager message; larger ones use rendezvous)\n", cfg.EagerLimit)
	switch {
	case !haveShm: // no shm tunables here
	case cfg.ShmEagerLimit > 0:
		fmt.Fprintf(stdout, "  MPIGO_SHM_EAGER_LIMIT = %d bytes (towards processes on this node)\n", cfg.ShmEagerLimit)
	default:
		fmt.Fprintf(stdout, "  MPIGO_SHM_EAGER_LIMIT = automatic (towards processes on this node, with a core per rank: 32 KiB where large messages are copied once, else half a ring, at most 512 KiB)\n")
	}
	fmt.Fprintf(stdout, "  MPIGO_TCP_SOCKBUF = %d bytes (tcp socket buffers; 0: the kernel's autotuned default)\n", cfg.TCPSockBuf)
	protect := cfg.TCPProtect
	if protect == "" {
		protect = "auto"
	}
	fmt.Fprintf(stdout, "  MPIGO_TCP_PROTECT = %s (tcp frames: auto encrypts all but loopback connections, on, off; docs/security.md)\n", protect)
	if gw := os.Getenv("MPIGO_GATEWAYS"); gw != "" {
		fmt.Fprintf(stdout, "  MPIGO_GATEWAYS    = %s (networks and their gateways; docs/gateways.md)\n", gw)
	} else {
		fmt.Fprintf(stdout, "  MPIGO_GATEWAYS    = none (ranks of other networks are dialed directly; mpigo run --gateway; docs/gateways.md)\n")
	}
	transport := cfg.Transport
	if !haveShm {
		if transport == "" {
			transport = "tcp"
		}
		fmt.Fprintf(stdout, "  MPIGO_TRANSPORT   = %s (between processes of one node: tcp only, no shm on %s)\n", transport, runtime.GOOS)
	} else {
		if transport == "" {
			transport = "shm"
		}
		fmt.Fprintf(stdout, "  MPIGO_TRANSPORT   = %s (between processes of one node: shm or tcp)\n", transport)
		fmt.Fprintf(stdout, "  shm rings         = %d KiB per pair of ranks for 2..4 ranks on a node, %d KiB for 5..16, %d KiB at 64\n",
			shm.DefaultRingSize(2)>>10, shm.DefaultRingSize(16)>>10, shm.DefaultRingSize(64)>>10)
		spin := shm.SpinTime.String()
		if v := os.Getenv("MPIGO_SHM_SPIN"); v != "" {
			spin = v
		}
		fmt.Fprintf(stdout, "  MPIGO_SHM_SPIN    = %s (a waiting rank polls shared memory this long, then sleeps on a futex)\n", spin)
	}
	fab := os.Getenv("MPIGO_FABRIC")
	if fab == "" {
		fab = "auto"
	}
	fmt.Fprintf(stdout, "  MPIGO_FABRIC      = %s (between nodes: ucx, ofi (libfabric), or off for tcp; auto: ucx in builds with -tags mpigo_ucx, else ofi with -tags mpigo_ofi; docs/fabric.md)\n", fab)
	fmt.Fprintf(stdout, "  MPIGO_FABRIC_LOCAL = %s (1: the fabric also between processes of one node, for tests and measurements)\n", envOr("MPIGO_FABRIC_LOCAL", "0"))
	fmt.Fprintf(stdout, "  MPIGO_FABRIC_GATHER = %s (over UCX and libfabric, a burst's small messages to one peer go as one at the next poll; 0: each alone, at once)\n", envOr("MPIGO_FABRIC_GATHER", "1"))
	fmt.Fprintf(stdout, "  MPIGO_FABRIC_RMA  = %s (windows' puts and gets through the fabric: auto where it reaches memory directly (RDMA; UCX's shared memory), 1 always, 0 never)\n", envOr("MPIGO_FABRIC_RMA", "auto"))
	fmt.Fprintf(stdout, "  MPIGO_FABRIC_ATOMICS = %s (1: windows reached through UCX or libfabric apply accumulates on integers with the fabric's atomics; for accumulates of one or a few elements)\n", envOr("MPIGO_FABRIC_ATOMICS", "0"))
	fmt.Fprintf(stdout, "  MPIGO_VERBOSE     = %s (1: each process says which transport reaches each peer; mpigo run --verbose)\n", envOr("MPIGO_VERBOSE", "0"))
	fmt.Fprintf(stdout, "  MPIGO_NAMESERVER  = %s (the name server of PublishName and LookupName, as mpigo nameserver prints it; unset: mpigo run's)\n", nameServerShown())
	fmt.Fprintf(stdout, "  MPIGO_PARENT_PORT = set by mpigo run in a spawned job: the port of the job that spawned it (docs/spawn.md)\n")
	fmt.Fprintf(stdout, "  MPIGO_UNIVERSE_SIZE = set by mpigo run: the slots of its hosts, MPI_UNIVERSE_SIZE (default: the job's size)\n")
	fmt.Fprintf(stdout, "  MPIGO_APPNUM      = set by mpigo run: the rank's MPMD group, MPI_APPNUM\n")
	fmt.Fprintf(stdout, "  MPIGO_SPIN        = %v (a waiting goroutine rank of mpi.Run watches this long before it parks, when each rank has a processor; 0: only in collectives that meet in memory, for 50us; off: never)\n", cfg.Spin)
	fmt.Fprintf(stdout, "  MPIGO_ASYNC_PROGRESS = %s (1: each rank process takes a Go processor more than its share of the cores, to serve its peers while its ranks compute; mpigo run --async-progress; docs/performance.md)\n", envOr("MPIGO_ASYNC_PROGRESS", "0"))
	fmt.Fprintf(stdout, "  MPIGO_NP          = ranks a program started without a launcher runs as goroutines (default 1)\n")
	fmt.Fprintf(stdout, "  MPIGO_RANKS_PER_NODE = %d (goroutine ranks of mpi.Run grouped into pretend nodes of this size, to test node-aware collectives; 0: one node)\n", cfg.RanksPerNode)
	fmt.Fprintf(stdout, "  MPIGO_PMI_TIMEOUT = wait for a PMI launcher's reply (default 60s; a fence 10m)\n")
	hang := "10s"
	switch {
	case cfg.HangReport < 0:
		hang = "off"
	case cfg.HangReport > 0:
		hang = cfg.HangReport.String()
	}
	fmt.Fprintf(stdout, "  MPIGO_HANG_REPORT = %s (when every rank has been blocked this long, print who waits for whom and fail the job; 0: never; docs/troubleshooting.md)\n", hang)
	fmt.Fprintf(stdout, "  MPIGO_CHECK       = %s (every collective compares its name and root with the other ranks'; mpigo run --check)\n", onOff(cfg.Check))
	trace := cfg.Trace
	if trace == "" {
		trace = "none"
	}
	fmt.Fprintf(stdout, "  MPIGO_TRACE       = %s (a timeline of every call and message, written to this file; mpigo run --trace; docs/trace.md)\n", trace)
	fmt.Fprintf(stdout, "  MPIGO_FT          = %s (survivors keep running when a rank dies; mpigo run --ft; docs/fault-tolerance.md)\n", onOff(cfg.FT))
	fmt.Fprintf(stdout, "  MPIGO_FT_HEARTBEAT = %s, MPIGO_FT_TIMEOUT = %s (under MPIGO_FT: how often a process says it is alive, and how long silence means it failed)\n",
		orDefault(cfg.FTHeartbeat, "250ms"), orDefault(cfg.FTTimeout, "3s"))
	if haveShm {
		dir := os.Getenv("MPIGO_SHM_DIR")
		if dir == "" {
			dir = inboxDir() + " (default)"
		}
		fmt.Fprintf(stdout, "  MPIGO_SHM_DIR     = %s (where shared-memory rings and window segments live)\n", dir)
	}
	switch os.Getenv("MPIGO_HANG_ABORT") {
	case "0", "off", "false", "no":
		fmt.Fprintf(stdout, "  MPIGO_HANG_ABORT  = 0 (a hang report is printed and the job goes on)\n")
	default:
		fmt.Fprintf(stdout, "  MPIGO_HANG_ABORT  = 1 (a hang report ends the job, under every launcher; 0: it goes on)\n")
	}
	fmt.Fprintf(stdout, "collective algorithms (first rule whose size bound holds and that applies; docs/collectives.md):\n")
	for _, e := range coll.Table() {
		fmt.Fprintf(stdout, "  %-25s = %s  (%s; size: %s)\n", coll.EnvName(e.Coll), coll.FormatRules(e.Rules), e.Source, coll.Sizes[e.Coll])
		if e.Err != nil {
			fmt.Fprintf(stdout, "  %-25s   ignored: %v\n", "", e.Err)
		}
	}
	seg, segErr := coll.Segment()
	fmt.Fprintf(stdout, "  %-25s = %d (bytes per segment of the pipelined bcast algorithms)\n", coll.SegmentEnv, seg)
	if segErr != nil {
		fmt.Fprintf(stdout, "  %-25s   ignored: %v\n", "", segErr)
	}
	fmt.Fprintf(stdout, "limits:\n")
	fmt.Fprintf(stdout, "  tag upper bound   = %d\n", mpi.TagUB)
	fmt.Fprintf(stdout, "  bsend overhead    = %d bytes\n", mpi.BsendOverhead)
	return 0
}

// onOff spells a switch for info's tunables.
func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

// orDefault spells a duration tunable: d if set, else the default def.
func orDefault(d time.Duration, def string) string {
	if d > 0 {
		return d.String()
	}
	return def + " (default)"
}

// envOr returns the environment's value of name, or def if it is empty.
func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// nameServerShown is MPIGO_NAMESERVER without its secret.
func nameServerShown() string {
	v := os.Getenv("MPIGO_NAMESERVER")
	if v == "" {
		return "unset"
	}
	addr, _, _ := strings.Cut(v, "/")
	return addr + "/(secret)"
}
