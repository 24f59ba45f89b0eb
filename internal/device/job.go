package device

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mpigo/mpi/internal/progress"
	"github.com/mpigo/mpi/internal/transport"
)

// Job is what the ranks of one job that run in this process share in
// their lifecycle: how their waits make progress, what to close when the
// job ends, and how it fails. Package mpi's job embeds it and adds the
// API's state (the world communicators, the hang report, fault
// tolerance).
type Job struct {
	Size int       // ranks in the job
	Devs []*Device // the ranks of the job in this process, in rank order
	// Prog is how the job's waits make its transports progress: the
	// transports that deliver only when polled, and for how long a wait
	// polls them before it parks.
	Prog *progress.Progress
	// Local: the job is Run's goroutine ranks. An internal error then
	// fails the job without exiting, and the caller returns it (Intern).
	Local  bool
	Intern atomic.Pointer[error]
	// Exit ends the process (a rank aborted a launched job); tests
	// replace it.
	Exit func(code int)
	// ProcFailed is the error class of a job that a rank aborted
	// (package mpi's ErrProcFailed).
	ProcFailed error
	// Swept counts the times the mailbox sweeper delivered messages that
	// nobody collected (SweepMail).
	Swept atomic.Int64

	failOnce sync.Once
	failure  atomic.Pointer[error] // why the job is going down
	exitMu   sync.Mutex
	exiting  bool // a rank is printing why and exiting the process
	reapOnce sync.Once
	closers  []func() error // transports to close when the job ends
}

// AddCloser registers f to run when the job ends; closers run in reverse
// order of registration (transports first, then their reply senders).
func (j *Job) AddCloser(f func() error) { j.closers = append(j.closers, f) }

// Close runs the closers.
func (j *Job) Close() {
	for i := len(j.closers) - 1; i >= 0; i-- {
		j.closers[i]()
	}
}

// Failure returns why the job is going down, or nil.
func (j *Job) Failure() error {
	if p := j.failure.Load(); p != nil {
		return *p
	}
	return nil
}

// Fail fails the job with err, once: every local rank's pending and later
// operations fail with it, and no wait of the job stays parked
// (EndWaits). It reports whether this call failed the job.
func (j *Job) Fail(err error) bool {
	first := false
	j.failOnce.Do(func() {
		first = true
		j.failure.Store(&err)
		for _, d := range j.Devs {
			if d != nil && d.Eng != nil {
				d.Eng.Abort(err)
			}
		}
		j.EndWaits(err)
	})
	return first
}

// EndWaits ends the job's parked waits with cause (the package's
// EndWaits), once.
func (j *Job) EndWaits(cause error) {
	j.reapOnce.Do(func() { EndWaits(j.Devs, cause) })
}

// Abort takes the whole job down because rank failed with cause: every
// rank's pending and future operations fail with ProcFailed naming the
// cause. With a code other than 0, a launched job's process also exits
// with code after say has printed why. The first rank to take the
// process down is the one that explains why; ranks that fail because of
// it wait for the exit.
func (j *Job) Abort(rank, code int, cause error, say func(string)) {
	willExit := code != 0 && j.Exit != nil && !j.Local
	j.exitMu.Lock()
	if j.exiting {
		j.exitMu.Unlock()
		select {}
	}
	j.exiting = willExit
	j.exitMu.Unlock()
	j.Fail(fmt.Errorf("%w: job aborted by rank %d: %w", j.ProcFailed, rank, cause))
	if willExit {
		say(fmt.Sprintf("mpigo: rank %d aborted the job: %v\n", rank, cause))
		j.Exit(code)
	}
}

// MailSweep is how often the sweeper of a job whose goroutine ranks have
// mailboxes looks for messages that nobody collects (Mailbox.Sweep), in
// nanoseconds: 5 ms, and longer in tests that check that nothing needed
// the sweeper.
var MailSweep atomic.Int64

func init() { MailSweep.Store(int64(5 * time.Millisecond)) }

// SweepMail starts the job's mailbox sweeper, which Close stops. It is a
// safety net: a rank that stops looking at its messages with its mailbox
// open (a goroutine blocked outside the library, or a look that forgot
// to collect) gets them within a sweep or two instead of never.
func (j *Job) SweepMail() {
	var boxes []transport.Mailbox
	for _, d := range j.Devs {
		if d.Mail != nil {
			boxes = append(boxes, d.Mail)
		}
	}
	if len(boxes) == 0 {
		return
	}
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(time.Duration(MailSweep.Load()))
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
			}
			for _, m := range boxes {
				if m.Sweep() {
					j.Swept.Add(1)
				}
			}
		}
	}()
	j.AddCloser(func() error { close(stop); <-done; return nil })
}

// WaitRanks waits for the ranks' goroutines (wg). Once hung is closed (a
// hang report failed the job) it waits grace more at most, and returns
// the ranks in this process that have not returned by then.
func (j *Job) WaitRanks(wg *sync.WaitGroup, hung <-chan struct{}, grace time.Duration) []int {
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-hung:
	}
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-done:
		return nil
	case <-t.C:
	}
	var left []int
	for _, d := range j.Devs {
		if !d.Blk.Returned.Load() {
			left = append(left, d.Rank)
		}
	}
	return left
}
