// Package boot finds out how a process was started and lets its ranks find
// each other.
//
// A launcher tells a rank who it is through the environment and runs a
// small key-value store that all ranks of the job share, in the shape of
// PMI: each rank puts its address, all ranks fence, then any rank may get
// any other's. Detect reads the environment:
//
//   - MPIGO_RANK, MPIGO_SIZE and MPIGO_KVS set: started by `mpigo run`; the
//     store is at the address in MPIGO_KVS (see Server).
//   - PMI_FD and a PMI-2 hint: Slurm's srun --mpi=pmi2 (pmi2.go);
//   - PMI_FD or PMI_PORT: MPICH's Hydra mpiexec, PMI-1 (pmi1.go);
//   - PMIX_RANK and PMIX_SERVER_URI*: a PMIx server (srun --mpi=pmix, Open
//     MPI's mpirun); pmix.go;
//   - OMPI_COMM_WORLD_* alone: Open MPI's mpirun; rank 0 serves the store
//     (ompi.go);
//   - nothing set: a singleton, a job of one rank with a private store.
//
// Probe gives the precise rule; docs/launchers.md lists every variable.
package boot

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/mpigo/mpi/internal/gateway"
)

// Environment variables set by `mpigo run` for every rank.
const (
	EnvRank      = "MPIGO_RANK"       // world rank of the (first) rank this process hosts
	EnvSize      = "MPIGO_SIZE"       // number of ranks in the job
	EnvRanksHere = "MPIGO_RANKS_HERE" // ranks this process hosts as goroutines (default 1)
	EnvLocalRank = "MPIGO_LOCAL_RANK" // rank among the processes on this node
	EnvLocalSize = "MPIGO_LOCAL_SIZE" // number of processes on this node
	EnvNode      = "MPIGO_NODE"       // name of this node
	EnvNodeRanks = "MPIGO_NODE_RANKS" // the world ranks on this node, as ranges: 0-3,8
	EnvKVS       = "MPIGO_KVS"        // address of the launcher's key-value store
	EnvJobID     = "MPIGO_JOBID"      // identifier of the job
	EnvSecret    = "MPIGO_SECRET"     // the job's secret (hex): connections between ranks must prove it
	EnvSecretFD  = "MPIGO_SECRET_FD"  // a descriptor to read the job's secret from (hex, one line), instead of MPIGO_SECRET
	EnvAddr      = "MPIGO_ADDR"       // host name or address peers dial to reach this process (default: loopback)
	EnvGateways  = "MPIGO_GATEWAYS"   // the job's gateway table (docs/gateways.md)
	EnvApps      = "MPIGO_APPS"       // the ranks of each MPMD group, as sizes in group order: 4,2
)

// KV is the job's shared key-value store. Put publishes a value; Fence
// waits until every process of the job has called Fence, after which every
// value put before the fence is visible to Get. A process that hosts
// several ranks fences once for all of them.
type KV interface {
	Put(key, value string) error
	Fence() error
	Get(key string) (string, error)
	Close() error
}

// Info describes this process's place in the job.
type Info struct {
	Rank, Size           int // first rank hosted here, ranks in the job
	RanksHere            int // ranks hosted by this process: Rank .. Rank+RanksHere-1
	LocalRank, LocalSize int
	Node                 string
	NodeRanks            []int // world ranks on this node, ascending (at least this process's)
	// Apps are the sizes of the job's MPMD groups (the programs of
	// `mpigo run -n 4 a : -n 2 b`), in rank order; nil: one group.
	Apps     []int
	JobID    uint64
	Secret   []byte // the job's shared secret; empty for a singleton
	Launcher string // LauncherMpigo, LauncherSingleton, or the name of a foreign launcher ("PMI-1 (MPICH Hydra)", "PMI-2 (Slurm)", LauncherOMPI)
	KVSAddr  string // the launcher's store, for Watch
	// StoreVia are the gateways this process goes through to reach
	// KVSAddr, in order (docs/gateways.md); none: directly.
	StoreVia []string
	Addr     string // where peers reach this process (MPIGO_ADDR); empty: loopback
	KV       KV

	gateways *gateway.Table // the job's gateway table, to explain a store out of reach
}

// Launcher names, as Info.Launcher and Plan.Launcher give them.
const (
	LauncherMpigo     = "mpigo"
	LauncherSingleton = "singleton"
	LauncherPMI1      = "PMI-1"
	LauncherPMI2      = "PMI-2"
	LauncherOMPI      = "Open MPI (mpirun)"
	LauncherPMIx      = "PMIx"
)

// Plan says how Detect will read this process's environment, without
// talking to any launcher (`mpigo info` prints it).
type Plan struct {
	Launcher string   // one of the Launcher* names
	Vars     []string // the variables that decided, as NAME=VALUE
	Err      error    // the environment is inconsistent or names a launcher mpigo cannot use
	Rank     int      // from the environment; -1 if only the launcher can say
	Size     int      // likewise
	Detail   string   // more about the launcher (the PMIx server), for a person
}

func envVars(env lookupFunc, names ...string) []string {
	var vs []string
	for _, n := range names {
		if v, ok := env(n); ok {
			vs = append(vs, n+"="+v)
		}
	}
	return vs
}

func envNum(env lookupFunc, name string) int {
	if n, err := strconv.Atoi(getenv(env, name)); err == nil {
		return n
	}
	return -1
}

// Probe decides which launcher started this process from the variables
// env reads (os.LookupEnv, or package mpi's reader; the package reads
// the environment only through the reader it is given), in this order
// (the first rule that matches wins):
//
//  1. MPIGO_RANK, MPIGO_SIZE or MPIGO_KVS set: `mpigo run`.
//  2. PMI_FD set and PMI-2 asked for (MPIGO_PMI=2), or hinted at and not
//     refused (MPIGO_PMI!=1, and PMI_VERSION=2, PMI_JOBID or SLURM_STEP_ID
//     set): PMI-2 (Slurm's srun --mpi=pmi2).
//  3. PMI_FD or PMI_PORT set: PMI-1 (MPICH's Hydra mpiexec; srun --mpi=pmi2
//     with MPIGO_PMI=1).
//  4. PMIX_RANK and a PMIX_SERVER_URI* set, and not MPIGO_PMIX=0: a PMIx
//     server (srun --mpi=pmix, Open MPI's mpirun, any PMIx launcher);
//     pmix.go. Under Open MPI a server that cannot be reached leaves rule 5.
//  5. OMPI_COMM_WORLD_SIZE set: Open MPI's mpirun, through a store rank 0
//     serves (ompi.go); what rule 4 falls back to, or MPIGO_PMIX=0 asks.
//  6. PMIX_RANK set without a server address, or SLURM_STEP_NUM_TASKS
//     above 1: a launcher mpigo cannot talk to (srun --mpi=none): an
//     error, rather than N singletons that do not know of each other.
//  7. Otherwise: a singleton.
func Probe(env func(string) (string, bool)) Plan {
	_, hasRank := env(EnvRank)
	_, hasSize := env(EnvSize)
	_, hasKVS := env(EnvKVS)
	_, hasFD := env("PMI_FD")
	_, hasPort := env("PMI_PORT")
	force := getenv(env, "MPIGO_PMI")
	switch {
	case hasRank || hasSize || hasKVS:
		return Plan{Launcher: LauncherMpigo, Vars: envVars(env, EnvRank, EnvSize, EnvKVS), Rank: envNum(env, EnvRank), Size: envNum(env, EnvSize)}
	case hasFD && (force == "2" || force != "1" && (getenv(env, "PMI_VERSION") == "2" || getenv(env, "PMI_JOBID") != "" || getenv(env, "SLURM_STEP_ID") != "")):
		return Plan{Launcher: LauncherPMI2, Vars: envVars(env, "PMI_FD", "MPIGO_PMI", "PMI_VERSION", "PMI_JOBID", "SLURM_STEP_ID", "PMI_RANK", "PMI_SIZE"), Rank: envNum(env, "PMI_RANK"), Size: envNum(env, "PMI_SIZE")}
	case hasFD || hasPort:
		return Plan{Launcher: LauncherPMI1, Vars: envVars(env, "PMI_FD", "PMI_PORT", "PMI_ID", "MPIGO_PMI", "PMI_RANK", "PMI_SIZE"), Rank: envNum(env, "PMI_RANK"), Size: envNum(env, "PMI_SIZE")}
	case getenv(env, "PMIX_RANK") != "" && hasPMIxURI(env) && force != "ompi" && getenv(env, "MPIGO_PMIX") != "0":
		p := Plan{Launcher: LauncherPMIx, Vars: envVars(env, "PMIX_NAMESPACE", "PMIX_RANK", "PMIX_SERVER_URI41", "PMIX_SERVER_URI4", "PMIX_SERVER_URI3", "PMIX_SERVER_URI21", "PMIX_SECURITY_MODE", "PMIX_VERSION", "MPIGO_PMIX_SECURITY"),
			Rank: envNum(env, "PMIX_RANK"), Size: -1}
		if srv, err := FindPMIxServer(env); err != nil {
			p.Err = err
		} else {
			p.Detail = fmt.Sprintf("PMIx server %s (from %s), buffers %s, %s", srv.Addr, srv.Var, srv.Bfrops, pmixSecDetail(env))
		}
		if v := envNum(env, "OMPI_COMM_WORLD_SIZE"); v > 0 {
			p.Size = v
		} else if v := envNum(env, "SLURM_STEP_NUM_TASKS"); v > 0 {
			p.Size = v
		}
		return p
	case getenv(env, "OMPI_COMM_WORLD_SIZE") != "":
		return Plan{Launcher: LauncherOMPI, Vars: envVars(env, "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_SIZE", "OMPI_MCA_ess_base_jobid", "PMIX_NAMESPACE", "OMPI_MCA_orte_num_nodes"),
			Rank: envNum(env, "OMPI_COMM_WORLD_RANK"), Size: envNum(env, "OMPI_COMM_WORLD_SIZE")}
	case getenv(env, "PMIX_RANK") != "":
		return Plan{Launcher: LauncherSingleton, Vars: envVars(env, "PMIX_RANK", "PMIX_NAMESPACE"), Rank: -1, Size: -1,
			Err: errors.New("boot: started by a PMIx launcher (PMIX_RANK is set) that names no server (no PMIX_SERVER_URI*): use srun --mpi=pmix or --mpi=pmi2, mpiexec.hydra, Open MPI's mpirun or mpigo run")}
	case envNum(env, "SLURM_STEP_NUM_TASKS") > 1:
		return Plan{Launcher: LauncherSingleton, Vars: envVars(env, "SLURM_STEP_NUM_TASKS", "SLURM_PROCID"), Rank: -1, Size: -1,
			Err: errors.New("boot: started by srun as one of several tasks, but without a PMI mpigo speaks (no PMI_FD, no PMIX_SERVER_URI*): use srun --mpi=pmix or --mpi=pmi2")}
	}
	return Plan{Launcher: LauncherSingleton, Rank: 0, Size: 1}
}

// Detect finds out how this process was started, reading the environment
// through env (see Probe for the rules), and joins the job: it returns an error if a launcher's variables are
// present but inconsistent, or its PMI server answers nonsense, rather than
// silently running a singleton.
func Detect(env func(string) (string, bool)) (*Info, error) {
	plan := Probe(env)
	if plan.Err != nil {
		return nil, plan.Err
	}
	switch plan.Launcher {
	case LauncherPMI2:
		return detectPMI2(env)
	case LauncherPMI1:
		return detectPMI1(env)
	case LauncherOMPI:
		return detectOMPI(env)
	case LauncherPMIx:
		return detectPMIx(env)
	case LauncherSingleton:
		host, _ := os.Hostname()
		return &Info{Rank: 0, Size: 1, RanksHere: 1, LocalRank: 0, LocalSize: 1, Node: host, NodeRanks: []int{0}, Launcher: LauncherSingleton, KV: newLocalKV()}, nil
	}
	return detectMpigo(env)
}

// detectMpigo reads the environment `mpigo run` sets.
func detectMpigo(env lookupFunc) (*Info, error) {
	rs, hasRank := env(EnvRank)
	ss, hasSize := env(EnvSize)
	kvs, hasKVS := env(EnvKVS)
	if !hasRank || !hasSize || !hasKVS {
		return nil, fmt.Errorf("boot: %s, %s and %s must be set together (have rank %q, size %q, kvs %q)", EnvRank, EnvSize, EnvKVS, rs, ss, kvs)
	}
	info := &Info{Launcher: LauncherMpigo, KVSAddr: kvs}
	var err error
	if info.Rank, err = strconv.Atoi(rs); err != nil {
		return nil, fmt.Errorf("boot: %s=%q is not a number", EnvRank, rs)
	}
	if info.Size, err = strconv.Atoi(ss); err != nil || info.Size < 1 {
		return nil, fmt.Errorf("boot: %s=%q is not a positive number", EnvSize, ss)
	}
	if info.Rank < 0 || info.Rank >= info.Size {
		return nil, fmt.Errorf("boot: %s=%d is out of range for %s=%d", EnvRank, info.Rank, EnvSize, info.Size)
	}
	info.RanksHere = 1
	if v, ok := env(EnvRanksHere); ok {
		k, err := strconv.Atoi(v)
		if err != nil || k < 1 || info.Rank+k > info.Size {
			return nil, fmt.Errorf("boot: %s=%q does not fit ranks %d.. of %d", EnvRanksHere, v, info.Rank, info.Size)
		}
		info.RanksHere = k
	}
	info.LocalRank, info.LocalSize = info.Rank, info.Size
	if v, err := strconv.Atoi(getenv(env, EnvLocalRank)); err == nil {
		info.LocalRank = v
	}
	if v, err := strconv.Atoi(getenv(env, EnvLocalSize)); err == nil {
		info.LocalSize = v
	}
	info.NodeRanks = nil
	if v := getenv(env, EnvNodeRanks); v != "" {
		rs, err := ParseRanks(v, info.Size)
		if err != nil {
			return nil, fmt.Errorf("boot: %s=%q: %v", EnvNodeRanks, v, err)
		}
		info.NodeRanks = rs
	}
	if !containsRun(info.NodeRanks, info.Rank, info.RanksHere) {
		info.NodeRanks = make([]int, info.RanksHere)
		for i := range info.NodeRanks {
			info.NodeRanks[i] = info.Rank + i
		}
	}
	if v := getenv(env, EnvApps); v != "" {
		if info.Apps, err = ParseApps(v, info.Size); err != nil {
			return nil, fmt.Errorf("boot: %s=%q: %v", EnvApps, v, err)
		}
	}
	info.Addr = getenv(env, EnvAddr)
	info.Node = getenv(env, EnvNode)
	if info.Node == "" {
		info.Node, _ = os.Hostname()
	}
	if v, err := strconv.ParseUint(getenv(env, EnvJobID), 10, 64); err == nil {
		info.JobID = v
	}
	if info.Secret, err = jobSecret(env); err != nil {
		return nil, fmt.Errorf("boot: %w", err)
	}
	if v := getenv(env, EnvGateways); v != "" {
		// A rank in a network that cannot reach the launcher reaches its
		// store through the gateways, as it reaches ranks there.
		if info.gateways, err = gateway.Parse(v); err != nil {
			return nil, fmt.Errorf("boot: %s: %w", EnvGateways, err)
		}
		info.StoreVia = info.gateways.Route(info.self(), kvs)
	}
	if info.KV, err = dialKV(info.store(), info.Rank, 0); err != nil {
		return nil, err
	}
	return info, nil
}

// self is the address this process publishes, for routing.
func (info *Info) self() string {
	if info.Addr == "" {
		return "127.0.0.1"
	}
	return info.Addr
}

// store says where and how this process reaches the launcher's store.
func (info *Info) store() storeAddr {
	return storeAddr{addr: info.KVSAddr, secret: info.Secret, job: info.JobID, via: info.StoreVia,
		explain: func() string { return info.gateways.Explain(info.self(), info.KVSAddr) }}
}

// localKV is the store of a singleton.
type localKV struct {
	mu sync.Mutex
	m  map[string]string
}

func newLocalKV() *localKV { return &localKV{m: map[string]string{}} }

func (k *localKV) Put(key, value string) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.m[key] = value
	return nil
}

func (k *localKV) Fence() error { return nil }

func (k *localKV) Get(key string) (string, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	v, ok := k.m[key]
	if !ok {
		return "", fmt.Errorf("boot: no value for key %q", key)
	}
	return v, nil
}

func (k *localKV) Close() error { return nil }

// ParseApps reads the sizes of a job's MPMD groups (EnvApps): positive
// numbers separated by commas that add up to size.
func ParseApps(s string, size int) ([]int, error) {
	var apps []int
	sum := 0
	for _, part := range strings.Split(s, ",") {
		n, err := strconv.Atoi(part)
		if err != nil || n < 1 || n > size-sum {
			return nil, fmt.Errorf("group size %q does not fit a job of %d ranks", part, size)
		}
		apps = append(apps, n)
		sum += n
	}
	if sum != size {
		return nil, fmt.Errorf("the groups hold %d ranks, the job %d", sum, size)
	}
	return apps, nil
}

// FormatRanks writes ascending ranks as comma-separated ranges: 0-3,8,10-11.
func FormatRanks(rs []int) string {
	var b strings.Builder
	for i := 0; i < len(rs); {
		j := i
		for j+1 < len(rs) && rs[j+1] == rs[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(rs[i]))
		if j > i {
			b.WriteByte('-')
			b.WriteString(strconv.Itoa(rs[j]))
		}
		i = j + 1
	}
	return b.String()
}

// ParseRanks reads what FormatRanks writes: strictly ascending ranks below
// size.
func ParseRanks(s string, size int) ([]int, error) {
	var rs []int
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil {
			return nil, fmt.Errorf("bad rank %q", lo)
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil {
				return nil, fmt.Errorf("bad rank %q", hi)
			}
		}
		if a < 0 || b < a || b >= size || (len(rs) > 0 && a <= rs[len(rs)-1]) {
			return nil, fmt.Errorf("ranks %q out of order or range (size %d)", part, size)
		}
		if b-a > size {
			return nil, fmt.Errorf("range %q too long", part)
		}
		for r := a; r <= b; r++ {
			rs = append(rs, r)
		}
	}
	return rs, nil
}

// containsRun reports whether rs holds every rank from first to
// first+n-1.
func containsRun(rs []int, first, n int) bool {
	for r := first; r < first+n; r++ {
		if _, ok := slices.BinarySearch(rs, r); !ok {
			return false
		}
	}
	return n > 0
}

// readSecretFD reads one line of at most 256 bytes from descriptor v and
// closes it.
func readSecretFD(v string) (string, error) {
	fd, err := strconv.Atoi(v)
	if err != nil || fd < 0 {
		return "", errors.New("not a descriptor")
	}
	f := os.NewFile(uintptr(fd), "secret")
	if f == nil {
		return "", errors.New("not open")
	}
	defer f.Close()
	var b []byte
	buf := make([]byte, 257)
	for len(b) <= 256 {
		n, err := f.Read(buf[:257-len(b)])
		b = append(b, buf[:n]...)
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			return string(b[:i]), nil
		}
		if err == io.EOF {
			return strings.TrimSpace(string(b)), nil
		}
		if err != nil {
			return "", err
		}
	}
	return "", errors.New("no end of line within 256 bytes")
}
