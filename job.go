package mpi

// A job: the ranks that started together, each rank's runtime (proc),
// how a job fails, and the errors that name a failed rank.

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mpigo/mpi/internal/boot"
	"github.com/mpigo/mpi/internal/device"
	"github.com/mpigo/mpi/internal/engine"
	"github.com/mpigo/mpi/internal/progress"
)

// job is a set of ranks that started together and share a world
// communicator. With Run, all of them are goroutines of this process.
type job struct {
	// Job is the lifecycle the ranks share below MPI's objects: size,
	// progress, closers, failure and exit (internal/device).
	device.Job
	procs []*proc

	hang atomic.Pointer[hangError] // set when hang diagnosis failed the job
	// hung is closed when hang diagnosis (or check mode) fails the job
	// (failJob); nil for a job it cannot fail.
	hung chan struct{}
	// hangKeep: a hang report does not stop the job (MPIGO_HANG_ABORT=0).
	hangKeep bool
	// family: the watchers of this job and of the jobs it spawned, or
	// that spawned it, as goroutine ranks of this process; none is hung
	// while another runs (device.Family).
	family *device.Family
	// hangAfter is the job's hang-report threshold (Config.HangReport),
	// which the goroutine ranks it spawns inherit.
	hangAfter time.Duration

	ft bool // ranks survive failures (ft.go)

	// fabricRMA: when windows reach a target through the fabric's remote
	// memory access (MPIGO_FABRIC_RMA; rma_fabric.go).
	fabricRMA int8
	// fabricAtomics: windows may take the fabric's atomics for their
	// accumulates on integers (MPIGO_FABRIC_ATOMICS; rma_atomic.go).
	fabricAtomics bool

	// apps are the sizes of the job's MPMD groups, in rank order (the
	// process sets mpigo://app/<i>: session.go); nil: one group.
	apps []int

	// inproc: the ranks are Run's goroutines over the inproc transport,
	// so their collectives may meet in memory (coll_meet.go).
	inproc bool
	meets  meets
	// files hands the goroutine ranks of a file one fileShare
	// (file_share.go).
	files fileShares
	// linkAddr is where other jobs reach this process (MPIGO_ADDR; empty:
	// loopback), for the links of dynamic processes (port.go).
	linkAddr string
	// boot is how a launched job was started (nil for Run's): spawn asks
	// its launcher (spawn.go).
	boot *boot.Info
	// universe is MPI_UNIVERSE_SIZE (spawn.go).
	universe int
}

// newJob returns a job of size ranks whose process exits with exit.
func newJob(size int, local bool) *job {
	j := &job{hung: make(chan struct{})}
	j.Size, j.Local, j.Prog, j.ProcFailed = size, local, progress.New(), ErrProcFailed
	j.Exit = func(code int) { os.Exit(exitStatus(code)) }
	return j
}

// devices returns the devices of j's ranks in this process.
func (j *job) devices() []*device.Device { return j.Devs }

// proc is the runtime of one rank: its engine, its transports, and the
// state MPI keeps per process.
type proc struct {
	// Device is the rank's runtime below MPI's objects: its engine
	// (Eng), its transports (Tr), their capabilities, the executor of
	// the engine's effects, the reply sender and the traffic counters
	// (internal/device). Embedded, so the hot paths read its fields as
	// proc's own.
	device.Device

	job *job
	// aborted is the error of Abort called by this rank of a local job.
	aborted atomic.Pointer[error]

	// ers recycles the engine requests of non-blocking sends and
	// receives (reqpool.go).
	ers erFreeList

	bsend engine.BsendBuffer
	ctx   ctxAlloc

	node      int   // the node this rank runs on: the lowest world rank there
	multiNode bool  // the job's ranks run on more than one node
	nodeRanks []int // the world ranks on this rank's node, ascending

	// boot is the communicator over every rank of the job on a context
	// of its own (bootCtxID) on which sessions agree on their
	// communicators' contexts (session.go), made on first use.
	bootOnce sync.Once
	boot     *Comm

	world *Comm

	// links are the rank's connections to other jobs (port.go), cut when
	// the job ends; parent is the intercommunicator to the job that
	// spawned this one, or nil (spawn.go).
	linkMu sync.Mutex
	links  []*device.Link
	parent *Comm
	appNum int // MPI_APPNUM (spawn.go)

	selfOnce sync.Once
	self     *Comm // the rank's Self communicator, made on first use

	names commNames  // the rank's communicators by context, for reports (hang.go)
	chk   checkState // check mode's view of the rank (coll_check.go)
	trc   *rankTrace // the rank's timeline while tracing, else nil (trace.go)
	ft    *ftProc    // fault tolerance, if on (ft.go)

	// reprs is the data representation of each world rank when some
	// differs from this rank's, else nil (hetero.go).
	reprs []repr
}

// abort takes the whole job down: every rank's pending and future
// operations fail with ErrProcFailed naming the cause. With exit, the
// process also exits with code after printing why (device.Job.Abort).
func (j *job) abort(rank, code int, cause error) {
	j.Abort(rank, code, cause, func(s string) { fmt.Fprint(stderr, s) })
}

// collect delivers what the rank's senders left in its mailbox while it
// is open, and reports whether they had left anything. Every look at the
// rank's messages that does not wait (a test, a probe) collects first: a
// program that polls with Test or Iprobe must see its messages arrive.
func (p *proc) collect() bool {
	if p == nil || p.Mail == nil || !p.Mail.IsOpen() {
		return false
	}
	return p.Mail.Collect()
}

// closeMail closes the rank's mailbox, delivering what it holds: when its
// function has returned, nobody of the rank collects.
func (p *proc) closeMail() {
	if p.Mail != nil {
		p.Mail.Close()
	}
}

// internal takes the job down after the engine reported a protocol error
// (a frame it cannot make sense of). A process started by a launcher
// exits, so that the launcher ends the job; goroutine ranks under Run
// only fail, and Run returns the error: a library call never exits the
// caller's process.
func (p *proc) internal(err error) {
	err = fmt.Errorf("%w: rank %d: %w", ErrIntern, p.Rank, err)
	if p.job.Local {
		p.job.Intern.CompareAndSwap(nil, &err)
		p.job.abort(p.Rank, 0, err)
		return
	}
	p.job.abort(p.Rank, 1, err)
}

// peerFailed fails what depends on a peer that is gone; a negative peer is
// a stranger or a bad handshake, which is refused while the job goes on.
func (p *proc) peerFailed(peer int, err error) {
	if peer < 0 {
		fmt.Fprintf(stderr, "mpigo: rank %d: %v\n", p.Rank, err)
		return
	}
	p.failPeer(peer, fmt.Errorf("%w: rank %d: %w", ErrProcFailed, peer, err))
}

// ExitPeerFailed is the exit status of a process started by a launcher
// whose ranks failed only because another rank of the job failed
// (ErrProcFailed). `mpigo run` uses it to name the rank that failed first
// rather than the ones that lost it.
const ExitPeerFailed = 75

// primaryErrors drops, from the errors of a failed job, the ones that only
// report that another rank failed, when there is such another failure: they
// are consequences, not causes. An *Error is one error, though it unwraps
// to its class and cause.
func primaryErrors(err error) error {
	j, ok := err.(interface{ Unwrap() []error })
	if _, one := err.(*Error); !ok || one {
		return err
	}
	var causes []error
	for _, e := range j.Unwrap() {
		if !errors.Is(e, ErrProcFailed) {
			causes = append(causes, e)
		}
	}
	if len(causes) == 0 {
		return err
	}
	return errors.Join(causes...)
}

// onlyPeerFailures reports whether every error in err is ErrProcFailed
// (an *Error is one error: its class decides, not its cause).
func onlyPeerFailures(err error) bool {
	if _, one := err.(*Error); one {
		return errors.Is(err, ErrProcFailed)
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range j.Unwrap() {
			if !onlyPeerFailures(e) {
				return false
			}
		}
		return true
	}
	return errors.Is(err, ErrProcFailed)
}

// RankError is the error of one rank in a job.
type RankError struct {
	Rank int
	Err  error
}

// Error formats the error as "rank R: ERR".
func (e *RankError) Error() string { return fmt.Sprintf("rank %d: %v", e.Rank, e.Err) }

// Unwrap returns the rank's error.
func (e *RankError) Unwrap() error { return e.Err }
