package boot

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Open MPI's mpirun gives each process its rank and size in the
// environment (OMPI_COMM_WORLD_RANK, ...) and a PMIx server, but no store
// that speaks anything simpler than PMIx. mpigo does not speak PMIx: rank
// 0 serves the store of `mpigo run` (Server) and the other ranks find it:
//
//   - all ranks on one node (OMPI_MCA_orte_num_nodes=1, or local size =
//     size): rank 0 listens on loopback and writes the address to a file
//     in the job's session directory, which mpirun creates for the job on
//     each node (OMPI_MCA_orte_jobfam_session_dir, else PMIX_SERVER_TMPDIR,
//     else TMPDIR); the others wait for the file.
//   - several nodes: rank 0 listens on all interfaces on a port derived
//     from the job id (20000 + hash mod 20000, or the next free of 16), on
//     the host named by MPIGO_OMPI_HOST, else the host of mpirun itself
//     (OMPI_MCA_orte_hnp_uri), where mpirun places rank 0 by default. The
//     others try those ports until one answers for this job.
//
// Either way a rank checks that the store it reached is its own job's
// (the key mpigo.job holds the Open MPI job id), and the store lets in
// only the job's own processes:
//
//   - one node: the file also holds a secret of 32 random bytes that
//     every connection to the store must prove, so other users' processes
//     (who cannot read the file) cannot use the store.
//   - several nodes: if MPIGO_JOB_SECRET is set (mpirun -x passes it to
//     every rank), connections prove a key derived from it and the job
//     id; else munged vouches for the user at each end of each connection
//     (storemunge.go). With neither, the job does not start.

const ompiPortBase, ompiPortRange, ompiPortTries = 20000, 20000, 16

// EnvJobSecret is a secret the user gives every rank of an Open MPI job on
// several nodes (mpirun -x MPIGO_JOB_SECRET), so that the store rank 0
// serves admits only them.
const EnvJobSecret = "MPIGO_JOB_SECRET"

// minJobSecret is the shortest MPIGO_JOB_SECRET accepted: a recorded
// handshake must not let a guesser find it.
const minJobSecret = 16

// ompiAuth is how the store of a job on several nodes is authenticated:
// a key every rank derives from MPIGO_JOB_SECRET, else MUNGE.
type ompiAuth struct {
	secret  []byte
	perPort bool   // each port's store has its own key (portKey)
	munge   string // munged's socket
}

func ompiSeveralNodesAuth(env lookupFunc, job string) (ompiAuth, error) {
	if v := getenv(env, EnvJobSecret); v != "" {
		if len(v) < minJobSecret {
			return ompiAuth{}, fmt.Errorf("%s is %d characters long; use at least %d (e.g. openssl rand -hex 16)", EnvJobSecret, len(v), minJobSecret)
		}
		sum := sha256.Sum256([]byte("mpigo ompi store\x00" + job + "\x00" + v))
		return ompiAuth{secret: sum[:], perPort: true}, nil
	}
	return ompiAuth{munge: mungeSocket(env)}, nil
}

// dial connects rank to the store at addr.
func (a ompiAuth) dial(addr string, rank int, d time.Duration) (KV, error) {
	if a.munge != "" {
		return dialMungeStore(addr, rank, a.munge, d)
	}
	return DialTimeout(addr, rank, a.portKey(addr), d)
}

// portKey is the key of the store at addr: on several nodes bound to its
// port, so that a process that took one of the job's ports before rank 0
// cannot relay the handshake of a rank that dialed it to the store on
// another port.
func (a ompiAuth) portKey(addr string) []byte {
	if !a.perPort {
		return a.secret
	}
	_, port, _ := net.SplitHostPort(addr)
	m := hmac.New(sha256.New, a.secret)
	io.WriteString(m, "mpigo ompi store port\x00"+port)
	return m.Sum(nil)
}

// serve starts rank 0's store on addr.
func (a ompiAuth) serve(addr string, size int) (*Server, error) {
	if a.munge != "" {
		return newMungeServer(addr, size, a.munge)
	}
	return NewServer(addr, size, a.portKey(addr))
}

// kvConn presents a KV (here: a client of rank 0's Server) as a pmiConn.
type kvConn struct {
	kv   KV
	srv  *Server // rank 0 only
	file string  // rendezvous file to remove (rank 0)
}

func (c *kvConn) put(key, value string) error { return c.kv.Put(key, value) }
func (c *kvConn) fence() error                { return c.kv.Fence() }
func (c *kvConn) get(key string) (string, bool, error) {
	v, err := c.kv.Get(key)
	return v, err == nil, err
}
func (c *kvConn) maxValue() int     { return 60000 }
func (c *kvConn) finalize() error   { return nil }
func (c *kvConn) abort(int, string) {}
func (c *kvConn) close() error {
	err := c.kv.Close()
	if c.srv != nil {
		c.srv.Close()
	}
	if c.file != "" {
		os.Remove(c.file)
	}
	return err
}

func ompiEnvInt(env lookupFunc, name string) (int, error) {
	v, ok := env(name)
	if !ok {
		return 0, fmt.Errorf("under Open MPI (mpirun): %s is not set", name)
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, fmt.Errorf("under Open MPI (mpirun): %s=%q is not a number", name, v)
	}
	return n, nil
}

// ompiJobName is Open MPI's name for the job.
func ompiJobName(env lookupFunc) string {
	if v, _ := env("OMPI_MCA_ess_base_jobid"); v != "" {
		return v
	}
	v, _ := env("PMIX_NAMESPACE")
	return v
}

func getenv(env lookupFunc, name string) string {
	v, _ := env(name)
	return v
}

// ompiOneNode reports whether every rank of the job runs on this node.
func ompiOneNode(env lookupFunc, size int) bool {
	if v, err := strconv.Atoi(getenv(env, "OMPI_MCA_orte_num_nodes")); err == nil {
		return v == 1
	}
	ls, err := strconv.Atoi(getenv(env, "OMPI_COMM_WORLD_LOCAL_SIZE"))
	return err == nil && ls == size
}

func ompiSessionDir(env lookupFunc) string {
	for _, v := range []string{"OMPI_MCA_orte_jobfam_session_dir", "PMIX_SERVER_TMPDIR"} {
		if d := getenv(env, v); d != "" {
			return d
		}
	}
	return os.TempDir()
}

// ompiHost is the host rank 0 serves on, for jobs on several nodes.
func ompiHost(env lookupFunc) (string, error) {
	if h := getenv(env, "MPIGO_OMPI_HOST"); h != "" {
		return h, nil
	}
	// "1097269248.0;tcp://192.0.2.2:50563;tcp6://[fd00::2]:43457"
	for _, part := range strings.Split(getenv(env, "OMPI_MCA_orte_hnp_uri"), ";") {
		// "tcp://ADDR[,ADDR...]:PORT": the first address.
		if rest, ok := strings.CutPrefix(part, "tcp://"); ok {
			if i := strings.LastIndexByte(rest, ':'); i > 0 {
				h, _, _ := strings.Cut(rest[:i], ",")
				if net.ParseIP(h) != nil {
					return h, nil
				}
			}
		}
	}
	return "", errors.New("under Open MPI (mpirun): a job on several nodes needs the host of rank 0: set MPIGO_OMPI_HOST (OMPI_MCA_orte_hnp_uri names none)")
}

func detectOMPI(env lookupFunc) (*Info, error) {
	const who = "Open MPI (mpirun)"
	rank, err := ompiEnvInt(env, "OMPI_COMM_WORLD_RANK")
	if err != nil {
		return nil, err
	}
	size, err := ompiEnvInt(env, "OMPI_COMM_WORLD_SIZE")
	if err != nil {
		return nil, err
	}
	if size < 1 || rank < 0 || rank >= size {
		return nil, fmt.Errorf("%s: rank %d of %d makes no sense", who, rank, size)
	}
	job := ompiJobName(env)
	if job == "" {
		return nil, fmt.Errorf("%s: neither OMPI_MCA_ess_base_jobid nor PMIX_NAMESPACE is set: cannot tell this job from others", who)
	}
	info := &Info{Rank: rank, Size: size, Launcher: who, JobID: jobIDOf("ompi/" + job)}
	reply, fence := pmiTimeouts(env)
	oneNode := ompiOneNode(env, size)
	port0 := ompiPortBase + int(info.JobID%ompiPortRange)
	c := &kvConn{}
	// On one node the store proves a secret that only the rendezvous file
	// (mode 0600, in the job's session directory) carries.
	var storeSecret []byte
	var auth ompiAuth
	if !oneNode {
		if auth, err = ompiSeveralNodesAuth(env, job); err != nil {
			return nil, fmt.Errorf("%s: %w", who, err)
		}
	}
	if rank == 0 {
		if oneNode {
			storeSecret = make([]byte, 32)
			if _, err := rand.Read(storeSecret); err != nil {
				return nil, fmt.Errorf("%s: store secret: %w", who, err)
			}
			c.srv, err = NewServer("127.0.0.1:0", size, storeSecret)
		} else {
			if auth.munge != "" {
				if _, err := mungeEncode(auth.munge, nil, mungeAny, reply); err != nil {
					return nil, fmt.Errorf("%s: a job on several nodes needs a way to keep other users out of rank 0's store: set %s to the same secret for every rank (mpirun -x %s), or run munged on the nodes (%v)", who, EnvJobSecret, EnvJobSecret, err)
				}
			}
			for i := 0; i < ompiPortTries; i++ {
				if c.srv, err = auth.serve(":"+strconv.Itoa(port0+i), size); err == nil {
					break
				}
			}
		}
		if err != nil {
			return nil, fmt.Errorf("%s: rank 0 cannot serve the job's store: %w", who, err)
		}
		c.srv.Preset("mpigo.job", job)
		if oneNode {
			c.file = filepath.Join(ompiSessionDir(env), fmt.Sprintf("mpigo-kvs-%016x", info.JobID))
			tmp := c.file + ".tmp"
			err := os.WriteFile(tmp, []byte(c.srv.Addr()+"\n"+hex.EncodeToString(storeSecret)), 0o600)
			if err == nil {
				err = os.Rename(tmp, c.file)
			}
			if err != nil {
				c.srv.Close()
				return nil, fmt.Errorf("%s: rank 0 cannot publish its store's address: %w", who, err)
			}
		}
		if oneNode {
			c.kv, err = Dial(c.srv.Addr(), 0, storeSecret)
		} else {
			c.kv, err = auth.dial(c.srv.Addr(), 0, reply)
		}
		if err != nil {
			c.close()
			return nil, err
		}
	} else {
		deadline := time.Now().Add(fence)
		var tries []string
		if oneNode {
			file := filepath.Join(ompiSessionDir(env), fmt.Sprintf("mpigo-kvs-%016x", info.JobID))
			for {
				b, err := readSmallFile(file, 512)
				if err == nil {
					addr, sec, _ := strings.Cut(string(b), "\n")
					if storeSecret, err = hex.DecodeString(sec); err != nil || len(storeSecret) == 0 {
						return nil, fmt.Errorf("%s: the rendezvous file %s holds no secret", who, file)
					}
					tries = []string{addr}
					break
				}
				if time.Now().After(deadline) {
					return nil, fmt.Errorf("%s: rank 0 did not publish its store in %s within %v", who, file, fence)
				}
				time.Sleep(10 * time.Millisecond)
			}
		} else {
			host, err := ompiHost(env)
			if err != nil {
				return nil, err
			}
			for i := 0; i < ompiPortTries; i++ {
				tries = append(tries, net.JoinHostPort(host, strconv.Itoa(port0+i)))
			}
		}
		if oneNode {
			auth = ompiAuth{secret: storeSecret}
		}
		var last error
		for c.kv == nil {
			for _, addr := range tries {
				kv, err := ompiDial(addr, rank, job, auth, reply)
				if err == nil {
					c.kv = kv
					break
				}
				last = err
			}
			if c.kv == nil {
				if time.Now().After(deadline) {
					return nil, fmt.Errorf("%s: cannot reach rank 0's store at %s within %v (last: %v)", who, strings.Join(tries, " or "), fence, last)
				}
				time.Sleep(20 * time.Millisecond)
			}
		}
	}
	if err := pmiStart(env, info, c, nil); err != nil {
		c.close()
		return nil, err
	}
	return info, nil
}

// ompiDial connects to a store and checks that it is this job's.
func ompiDial(addr string, rank int, job string, auth ompiAuth, d time.Duration) (KV, error) {
	kv, err := auth.dial(addr, rank, d)
	if err != nil {
		return nil, err
	}
	if v, err := kv.Get("mpigo.job"); err != nil || v != job {
		kv.Close()
		return nil, fmt.Errorf("the store at %s is another job's", addr)
	}
	return kv, nil
}

// readSmallFile reads a file of at most limit bytes (a longer one is an
// error, not a reason to allocate without end).
func readSmallFile(name string, limit int) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, int64(limit)+1))
	if err != nil {
		return nil, err
	}
	if len(b) > limit {
		return nil, fmt.Errorf("%s is longer than %d bytes", name, limit)
	}
	return b, nil
}
