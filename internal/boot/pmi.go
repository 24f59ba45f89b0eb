package boot

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/fnv"
	"net"
	"os"
	"strconv"
	"strings"
	"time"
)

// Launchers other than `mpigo run` (MPICH's Hydra, Slurm's srun, Open MPI's
// mpirun) give a rank its number and a way to reach the others; a pmiConn
// is that way: a key-value store with a fence, in PMI's shape. pmiKV turns
// one into a KV: it encodes values into the characters and lengths PMI
// accepts.

// pmiConn is one process's connection to a launcher's key-value store.
type pmiConn interface {
	put(key, value string) error
	fence() error
	get(key string) (value string, found bool, err error)
	// maxValue is the longest value the store accepts (after encoding).
	maxValue() int
	finalize() error
	abort(code int, msg string)
	close() error
}

// PMI timeouts: a reply to a simple request must come within
// replyTimeout; a fence waits for every process of the job, which may be
// starting slowly on a loaded cluster, so it gets fenceTimeout.
// MPIGO_PMI_TIMEOUT in env overrides both (a Go duration).
var (
	replyTimeout = 60 * time.Second
	fenceTimeout = 10 * time.Minute
)

func pmiTimeouts(env lookupFunc) (reply, fence time.Duration) {
	if d, err := time.ParseDuration(getenv(env, "MPIGO_PMI_TIMEOUT")); err == nil && d > 0 {
		return d, d
	}
	return replyTimeout, fenceTimeout
}

// lookupFunc reads a variable of the environment: the package reads none
// itself, its callers pass a reader (package mpi's config.go, mpigo:
// os.LookupEnv; tests give each simulated rank its own).
type lookupFunc func(string) (string, bool)

// Aborter is implemented by the stores of launchers that can end the whole
// job at once (PMI's abort).
type Aborter interface {
	Abort(code int, msg string)
}

// pmiKV is the KV of a process started by a PMI launcher (or by mpirun,
// through the rendezvous store).
type pmiKV struct {
	c pmiConn
}

func (k *pmiKV) Put(key, value string) error {
	if !validKey(key) {
		return fmt.Errorf("boot: bad key %q", key)
	}
	enc := encodeValue(value)
	lim := max(k.c.maxValue(), 8)
	if len(enc) <= lim {
		return k.c.put(key, enc)
	}
	// Too long for one value: put the pieces under KEY.0, KEY.1, ... and
	// the number of pieces under KEY as "*N" (an encoded value never
	// starts with '*').
	n := 0
	for off := 0; off < len(enc); n++ {
		end := min(off+lim, len(enc))
		if end < len(enc) { // never split an escape
			if enc[end-1] == '%' {
				end--
			} else if enc[end-2] == '%' {
				end -= 2
			}
		}
		if err := k.c.put(key+"."+strconv.Itoa(n), enc[off:end]); err != nil {
			return err
		}
		off = end
	}
	return k.c.put(key, "*"+strconv.Itoa(n))
}

func (k *pmiKV) Fence() error { return k.c.fence() }

func (k *pmiKV) Get(key string) (string, error) {
	v, found, err := k.c.get(key)
	if err != nil {
		return "", err
	}
	if !found {
		return "", fmt.Errorf("boot: no value for key %q", key)
	}
	if n, ok := strings.CutPrefix(v, "*"); ok {
		parts, err := strconv.Atoi(n)
		if err != nil || parts < 1 || parts > 1<<16 {
			return "", fmt.Errorf("boot: bad value for key %q: %q", key, v)
		}
		var b strings.Builder
		for i := 0; i < parts; i++ {
			p, found, err := k.c.get(key + "." + strconv.Itoa(i))
			if err != nil {
				return "", err
			}
			if !found {
				return "", fmt.Errorf("boot: part %d of the value of key %q is missing", i, key)
			}
			b.WriteString(p)
		}
		v = b.String()
	}
	return decodeValue(v)
}

// Close tells the launcher this process is done (PMI finalize) and closes
// the connection.
func (k *pmiKV) Close() error {
	err := k.c.finalize()
	return errors.Join(err, k.c.close())
}

// Abort asks the launcher to end the whole job.
func (k *pmiKV) Abort(code int, msg string) { k.c.abort(code, msg) }

func validKey(key string) bool {
	if key == "" || len(key) > 60 {
		return false
	}
	for i := 0; i < len(key); i++ {
		if !safeByte(key[i]) || key[i] == '%' {
			return false
		}
	}
	return true
}

// safeByte reports whether c travels unchanged in a PMI-1 or PMI-2 value:
// letters, digits and a few punctuation marks; never space, '=', ';' or a
// control character, which the wire formats use or cannot carry.
func safeByte(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return strings.IndexByte("._-:/,+[]@", c) >= 0
}

// encodeValue writes every byte that is not safe as %XX.
func encodeValue(s string) string {
	n := 0
	for i := 0; i < len(s); i++ {
		if !safeByte(s[i]) {
			n++
		}
	}
	if n == 0 {
		return s
	}
	const hexd = "0123456789ABCDEF"
	b := make([]byte, 0, len(s)+2*n)
	for i := 0; i < len(s); i++ {
		c := s[i]
		if safeByte(c) {
			b = append(b, c)
		} else {
			b = append(b, '%', hexd[c>>4], hexd[c&15])
		}
	}
	return string(b)
}

func decodeValue(s string) (string, error) {
	if !strings.Contains(s, "%") {
		return s, nil
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			b = append(b, s[i])
			continue
		}
		if i+2 >= len(s) {
			return "", fmt.Errorf("boot: bad escape at the end of value %q", s)
		}
		v, err := hex.DecodeString(s[i+1 : i+3])
		if err != nil {
			return "", fmt.Errorf("boot: bad escape in value %q", s)
		}
		b = append(b, v[0])
		i += 2
	}
	return string(b), nil
}

// jobIDOf turns a launcher's job name (a kvsname, a Slurm step id, an
// Open MPI jobid) into mpigo's 64-bit job id. Shared-memory files are
// named after it, so it must differ between jobs that run at once on a
// node, and be the same in every process of one job.
func jobIDOf(name string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(name))
	return h.Sum64()
}

// ParseProcessMapping reads PMI_process_mapping, as Hydra and Slurm give
// it: "(vector,(N0,NN,PPN),...)" lists blocks in rank order, each putting
// PPN consecutive ranks on each of the NN nodes numbered from N0; the list
// repeats until every rank has a node (a cyclic placement). It returns the
// node number of each of size ranks.
func ParseProcessMapping(s string, size int) ([]int, error) {
	bad := func(why string) ([]int, error) {
		return nil, fmt.Errorf("bad PMI_process_mapping %q: %s", s, why)
	}
	if size < 1 || size > 1<<24 {
		return bad("job size out of range")
	}
	body, ok := strings.CutPrefix(strings.TrimSpace(s), "(vector,")
	if !ok || !strings.HasSuffix(body, ")") {
		return bad("want (vector,(node,nodes,ranks per node),...)")
	}
	body = strings.TrimSuffix(body, ")")
	type block struct{ node, nodes, ppn int }
	var blocks []block
	for body != "" {
		rest, ok := strings.CutPrefix(body, "(")
		if !ok {
			return bad("want ( before a block")
		}
		inner, after, ok := strings.Cut(rest, ")")
		if !ok {
			return bad("unterminated block")
		}
		f := strings.Split(inner, ",")
		if len(f) != 3 {
			return bad("a block has three numbers")
		}
		var v [3]int
		for i, x := range f {
			n, err := strconv.Atoi(strings.TrimSpace(x))
			if err != nil || n < 0 || n > 1<<24 {
				return bad("not a number: " + x)
			}
			v[i] = n
		}
		if v[1] < 1 || v[2] < 1 {
			return bad("empty block")
		}
		blocks = append(blocks, block{v[0], v[1], v[2]})
		body = strings.TrimPrefix(after, ",")
	}
	if len(blocks) == 0 {
		return bad("no blocks")
	}
	nodes := make([]int, 0, size)
	for len(nodes) < size {
		for _, b := range blocks {
			for n := b.node; n < b.node+b.nodes && len(nodes) < size; n++ {
				for k := 0; k < b.ppn && len(nodes) < size; k++ {
					nodes = append(nodes, n)
				}
			}
		}
	}
	return nodes, nil
}

// ranksOnNode returns the ranks whose node equals that of rank.
func ranksOnNode(nodes []int, rank int) []int {
	var rs []int
	for r, n := range nodes {
		if n == nodes[rank] {
			rs = append(rs, r)
		}
	}
	return rs
}

// pmiDetected finishes the Info of a process started by a PMI launcher
// (either version): it reads the launcher's process mapping with mapping
// (found false: the launcher has none) and starts the key-value store
// (pmiStart; env gives MPIGO_ADDR). On failure it closes c.
func pmiDetected(env lookupFunc, info *Info, c pmiConn, who string, mapping func() (string, bool, error)) (*Info, error) {
	var ranks []int
	v, found, err := mapping()
	if err != nil {
		c.close()
		return nil, err
	}
	if found {
		if ranks, err = ParseProcessMapping(v, info.Size); err != nil {
			c.close()
			return nil, fmt.Errorf("%s: %v", who, err)
		}
	}
	if err := pmiStart(env, info, c, ranks); err != nil {
		c.close()
		return nil, err
	}
	return info, nil
}

// pmiStart completes Info for a process of a launcher's job whose rank and
// size are known and whose store is c: rank 0 makes the job's secret and
// puts it (with everyone's host name when mapping is nil, as nothing else
// says which ranks share a node), one fence, then every rank reads them.
//
// Trust: the secret is as private as the launcher's store. Any process
// that can read the store (the job's processes; for Hydra and Slurm, who
// can read the launcher's own traffic between nodes) learns it. It keeps
// strangers and other jobs out of a job's connections; it is no defence
// against someone who can watch the launcher.
func pmiStart(env lookupFunc, info *Info, c pmiConn, mapping []int) error {
	kv := &pmiKV{c: c}
	info.KV = kv
	host, _ := os.Hostname()
	info.Node = host
	if info.Rank == 0 {
		secret := make([]byte, 32)
		if _, err := rand.Read(secret); err != nil {
			return fmt.Errorf("boot: job secret: %w", err)
		}
		if err := kv.Put("mpigo.secret", hex.EncodeToString(secret)); err != nil {
			return err
		}
		info.Secret = secret
	}
	if mapping == nil {
		if err := kv.Put("mpigo.host."+strconv.Itoa(info.Rank), nodeIdentity(host)); err != nil {
			return err
		}
	}
	if err := kv.Fence(); err != nil {
		return err
	}
	if info.Rank != 0 {
		s, err := kv.Get("mpigo.secret")
		if err != nil {
			return err
		}
		if info.Secret, err = hex.DecodeString(s); err != nil || len(info.Secret) == 0 {
			return fmt.Errorf("boot: bad job secret from rank 0")
		}
	}
	if mapping == nil {
		mapping = make([]int, info.Size)
		ids := map[string]int{}
		for r := 0; r < info.Size; r++ {
			h, err := kv.Get("mpigo.host." + strconv.Itoa(r))
			if err != nil {
				return err
			}
			id, ok := ids[h]
			if !ok {
				id = len(ids)
				ids[h] = id
			}
			mapping[r] = id
		}
	}
	info.NodeRanks = ranksOnNode(mapping, info.Rank)
	info.LocalSize = len(info.NodeRanks)
	for i, r := range info.NodeRanks {
		if r == info.Rank {
			info.LocalRank = i
		}
	}
	info.RanksHere = 1
	if len(info.NodeRanks) < info.Size {
		// Peers on other nodes must reach this one: listen on all
		// interfaces and publish a name they can resolve.
		info.Addr = getenv(env, EnvAddr)
		if info.Addr == "" {
			info.Addr = getenv(env, "MPIR_CVAR_CH3_INTERFACE_HOSTNAME") // Hydra's choice of interface
		}
		if info.Addr == "" || isLoopbackName(info.Addr) {
			info.Addr = host
		}
	}
	return nil
}

func isLoopbackName(h string) bool {
	return h == "localhost" || h == "127.0.0.1" || h == "::1"
}

// nodeIdentity names this machine for the ranks that compare host names:
// the host name plus the kernel's boot id, so that two containers that
// share a host name but not a kernel (and so not /dev/shm) differ.
func nodeIdentity(host string) string {
	id := host
	if b, err := os.ReadFile("/proc/sys/kernel/random/boot_id"); err == nil {
		id += "/" + strings.TrimSpace(string(b))
	}
	return id
}

// fdConn makes a net.Conn of an inherited socket descriptor (PMI_FD).
func fdConn(v string) (net.Conn, error) {
	fd, err := strconv.Atoi(v)
	if err != nil || fd < 0 {
		return nil, fmt.Errorf("PMI_FD=%q is not a descriptor", v)
	}
	f := os.NewFile(uintptr(fd), "pmi")
	if f == nil {
		return nil, fmt.Errorf("PMI_FD=%d is not open", fd)
	}
	c, err := net.FileConn(f) // dups the descriptor
	f.Close()
	if err != nil {
		return nil, fmt.Errorf("PMI_FD=%d is not a socket: %w", fd, err)
	}
	return c, nil
}
