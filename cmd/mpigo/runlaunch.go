package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/mpigo/mpi/internal/boot"
)

// What launch does for the flags of runopts.go: where each process goes,
// the environment it gets, the cores it is pinned to and where its output
// is written.

// nodeFor returns the host of the process that starts at host slot slot
// and is the proc'th process of the job (--host/--hostfile given).
func (cfg *runConfig) nodeFor(slot, proc int) string {
	if cfg.byNode {
		return cfg.hosts[proc%len(cfg.hosts)].name
	}
	return hostFor(cfg.hosts, slot)
}

// notForwarded are the MPIGO_ variables of the launcher's own environment
// that remote ranks do not get from it: the launcher sets them per rank,
// or they are its own, or they must never be on a command line.
var notForwarded = map[string]bool{
	boot.EnvRank: true, boot.EnvSize: true, boot.EnvRanksHere: true, boot.EnvLocalRank: true,
	boot.EnvLocalSize: true, boot.EnvNode: true, boot.EnvNodeRanks: true, boot.EnvKVS: true,
	boot.EnvJobID: true, boot.EnvApps: true, boot.EnvSecret: true, boot.EnvSecretFD: true, boot.EnvAddr: true,
	"MPIGO_KVS_HOST": true, "MPIGO_NP": true,
}

// extraEnv is the environment a process of group g gets besides the
// launch variables (which come after it and so win): for a remote
// process, the MPIGO_ tunables of the launcher's environment (a local
// process inherits them), then -x and -genv, then the group's -env.
func extraEnv(cfg *runConfig, g *runGroup, remote bool) []string {
	var env []string
	if remote {
		for _, kv := range os.Environ() {
			name, _, _ := strings.Cut(kv, "=")
			if strings.HasPrefix(name, "MPIGO_") && !strings.HasPrefix(name, "MPIGO_TEST_") && !notForwarded[name] && validEnvName(name) {
				env = append(env, kv)
			}
		}
	}
	env = append(env, cfg.env...)
	return append(env, g.env...)
}

// binder hands out cores to the processes of each host for --bind-to core.
type binder struct {
	cpus []int          // the launcher's allowed CPUs (for local processes)
	next map[string]int // processes placed so far on each host
}

func newBinder() *binder { return &binder{cpus: allowedCPUs(), next: map[string]int{}} }

// place returns the index of the next process on node.
func (b *binder) place(node string) int {
	i := b.next[node]
	b.next[node]++
	return i
}

// localCPUs returns the cores of the idx'th local process hosting k
// ranks: k cores of its own, in order, wrapping round when the processes
// outnumber the cores.
func (b *binder) localCPUs(idx, k int) []int {
	cpus := make([]int, k)
	for j := range cpus {
		cpus[j] = b.cpus[(idx*k+j)%len(b.cpus)]
	}
	return cpus
}

// remoteBindShell is the part of a remote process's shell command that
// pins it (through taskset, when the host has it) to k cores of its own:
// the idx'th process of the host takes cores idx*k .. idx*k+k-1 (modulo
// the host's count, nproc). It sets b to the command to put before the
// program.
func remoteBindShell(idx, k, rank int) string {
	var list []string
	for j := 0; j < k; j++ {
		list = append(list, fmt.Sprintf("$(( %d %% n ))", idx*k+j))
	}
	return `{ n=$(nproc 2>/dev/null) || n=1; if command -v taskset >/dev/null 2>&1; then b="taskset -c ` + strings.Join(list, ",") +
		`"; else b=; echo "mpigo run: --bind-to core: no taskset on $(hostname), rank ` + fmt.Sprint(rank) + ` is not pinned" >&2; fi; }`
}

// outputFiles creates DIR/rank.N/stdout and stderr for the process whose
// first rank is rank.
func outputFiles(dir string, rank int) (so, se *os.File, err error) {
	d := filepath.Join(dir, fmt.Sprintf("rank.%d", rank))
	if err := os.MkdirAll(d, 0o755); err != nil {
		return nil, nil, fmt.Errorf("--output-filename: %v", err)
	}
	if so, err = os.Create(filepath.Join(d, "stdout")); err != nil {
		return nil, nil, fmt.Errorf("--output-filename: %v", err)
	}
	if se, err = os.Create(filepath.Join(d, "stderr")); err != nil {
		so.Close()
		return nil, nil, fmt.Errorf("--output-filename: %v", err)
	}
	return so, se, nil
}

// goos names this system in messages.
const goos = runtime.GOOS

// maxNodeRanks is the most ranks placed on one host.
func maxNodeRanks(nodeRanks map[string][]int) int {
	most := 0
	for _, r := range nodeRanks {
		most = max(most, len(r))
	}
	return most
}

// fileOrNil turns a nil *os.File into a nil io.WriteCloser.
func fileOrNil(f *os.File) io.WriteCloser {
	if f == nil {
		return nil
	}
	return f
}
