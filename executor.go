package mpi

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"iter"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/mpigo/mpi/internal/datatype"
)

// This file is the task pool (issue 45): rank root of a communicator
// submits tasks, the other ranks run them. Every rank runs the same
// program, so the work function is given to NewExecutor on every rank and
// only the task values travel.
//
// The executor talks over a private duplicate of the caller's
// communicator. Tasks go to a worker in batches, several batches queued
// per worker so that a worker never waits for a round trip; each batch is
// one message of the task values, encoded by the typed layer, each behind
// its length. The worker runs a batch's tasks in order and answers with
// one message holding every result (or error) in the same order, and the
// time the batch took: the client sizes later batches from it (a batch of
// about execBatchTime of work, so empty tasks travel by the hundred and
// long ones one at a time).
//
//	client -> worker  tagExecBatch   uvarint seq, uvarint n, n x (uvarint len, task bytes)
//	client -> worker  tagExecCancel  uvarint seq, uvarint index: cancel that task's context
//	client -> worker  tagExecStop    empty: finish and leave
//	worker -> client  tagExecResult  uvarint seq, uvarint nanoseconds, uvarint first, uvarint n,
//	                                 n x (kind byte, uvarint len, result or message bytes):
//	                                 the results of tasks first..first+n-1 of batch seq, which
//	                                 took that long; seq 0 (no more) is the worker's goodbye
//	                                 after tagExecStop
//
// A worker sends a batch's results when the batch is done, or, if a task
// runs longer than execFlushAfter, the results it holds so far: a slow
// task does not hold back the results of the quick ones before it.
//
// The client has two goroutines: the pump sends batches to workers with
// room, the receiver takes results, completes tasks and, under fault
// tolerance, learns of workers that died and queues their tasks again.

const (
	tagExecBatch = iota + 1
	tagExecCancel
	tagExecStop
	tagExecResult
)

// Result kinds in a tagExecResult message.
const (
	execOK        = iota // the result's encoding
	execErr              // the work function's error text
	execPanic            // the panic value and a short stack
	execCancelled        // the task's context was cancelled before or while it ran
	execBadResult        // the result could not be encoded: why
)

// execBatchTime is how much work the client puts in one batch, once it
// knows how long tasks take.
// Two milliseconds, with defaultExecSlots batches per worker, keep several
// milliseconds of work queued at each worker: on a loaded machine the
// client may wait that long for a processor.
const execBatchTime = 2 * time.Millisecond

// Defaults of ExecutorOptions.
const (
	defaultExecInFlight = 256 // per worker
	defaultExecChunk    = 256
	defaultExecTries    = 3
	defaultExecSlots    = 4
)

// ErrShutdown is the class of the error of Submit and Map on an executor
// that has been shut down.
var ErrShutdown = errors.New("executor shut down")

// ExecutorOptions tune an executor; NewExecutorWith takes them. They
// matter on the client (root) only: workers ignore them. The zero value
// of every field means its default.
type ExecutorOptions struct {
	// InFlight bounds the tasks the client holds at once: queued, at
	// workers, or done but not yet returned by Map. Submit blocks while
	// the executor holds this many, and Map takes no more tasks from its
	// sequence, so a slow worker never makes the client hold every task.
	// Default 256 per worker.
	InFlight int
	// Chunk is the most tasks sent to a worker in one message. By default
	// the client chooses up to 256, aiming at about two milliseconds of
	// work per message; Chunk 1 sends every task alone.
	Chunk int
	// MaxTries is how many times a task is run on workers that die under
	// it, under fault tolerance, before the task fails with ErrProcFailed.
	// Default 3.
	MaxTries int
	// Progress, if set, receives a line of progress of each Map and
	// MapUnordered every ProgressEvery (default 1s) and a last line when it
	// ends: tasks done, failed, rate, live workers (and of ProgressTotal, if
	// set, the share done and an estimate of the time left).
	Progress      io.Writer
	ProgressEvery time.Duration
	ProgressTotal int
}

// Executor is a pool of tasks over the ranks of a communicator: the
// client (rank root) submits tasks of type T; every other rank runs them
// with the work function given to NewExecutor and sends back results of
// type R. Tasks and results are any values the typed layer can send
// (Send, Recv), so a worker may be another process or another machine.
//
// A work function's error or panic is its task's error (a *TaskError); the
// executor goes on. Under fault tolerance (mpigo run --ft, Config.FT) a
// task whose worker died runs again on another worker, up to
// ExecutorOptions.MaxTries times; without it, a worker that dies fails
// every pending task with ErrProcFailed (the job is ending anyway).
//
// Its methods may be called from any goroutine of the client.
type Executor[T, R any] struct {
	x     *execCore[R]
	tinfo *typeInfo
}

// Task is a task submitted to an Executor: a future of its result.
type Task[R any] struct {
	enc    []byte // the task value's encoding
	inline [24]byte

	// Where the task is: set under execCore.mu.
	state  uint8 // execQueued, execSent, execDone
	tries  int32
	worker int // rank of the worker it was last sent to
	seq    uint64
	index  int
	dead   []int // workers that died running it

	fin   atomic.Bool // val and err are final
	val   R
	err   error
	done  chan struct{} // Submit: closed when fin
	mr    *mapRun[R]    // Map: told when the task is fin
	stop  func() bool   // SubmitContext: stops the context's AfterFunc
	pos   int           // Map: index in the task sequence
	given bool          // MapUnordered: yielded
}

const (
	execQueued = iota
	execSent
	execDone
)

// Wait waits for the task's result. The error is the work function's (a
// *TaskError), a cancellation's, or the executor's own (the task could not
// be run).
func (t *Task[R]) Wait() (_ R, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Task.Wait", nil, Undefined, Undefined), &err)
	}
	if t == nil {
		return _r0[R](), (*Comm)(nil).errorf("Task.Wait", ErrRequest, loc{}, "nil task")
	}
	<-t.done
	return t.val, t.err
}

// Done is closed when the task's result is in: select on it to take
// results as they complete.
// A nil task's channel is closed: its Wait returns an error at once.
func (t *Task[R]) Done() <-chan struct{} {
	if t == nil {
		return closedDone
	}
	return t.done
}

// closedDone is the Done channel of a nil task.
var closedDone = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// _r0 is the zero R.
func _r0[R any]() (r R) { return r }

// TaskError is the error of a task whose work function returned an error
// or panicked on a worker. Go errors cannot travel between processes, so
// it carries the error's text.
type TaskError struct {
	Worker   int    // the worker's rank in the executor's communicator
	Msg      string // the error's text; for a panic, the value and a short stack
	Panicked bool   // the work function panicked
}

func (e *TaskError) Error() string {
	if e.Panicked {
		return fmt.Sprintf("mpi: task panicked on worker rank %d: %s", e.Worker, e.Msg)
	}
	return fmt.Sprintf("mpi: task failed on worker rank %d: %s", e.Worker, e.Msg)
}

type execBatch[R any] struct {
	seq   uint64
	tasks []*Task[R]
	next  int  // tasks before it have their results in
	alone bool // a task whose worker died, alone at its worker
}

type execWorker[R any] struct {
	rank int
	dead bool
	bye  bool
	seq  uint64
	out  []*execBatch[R] // batches sent and not answered, oldest first
}

// execCore is the client's side of an executor; it knows R but not T
// (tasks are encoded when they are submitted).
type execCore[R any] struct {
	d     *Comm
	rinfo *typeInfo
	opts  ExecutorOptions
	ft    bool

	mu       sync.Mutex
	space    sync.Cond // signalled when inflight drops or the executor ends
	queue    []*Task[R]
	qhead    int
	workers  []*execWorker[R] // by rank; nil for the client
	live     int
	inflight int
	closed   bool  // Shutdown was called
	stopping bool  // the workers have been told to stop
	broken   error // the executor cannot go on: every task fails with it
	avgNs    float64
	chunk    atomic.Int64 // tasks per batch, from avgNs
	queued   atomic.Int64 // tasks waiting in queue
	nlive    atomic.Int64 // live, read without the lock

	wake     chan struct{}
	pumpDone chan struct{}
	recvDone chan struct{}

	// release, if set, runs at the end of Shutdown: a spawning executor
	// disconnects from its workers' job (executor_spawn.go).
	release func() error
}

// NewExecutor makes a task pool over c: rank root of c is the client,
// every other rank a worker. It is collective over c. On root it returns
// the executor. On every other rank it runs tasks with work until root
// calls Shutdown, and then returns (nil, nil); it returns an error if the
// client died or c failed.
//
// work runs one task at a time on each worker; its ctx is cancelled when
// the client cancels the task (SubmitContext's or Map's context).
func NewExecutor[T, R any](c *Comm, root int, work func(ctx context.Context, task T) (R, error)) (_ *Executor[T, R], err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("NewExecutor", c, root, Undefined), &err)
	}

	return NewExecutorWith(c, root, work, ExecutorOptions{})
}

// NewExecutorWith is NewExecutor with options for the client.
func NewExecutorWith[T, R any](c *Comm, root int, work func(ctx context.Context, task T) (R, error), opts ExecutorOptions) (_ *Executor[T, R], err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("NewExecutorWith", c, root, Undefined), &err)
	}

	const op = "NewExecutor"
	if err := c.check(op); err != nil {
		return nil, err
	}
	if err := c.checkRoot(op, root); err != nil {
		return nil, err
	}
	if work == nil {
		return nil, c.fail(op, ErrArg, loc{}, "nil work function")
	}
	if c.Size() < 2 {
		return nil, c.fail(op, ErrArg, loc{}, "an executor needs a client and at least one worker: %s has 1 rank (run with mpigo run -n 2 or more)", c.Name())
	}
	tinfo, rinfo := typeOf[T](), typeOf[R]()
	// A type the codec refuses whatever its value (a func, a chan) fails
	// here, on every rank alike, before anything is sent.
	for _, ti := range []*typeInfo{tinfo, rinfo} {
		if ti.shape == shapeEncoded {
			if err := datatype.Check(ti.info.Type); err != nil {
				return nil, c.fail(op, ErrType, loc{}, "%v", err)
			}
		}
	}
	d, err := c.Dup()
	if err != nil {
		return nil, err
	}
	d.SetName("executor of " + c.Name())
	// Task and result values travel without their type: every rank checks
	// here that all of them serve the same T and R (a worker program built
	// with other types, under SpawnExecutor, is the usual way to differ).
	sigs, err := Allgather(d, [2]uint64{tinfo.msig, rinfo.msig})
	if err != nil {
		d.free()
		return nil, err
	}
	for r, sg := range sigs {
		if sg != sigs[root] {
			d.free()
			return nil, c.fail(op, ErrType, loc{}, "rank %d of %s serves other task or result types than the client (rank %d), whose are %s and %s", r, c.Name(), root, typeName[T](), typeName[R]())
		}
	}
	if c.Rank() != root {
		err := serveExec(d, root, work, tinfo, rinfo)
		d.free()
		return nil, err
	}
	x := &execCore[R]{
		d:        d,
		rinfo:    rinfo,
		opts:     opts,
		ft:       d.p.ft != nil,
		workers:  make([]*execWorker[R], d.Size()),
		live:     d.Size() - 1,
		wake:     make(chan struct{}, 1),
		pumpDone: make(chan struct{}),
		recvDone: make(chan struct{}),
	}
	if x.opts.InFlight <= 0 {
		x.opts.InFlight = defaultExecInFlight * x.live
	}
	if x.opts.Chunk <= 0 {
		x.opts.Chunk = defaultExecChunk
	}
	if x.opts.MaxTries <= 0 {
		x.opts.MaxTries = defaultExecTries
	}
	if x.opts.ProgressEvery <= 0 {
		x.opts.ProgressEvery = time.Second
	}
	x.space.L = &x.mu
	x.chunk.Store(1)
	x.nlive.Store(int64(x.live))
	for r := range x.workers {
		if r != root {
			x.workers[r] = &execWorker[R]{rank: r}
		}
	}
	go x.pump()
	go x.receive()
	return &Executor[T, R]{x: x, tinfo: tinfo}, nil
}

// fail builds an error of the executor's call op.
func (x *execCore[R]) fail(op string, class error, format string, args ...any) error {
	return x.d.errorf("Executor."+op, class, loc{}, format, args...)
}

// Workers returns the number of live workers.
func (e *Executor[T, R]) Workers() int {
	if e == nil || e.x == nil {
		return 0
	}
	e.x.mu.Lock()
	defer e.x.mu.Unlock()
	return e.x.live
}

// newTask encodes v into a new task. A value the codec cannot encode is
// an ErrType error, before anything is queued.
func (e *Executor[T, R]) newTask(op string, v *T) (*Task[R], error) {
	t := &Task[R]{}
	b, err := appendValue(e.tinfo, t.inline[:0], v)
	if err != nil {
		return nil, e.x.fail(op, ErrType, "the task cannot be sent: %v", err)
	}
	t.enc = b
	return t, nil
}

// appendValue appends the bytes the typed layer sends for *v to b.
func appendValue[T any](t *typeInfo, b []byte, v *T) ([]byte, error) {
	if t.shape == shapeEncoded {
		return datatype.Encode(b, v)
	}
	switch t.shape {
	case shapePlain:
		return append(b, unsafe.Slice((*byte)(unsafe.Pointer(v)), t.size)...), nil
	case shapeString:
		return append(b, *(*string)(unsafe.Pointer(v))...), nil
	}
	h := (*sliceHeader)(unsafe.Pointer(v))
	if h.len == 0 {
		return b, nil
	}
	return append(b, unsafe.Slice((*byte)(h.data), h.len*t.size)...), nil
}

// Submit queues task and returns its future. It blocks while the executor
// holds ExecutorOptions.InFlight tasks. A task that cannot be encoded
// gives ErrType; after Shutdown, ErrShutdown.
func (e *Executor[T, R]) Submit(task T) (_ *Task[R], err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Executor.Submit", nil, Undefined, Undefined), &err)
	}

	return e.SubmitContext(context.Background(), task)
}

// SubmitContext is Submit with a context: cancelling it cancels the task
// (its Wait returns the context's error, and the work function's context
// is cancelled on the worker if it runs), and ends a Submit blocked by
// back-pressure.
func (e *Executor[T, R]) SubmitContext(ctx context.Context, task T) (_ *Task[R], err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Executor.SubmitContext", nil, Undefined, Undefined), &err)
	}

	const op = "Submit"
	if e == nil || e.x == nil {
		return nil, &Error{Class: ErrArg, Op: "Executor.Submit", Rank: NoRank, Msg: "nil executor (NewExecutor returns nil on the workers)"}
	}
	t, err := e.newTask(op, &task)
	if err != nil {
		return nil, err
	}
	t.done = make(chan struct{})
	x := e.x
	var wakeup func() bool
	if ctx.Done() != nil {
		wakeup = context.AfterFunc(ctx, func() {
			x.mu.Lock()
			x.space.Broadcast()
			x.mu.Unlock()
		})
	}
	x.mu.Lock()
	for x.inflight >= x.opts.InFlight && !x.closed && x.broken == nil && ctx.Err() == nil {
		x.space.Wait()
	}
	if err := x.refuse(op); err != nil {
		x.mu.Unlock()
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		x.mu.Unlock()
		return nil, err
	}
	x.enqueue(t)
	if wakeup != nil {
		wakeup()
		t.stop = context.AfterFunc(ctx, func() { x.cancel([]*Task[R]{t}, context.Cause(ctx)) })
	}
	x.mu.Unlock()
	x.poke()
	return t, nil
}

// refuse returns why no task can be queued now, if so. x.mu is held.
func (x *execCore[R]) refuse(op string) error {
	if x.closed {
		return x.fail(op, ErrShutdown, "Shutdown was called")
	}
	if x.broken != nil {
		return x.broken
	}
	return nil
}

// enqueue queues tasks. x.mu is held.
func (x *execCore[R]) enqueue(ts ...*Task[R]) {
	x.queue = append(x.queue, ts...)
	x.inflight += len(ts)
	x.queued.Add(int64(len(ts)))
}

func (x *execCore[R]) poke() {
	select {
	case x.wake <- struct{}{}:
	default:
	}
}

// finish completes t with (v, err), unless it is done. x.mu is held.
func (x *execCore[R]) finish(t *Task[R], v R, err error) {
	if t.state == execDone && t.fin.Load() {
		return
	}
	t.state = execDone
	t.val, t.err = v, err
	t.fin.Store(true)
	if t.stop != nil {
		t.stop()
		t.stop = nil
	}
	if t.done != nil {
		close(t.done)
	}
	if mr := t.mr; mr != nil {
		if mr.done != nil {
			mr.done <- t // never blocks: the channel has room for the whole window
		} else {
			select {
			case mr.wake <- struct{}{}:
			default:
			}
		}
	}
}

// cancel cancels tasks with err: a queued task is done at once (the pump
// drops it); a task at a worker is done at once too, and the worker is
// told to cancel its context.
func (x *execCore[R]) cancel(ts []*Task[R], err error) {
	type where struct {
		rank       int
		seq, index uint64
	}
	var send []where
	var zero R
	x.mu.Lock()
	for _, t := range ts {
		if t.fin.Load() {
			continue
		}
		if t.state == execSent {
			send = append(send, where{t.worker, t.seq, uint64(t.index)})
		}
		x.finish(t, zero, err)
	}
	x.mu.Unlock()
	var b []byte
	for _, w := range send {
		b = binary.AppendUvarint(b[:0], w.seq)
		b = binary.AppendUvarint(b, w.index)
		Send(x.d, b, w.rank, tagExecCancel) // a worker that died is handled by the receiver
	}
}

// pump sends batches to workers with room, and the workers' stop when the
// executor is shut down and holds nothing.
func (x *execCore[R]) pump() {
	defer close(x.pumpDone)
	type out struct {
		rank int
		msg  []byte
	}
	var sends []out
	var bufs [][]byte
	next := 0 // the worker to fill first, in turn, so that all get work
	for range x.wake {
		x.mu.Lock()
		sends = sends[:0]
		for len(x.queue) > x.qhead && x.broken == nil {
			progressed := false
			for i := range x.workers {
				w := x.workers[(next+i)%len(x.workers)]
				if w == nil || w.dead || len(w.out) >= defaultExecSlots || (len(w.out) > 0 && w.out[len(w.out)-1].alone) {
					continue
				}
				b := x.takeBatch(w)
				if b == nil {
					break
				}
				progressed = true
				if len(bufs) <= len(sends) {
					bufs = append(bufs, nil)
				}
				msg := binary.AppendUvarint(bufs[len(sends)][:0], b.seq)
				msg = binary.AppendUvarint(msg, uint64(len(b.tasks)))
				for _, t := range b.tasks {
					msg = binary.AppendUvarint(msg, uint64(len(t.enc)))
					msg = append(msg, t.enc...)
				}
				bufs[len(sends)] = msg
				sends = append(sends, out{w.rank, msg})
			}
			next++
			if !progressed {
				break
			}
		}
		stop := x.closed && x.inflight == 0 && !x.stopping
		var stopTo []int
		if stop {
			x.stopping = true
			for _, w := range x.workers {
				if w != nil && !w.dead {
					stopTo = append(stopTo, w.rank)
				}
			}
		}
		x.mu.Unlock()
		for _, s := range sends {
			if err := Send(x.d, s.msg, s.rank, tagExecBatch); err != nil {
				x.sendFailed(s.rank, err)
			}
		}
		if stop {
			for _, r := range stopTo {
				if err := Send(x.d, []byte{}, r, tagExecStop); err != nil {
					x.sendFailed(r, err)
				}
			}
			x.mu.Lock()
			x.checkEnd()
			x.mu.Unlock()
			return
		}
	}
}

// takeBatch takes the next batch for w off the queue and records it as
// sent, or returns nil if the queue holds no task to send. x.mu is held.
func (x *execCore[R]) takeBatch(w *execWorker[R]) *execBatch[R] {
	n := int(x.chunk.Load())
	// Spread what is queued over the workers' free slots rather than give
	// it all to the first.
	free := 0
	for _, v := range x.workers {
		if v != nil && !v.dead {
			free += defaultExecSlots - len(v.out)
		}
	}
	if share := (len(x.queue) - x.qhead + free - 1) / max(free, 1); share < n {
		n = share
	}
	n = max(1, min(n, x.opts.Chunk))
	var b *execBatch[R]
	for x.qhead < len(x.queue) && (b == nil || len(b.tasks) < n) {
		t := x.queue[x.qhead]
		if t.state == execDone { // cancelled while queued
			x.popQueue()
			x.inflight--
			x.space.Signal()
			continue
		}
		if t.tries > 0 && (b != nil || len(w.out) > 0) {
			break // a task whose worker died goes alone to an idle worker: if it kills workers, it kills nobody else's task
		}
		x.popQueue()
		if b == nil {
			w.seq++
			b = &execBatch[R]{seq: w.seq}
		}
		t.state, t.worker, t.seq, t.index = execSent, w.rank, w.seq, len(b.tasks)
		b.tasks = append(b.tasks, t)
		if t.tries > 0 {
			b.alone = true
			break
		}
	}
	if b != nil {
		w.out = append(w.out, b)
	}
	if x.qhead == len(x.queue) {
		x.queue, x.qhead = x.queue[:0], 0
	}
	return b
}

func (x *execCore[R]) popQueue() {
	x.queue[x.qhead] = nil
	x.qhead++
	x.queued.Add(-1)
}

// sendFailed handles a failed send to worker r.
func (x *execCore[R]) sendFailed(r int, err error) {
	if x.ft && errors.Is(err, ErrProcFailed) {
		x.mu.Lock()
		x.died(r, err)
		x.mu.Unlock()
		x.poke()
		return
	}
	x.breakDown(err)
}

// receive takes the workers' results until every worker has left.
func (x *execCore[R]) receive() {
	defer close(x.recvDone)
	var vals []R
	var errs []error
	for {
		msg, st, err := Recv[[]byte](x.d, AnySource, tagExecResult)
		if err != nil {
			if x.ft && (errors.Is(err, ErrProcFailed) || errors.Is(err, ErrProcFailedPending)) {
				if x.learnFailures(err) {
					return
				}
				continue
			}
			x.breakDown(err)
			return
		}
		seq, ns, from, n, body, perr := parseResultHeader(msg)
		x.mu.Lock()
		w := x.workers[st.Source]
		if w == nil || w.dead {
			x.mu.Unlock()
			continue // a late word from a worker given up for dead
		}
		if perr == nil && seq == 0 {
			w.bye = true
			end := x.checkEnd()
			x.mu.Unlock()
			if end {
				return
			}
			continue
		}
		if perr == nil && (len(w.out) == 0 || w.out[0].seq != seq || w.out[0].next != int(from) || len(w.out[0].tasks)-w.out[0].next < int(n)) {
			perr = fmt.Errorf("results of batch %d (tasks %d to %d) do not match what was sent", seq, from, from+n)
		}
		if perr != nil {
			x.mu.Unlock()
			x.breakDown(x.fail("Map", ErrIntern, "worker rank %d: %v", st.Source, perr))
			return
		}
		b := w.out[0]
		ts := b.tasks[from : from+n]
		b.next += int(n)
		if b.next == len(b.tasks) {
			w.out[0] = nil
			w.out = w.out[1:]
		}
		x.mu.Unlock()

		vals, errs = x.decodeResults(st.Source, body, len(ts), vals[:0], errs[:0])

		x.mu.Lock()
		for i, t := range ts {
			x.finish(t, vals[i], errs[i])
		}
		clear(vals)
		x.inflight -= len(ts)
		x.space.Broadcast()
		// A moving average of a task's time sizes the next batches.
		per := float64(ns) / float64(max(n, 1))
		if x.avgNs == 0 {
			x.avgNs = per
		} else {
			x.avgNs = 0.75*x.avgNs + 0.25*per
		}
		x.chunk.Store(int64(max(1, min(float64(x.opts.Chunk), float64(execBatchTime)/max(x.avgNs, 1)))))
		x.mu.Unlock()
		x.poke()
	}
}

func parseResultHeader(msg []byte) (seq, ns, from, n uint64, body []byte, err error) {
	var h [4]uint64
	for i := range h {
		v, k := binary.Uvarint(msg)
		if k <= 0 {
			return 0, 0, 0, 0, nil, errors.New("bad result header")
		}
		h[i] = v
		msg = msg[k:]
		if i == 0 && v == 0 {
			return 0, 0, 0, 0, nil, nil // goodbye
		}
	}
	return h[0], h[1], h[2], h[3], msg, nil
}

// decodeResults decodes the n results of a batch from worker.
func (x *execCore[R]) decodeResults(worker int, body []byte, n int, vals []R, errs []error) ([]R, []error) {
	var zero R
	for i := 0; i < n; i++ {
		var v R
		var err error
		if len(body) < 1 {
			err = x.fail("Wait", ErrIntern, "worker rank %d sent a short result message", worker)
			vals, errs = append(vals, zero), append(errs, err)
			continue
		}
		kind := body[0]
		l, k := binary.Uvarint(body[1:])
		if k <= 0 || uint64(len(body)-1-k) < l {
			err = x.fail("Wait", ErrIntern, "worker rank %d sent a short result message", worker)
			body = nil
			vals, errs = append(vals, zero), append(errs, err)
			continue
		}
		b := body[1+k : 1+k+int(l)]
		body = body[1+k+int(l):]
		switch kind {
		case execOK:
			if derr := decodeBytes(x.rinfo, b, &v, true); derr != nil {
				err = x.fail("Wait", ErrType, "the result from worker rank %d cannot be decoded: %v", worker, derr)
			}
		case execErr, execPanic:
			err = &TaskError{Worker: worker, Msg: string(b), Panicked: kind == execPanic}
		case execCancelled:
			err = context.Canceled
		case execBadResult:
			err = x.fail("Wait", ErrType, "worker rank %d: the result cannot be sent: %s", worker, b)
		default:
			err = x.fail("Wait", ErrIntern, "worker rank %d sent a result of unknown kind %d", worker, kind)
		}
		vals, errs = append(vals, v), append(errs, err)
	}
	return vals, errs
}

// learnFailures handles the failure of workers (fault tolerance): their
// tasks are queued again. It reports whether the receiver is done.
func (x *execCore[R]) learnFailures(cause error) bool {
	g, err := x.d.GetFailed()
	if err != nil {
		x.breakDown(err)
		return true
	}
	x.mu.Lock()
	for _, wr := range g.WorldRanks() {
		if r := x.d.rankOf(wr); r >= 0 {
			x.died(r, cause)
		}
	}
	x.mu.Unlock()
	if _, err := x.d.AckFailed(g.Size()); err != nil {
		x.breakDown(err)
		return true
	}
	x.poke()
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.checkEnd()
}

// died records that worker r died: its tasks are queued again, at the
// front, unless they have been tried MaxTries times. x.mu is held.
func (x *execCore[R]) died(r int, cause error) {
	w := x.workers[r]
	if w == nil || w.dead {
		if r == x.d.Rank() {
			x.broken = x.fail("Map", ErrProcFailed, "the client itself is failed: %v", cause)
		}
		return
	}
	w.dead = true
	x.live--
	x.nlive.Add(-1)
	var again []*Task[R]
	var zero R
	for _, b := range w.out {
		for _, t := range b.tasks {
			x.inflight--
			if t.fin.Load() {
				continue
			}
			// Any of them may have killed the worker: the one running,
			// or one whose result was lost with the worker. Each now
			// runs alone, at a worker that holds nothing else
			// (takeBatch), so that a task that kills workers takes no
			// other task with it, and a task that was merely queued
			// there soon completes.
			t.tries++
			t.dead = append(t.dead, r)
			if int(t.tries) >= x.opts.MaxTries {
				x.finish(t, zero, x.fail("Wait", ErrProcFailed, "the task ran %d times and its worker died each time (ranks %v): given up", t.tries, t.dead))
				continue
			}
			t.state = execQueued
			again = append(again, t)
		}
	}
	w.out = nil
	if len(again) > 0 {
		rest := x.queue[x.qhead:]
		q := make([]*Task[R], 0, len(again)+len(rest))
		q = append(append(q, again...), rest...)
		x.queue, x.qhead = q, 0
		x.inflight += len(again)
		x.queued.Add(int64(len(again)))
	}
	if x.live == 0 {
		x.failAll(x.fail("Map", ErrProcFailed, "every worker has died (the last, rank %d: %v)", r, cause))
	}
	x.space.Broadcast()
}

// failAll fails every task the executor holds with err; nothing can be
// run any more. x.mu is held.
func (x *execCore[R]) failAll(err error) {
	if x.broken == nil {
		x.broken = err
	}
	var zero R
	for _, t := range x.queue[x.qhead:] {
		x.finish(t, zero, err)
	}
	x.queued.Add(-int64(len(x.queue) - x.qhead))
	x.queue, x.qhead = nil, 0
	for _, w := range x.workers {
		if w == nil {
			continue
		}
		for _, b := range w.out {
			for _, t := range b.tasks {
				x.finish(t, zero, err)
			}
		}
		w.out = nil
	}
	x.inflight = 0
	x.space.Broadcast()
}

// breakDown ends the executor after a communication error without fault
// tolerance (a rank of the job failed): every pending task fails with it.
func (x *execCore[R]) breakDown(err error) {
	var e *Error
	if !errors.As(err, &e) {
		err = x.fail("Map", ErrOther, "%v", err)
	}
	x.mu.Lock()
	x.failAll(err)
	x.mu.Unlock()
	x.poke()
}

// checkEnd reports whether the receiver has nothing more to wait for:
// the workers have been told to stop and every live one has said
// goodbye, or no worker is left, or the executor broke. x.mu is held.
func (x *execCore[R]) checkEnd() bool {
	if x.broken != nil || x.live == 0 {
		return true
	}
	if !x.stopping {
		return false
	}
	for _, w := range x.workers {
		if w != nil && !w.dead && !w.bye {
			return false
		}
	}
	return true
}

// Shutdown waits for every submitted task to complete, then releases the
// workers (their NewExecutor returns) and frees the executor's
// communicator. Later Submit and Map calls fail with ErrShutdown. It
// returns the error that broke the executor, if one did (not the tasks'
// errors, which their Wait returns).
func (e *Executor[T, R]) Shutdown() (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Executor.Shutdown", nil, Undefined, Undefined), &err)
	}

	if e == nil || e.x == nil {
		return &Error{Class: ErrArg, Op: "Executor.Shutdown", Rank: NoRank, Msg: "nil executor (NewExecutor returns nil on the workers)"}
	}
	x := e.x
	x.mu.Lock()
	if x.closed {
		x.mu.Unlock()
		return x.fail("Shutdown", ErrShutdown, "Shutdown was called before")
	}
	x.closed = true
	x.space.Broadcast()
	x.mu.Unlock()
	x.poke()
	<-x.pumpDone
	<-x.recvDone
	x.mu.Lock()
	err = x.broken
	x.mu.Unlock()
	x.d.free()
	if x.release != nil {
		if rerr := x.release(); err == nil {
			err = rerr
		}
	}
	var ee *Error
	if errors.As(err, &ee) && errors.Is(err, ErrProcFailed) && x.ft {
		return nil // the workers died; under fault tolerance the executor went on
	}
	return err
}

// Map submits the tasks of the sequence and yields their results in the
// order of the tasks, holding at most ExecutorOptions.InFlight tasks at
// once: it takes the next task from the sequence only when there is room.
// A task's error comes with its result (the zero R). Cancelling ctx, or
// breaking out of the loop, stops taking tasks and cancels those in
// flight (the work functions' contexts are cancelled); after a
// cancellation Map yields the zero R and ctx's error once and ends.
func (e *Executor[T, R]) Map(ctx context.Context, tasks iter.Seq[T]) iter.Seq2[R, error] {
	return func(yield func(R, error) bool) {
		e.runMap(ctx, tasks, true, func(t *Task[R]) bool { return yield(t.val, t.err) }, func(err error) {
			var zero R
			yield(zero, err)
		})
	}
}

// MapUnordered is Map yielding results as they complete, each with the
// index of its task in the sequence: a slow task does not hold the
// others back.
func (e *Executor[T, R]) MapUnordered(ctx context.Context, tasks iter.Seq[T]) iter.Seq2[int, Result[R]] {
	return func(yield func(int, Result[R]) bool) {
		e.runMap(ctx, tasks, false, func(t *Task[R]) bool {
			return yield(t.pos, Result[R]{t.val, t.err})
		}, func(err error) { yield(-1, Result[R]{Err: err}) })
	}
}

// Result is a task's result and error, as MapUnordered yields them.
type Result[R any] struct {
	Value R
	Err   error
}

// mapRun is what one Map or MapUnordered call shares with the tasks it
// made: how their completion reaches it.
type mapRun[R any] struct {
	wake chan struct{} // ordered: poked when one of its tasks is done
	done chan *Task[R] // unordered: each task, when done (room for the whole window)
}

// runMap is Map (ordered) and MapUnordered. give yields a done task and
// reports whether to go on; stopped yields the error that ends the map.
func (e *Executor[T, R]) runMap(ctx context.Context, tasks iter.Seq[T], ordered bool, give func(*Task[R]) bool, stopped func(error)) {
	if e == nil || e.x == nil {
		stopped(&Error{Class: ErrArg, Op: "Executor.Map", Rank: NoRank, Msg: "nil executor (NewExecutor returns nil on the workers)"})
		return
	}
	x := e.x
	x.mu.Lock()
	err := x.refuse("Map")
	window := x.opts.InFlight
	x.mu.Unlock()
	if err != nil {
		stopped(err)
		return
	}
	mr := &mapRun[R]{}
	if ordered {
		mr.wake = make(chan struct{}, 1)
	} else {
		mr.done = make(chan *Task[R], window)
	}
	// held are the tasks made and not yet given, oldest first (unordered:
	// with given ones among them, dropped now and then).
	held := make([]*Task[R], 0, window)
	head, nheld := 0, 0
	var pend []*Task[R] // made, not yet queued
	pr := newProgress(x.opts, x)
	flush := func() error {
		if len(pend) == 0 {
			return nil
		}
		x.mu.Lock()
		if err := x.refuse("Map"); err != nil {
			x.mu.Unlock()
			return err
		}
		x.enqueue(pend...)
		x.mu.Unlock()
		clear(pend)
		pend = pend[:0]
		x.poke()
		return nil
	}
	// next returns the next task to give, waiting for one if block; nil
	// if none is done (and !block) or none is held.
	next := func(block bool) (*Task[R], error) {
		for nheld > 0 {
			if ordered {
				if h := held[head]; h.fin.Load() {
					held[head] = nil
					head++
					nheld--
					if head == len(held) {
						held, head = held[:0], 0
					}
					return h, nil
				}
			} else {
				select {
				case t := <-mr.done:
					t.given = true
					nheld--
					return t, nil
				default:
				}
			}
			if !block {
				return nil, nil
			}
			if err := flush(); err != nil {
				return nil, err
			}
			if ordered {
				select {
				case <-mr.wake:
				case <-ctx.Done():
					return nil, context.Cause(ctx)
				}
				continue
			}
			select {
			case t := <-mr.done:
				t.given = true
				nheld--
				return t, nil
			case <-ctx.Done():
				return nil, context.Cause(ctx)
			}
		}
		return nil, nil
	}
	// giveDone gives the tasks that are done, first waiting for one if
	// block. It reports false when the caller's loop ended.
	giveDone := func(block bool) (bool, error) {
		for {
			t, err := next(block)
			if err != nil || t == nil {
				return err == nil, err
			}
			pr.note(t.err)
			if !give(t) {
				return false, nil
			}
			block = false
		}
	}
	pos := 0
	var endErr error
	ended := false
	for v := range tasks {
		if err := ctx.Err(); err != nil {
			endErr = context.Cause(ctx)
			break
		}
		t, err := e.newTask("Map", &v)
		if err != nil {
			t = &Task[R]{state: execDone, err: err}
		}
		t.pos = pos
		pos++
		t.mr = mr
		if len(held) == cap(held) {
			// Make room in place, so that held never grows past the window.
			k := 0
			for _, h := range held[head:] {
				if h != nil && !h.given {
					held[k] = h
					k++
				}
			}
			clear(held[k:])
			held, head = held[:k], 0
		}
		held = append(held, t)
		nheld++
		if err != nil {
			x.mu.Lock()
			t.state = execQueued
			x.finish(t, t.val, err)
			x.mu.Unlock()
		} else {
			pend = append(pend, t)
		}
		if len(pend) > 0 && (len(pend) >= int(x.chunk.Load()) || x.queued.Load() < defaultExecSlots*x.nlive.Load()) {
			if endErr = flush(); endErr != nil {
				break
			}
		}
		block := nheld == window
		if block || (ordered && held[head].fin.Load()) || (!ordered && len(mr.done) > 0) {
			ok, err := giveDone(block)
			if err != nil {
				endErr = err
				break
			}
			if !ok {
				ended = true
				break
			}
		}
	}
	if endErr == nil && !ended {
		if endErr = flush(); endErr == nil {
			ok, err := true, error(nil)
			for nheld > 0 && ok && err == nil {
				ok, err = giveDone(true)
			}
			endErr, ended = err, !ok
		}
	}
	if ended || endErr != nil {
		var l []*Task[R]
		for _, t := range held {
			if t != nil && !t.fin.Load() {
				l = append(l, t)
			}
		}
		cause := endErr
		if cause == nil {
			cause = context.Canceled
		}
		x.cancel(l, cause)
	}
	pr.end()
	if endErr != nil {
		stopped(endErr)
	}
}

// progress writes the progress lines of a Map (ExecutorOptions.Progress).
type execProgress struct {
	w            io.Writer
	x            interface{ liveWorkers() int }
	every        time.Duration
	total        int
	start, last  time.Time
	done, failed int
}

func newProgress[R any](o ExecutorOptions, x *execCore[R]) *execProgress {
	if o.Progress == nil {
		return nil
	}
	now := time.Now()
	return &execProgress{w: o.Progress, x: x, every: o.ProgressEvery, total: o.ProgressTotal, start: now, last: now}
}

func (x *execCore[R]) liveWorkers() int {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.live
}

func (p *execProgress) note(err error) {
	if p == nil {
		return
	}
	p.done++
	if err != nil {
		p.failed++
	}
	if p.done%64 == 0 || p.every < time.Millisecond {
		if now := time.Now(); now.Sub(p.last) >= p.every {
			p.last = now
			p.line(now, false)
		}
	}
}

func (p *execProgress) end() {
	if p == nil {
		return
	}
	p.line(time.Now(), true)
}

// line writes one line, for a person at a terminal: what is done, how
// fast, and (when the total is known) how long is left.
func (p *execProgress) line(now time.Time, last bool) {
	el := now.Sub(p.start)
	rate := float64(p.done) / max(el.Seconds(), 1e-9)
	var b strings.Builder
	if last {
		b.WriteString("executor: finished: ")
	} else {
		b.WriteString("executor: ")
	}
	fmt.Fprintf(&b, "%d tasks done", p.done)
	if p.total > 0 {
		fmt.Fprintf(&b, " of %d (%.0f%%)", p.total, 100*float64(p.done)/float64(p.total))
	}
	if p.failed > 0 {
		fmt.Fprintf(&b, ", %d failed", p.failed)
	}
	fmt.Fprintf(&b, ", %s tasks/s, %d workers, %s elapsed", fmtRate(rate), p.x.liveWorkers(), el.Round(time.Millisecond))
	if p.total > p.done && !last && rate > 0 {
		left := time.Duration(float64(p.total-p.done) / rate * float64(time.Second))
		fmt.Fprintf(&b, ", about %s left", left.Round(time.Second))
	}
	b.WriteByte('\n')
	io.WriteString(p.w, b.String())
}

func fmtRate(r float64) string {
	switch {
	case r >= 1e6:
		return fmt.Sprintf("%.2fM", r/1e6)
	case r >= 1e4:
		return fmt.Sprintf("%.1fk", r/1e3)
	}
	return fmt.Sprintf("%.0f", r)
}

// serveExec is a worker: it runs the batches the client sends until the
// client says stop.
func serveExec[T, R any](d *Comm, root int, work func(context.Context, T) (R, error), tinfo, rinfo *typeInfo) error {
	s := &execServer{}
	runq := make(chan []byte, defaultExecSlots+1)
	runErr := make(chan error, 1)
	go func() {
		runErr <- runBatches(d, root, work, tinfo, rinfo, s, runq)
	}()
	stop := func(err error) error {
		close(runq)
		s.cancelAll()
		rerr := <-runErr
		if err == nil {
			err = rerr
		}
		return err
	}
	for {
		msg, st, err := Recv[[]byte](d, root, AnyTag)
		if err != nil {
			return stop(err)
		}
		switch st.Tag {
		case tagExecBatch:
			select {
			case runq <- msg:
			case err := <-runErr:
				// The runner could not send a result: the client is gone.
				close(runq)
				return err
			}
		case tagExecCancel:
			seq, k := binary.Uvarint(msg)
			idx, k2 := binary.Uvarint(msg[max(k, 0):])
			if k > 0 && k2 > 0 {
				s.cancel(seq, int(idx))
			}
		case tagExecStop:
			if err := stop(nil); err != nil {
				return err
			}
			return Send(d, binary.AppendUvarint(nil, 0), root, tagExecResult)
		default:
			return stop(d.fail("NewExecutor", ErrIntern, at("source", root, st.Tag), "unexpected message from the client"))
		}
	}
}

// execServer is what a worker's receiving loop shares with its runner:
// the task running, to cancel it, and cancellations of tasks that have
// not started.
type execServer struct {
	mu    sync.Mutex
	seq   uint64
	index int
	cur   *taskCtx
	early map[[2]uint64]bool // (seq, index) cancelled before it ran
}

// taskCtx is the context of one task on a worker: cancelled by the
// client, never by a deadline. It costs one allocation, where
// context.WithCancel costs several: empty tasks are counted in
// nanoseconds.
type taskCtx struct {
	mu   sync.Mutex
	done chan struct{} // made when asked for
	err  error
}

func (c *taskCtx) Deadline() (time.Time, bool) { return time.Time{}, false }
func (c *taskCtx) Value(any) any               { return nil }

func (c *taskCtx) Done() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done == nil {
		c.done = make(chan struct{})
		if c.err != nil {
			close(c.done)
		}
	}
	return c.done
}

func (c *taskCtx) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

func (c *taskCtx) cancel() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err == nil {
		c.err = context.Canceled
		if c.done != nil {
			close(c.done)
		}
	}
}

func (c *taskCtx) String() string { return "mpi executor task context" }

func (s *execServer) cancel(seq uint64, index int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cur != nil && s.seq == seq && s.index == index {
		s.cur.cancel()
		return
	}
	if seq < s.seq || (seq == s.seq && index < s.index) {
		return // done already
	}
	if s.early == nil {
		s.early = map[[2]uint64]bool{}
	}
	s.early[[2]uint64{seq, uint64(index)}] = true
}

func (s *execServer) cancelAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cur != nil {
		s.cur.cancel()
	}
}

// start records that task (seq, index) starts with ctx, and reports
// whether it was cancelled before.
func (s *execServer) start(seq uint64, index int, ctx *taskCtx) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq, s.index, s.cur = seq, index, ctx
	if len(s.early) == 0 {
		return false
	}
	k := [2]uint64{seq, uint64(index)}
	if s.early[k] {
		delete(s.early, k)
		return true
	}
	for c := range s.early {
		if c[0] < seq {
			delete(s.early, c) // for a task already done
		}
	}
	return false
}

func (s *execServer) end() {
	s.mu.Lock()
	s.cur = nil
	s.mu.Unlock()
}

// execFlushAfter is how long a worker keeps the results of a batch's
// finished tasks while the next task runs: a slow task must not hold back
// the results of the quick ones before it.
const execFlushAfter = 2 * time.Millisecond

// execResults is a worker's results of the current batch not yet sent.
// The runner adds to it; a timer sends what it holds if a task runs long.
type execResults struct {
	d       *Comm
	root    int
	mu      sync.Mutex
	seq     uint64
	from, n int       // the results held are of tasks from..from+n-1
	since   time.Time // when the first result held was started
	taskAt  time.Time // when the running task started; zero: none runs
	out     []byte    // room for the header, then n results
	timer   *time.Timer
	armed   bool
	err     error // a send failed
}

const execHeaderRoom = 4 * binary.MaxVarintLen64

// flush sends the results held. r.mu is held.
func (r *execResults) flush() {
	if r.n == 0 || r.err != nil {
		return
	}
	var h [execHeaderRoom]byte
	hb := binary.AppendUvarint(h[:0], r.seq)
	hb = binary.AppendUvarint(hb, uint64(time.Since(r.since)))
	hb = binary.AppendUvarint(hb, uint64(r.from))
	hb = binary.AppendUvarint(hb, uint64(r.n))
	msg := r.out[execHeaderRoom-len(hb):]
	copy(msg, hb)
	r.err = Send(r.d, msg, r.root, tagExecResult)
	r.from += r.n
	r.n = 0
	r.out = r.out[:execHeaderRoom]
}

// tick is the timer's: it sends the results held if the running task has
// run for execFlushAfter, or waits until it has.
func (r *execResults) tick() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.armed = false
	if r.n == 0 || r.taskAt.IsZero() {
		return
	}
	if left := execFlushAfter - time.Since(r.taskAt); left > 0 {
		r.armed = true
		r.timer.Reset(left)
		return
	}
	r.flush()
}

// runBatches runs the batches of runq in order and sends their results.
func runBatches[T, R any](d *Comm, root int, work func(context.Context, T) (R, error), tinfo, rinfo *typeInfo, s *execServer, runq chan []byte) error {
	rs := &execResults{d: d, root: root, out: make([]byte, execHeaderRoom, 4096)}
	rs.timer = time.AfterFunc(time.Hour, rs.tick)
	rs.timer.Stop()
	defer rs.timer.Stop()
	var item []byte
	bad := func() error { return d.fail("NewExecutor", ErrIntern, loc{}, "bad batch from the client") }
	for msg := range runq {
		seq, k := binary.Uvarint(msg)
		if k <= 0 {
			return bad()
		}
		msg = msg[k:]
		n, k := binary.Uvarint(msg)
		if k <= 0 || n > uint64(len(msg)) {
			return bad()
		}
		msg = msg[k:]
		rs.mu.Lock()
		rs.seq, rs.from, rs.n = seq, 0, 0
		rs.mu.Unlock()
		for i := 0; i < int(n); i++ {
			l, k := binary.Uvarint(msg)
			if k <= 0 || uint64(len(msg)-k) < l {
				return bad()
			}
			b := msg[k : k+int(l)]
			msg = msg[k+int(l):]
			var v T
			kind := byte(execOK)
			item = item[:0]
			now := time.Now()
			rs.mu.Lock()
			if rs.n == 0 {
				rs.since = now
			} else if !rs.armed {
				rs.armed = true
				rs.timer.Reset(execFlushAfter)
			}
			rs.taskAt = now
			rs.mu.Unlock()
			if err := decodeBytes(tinfo, b, &v, true); err != nil {
				kind, item = execBadResult, fmt.Appendf(item, "the task cannot be decoded: %v", err)
			} else {
				ctx := &taskCtx{}
				if s.start(seq, i, ctx) {
					ctx.cancel()
				}
				if ctx.Err() != nil {
					kind = execCancelled
				} else {
					r, werr, panicked := runTask(work, ctx, v)
					switch {
					case panicked:
						kind, item = execPanic, append(item, werr.Error()...)
					case werr != nil && ctx.Err() != nil && errors.Is(werr, ctx.Err()):
						kind = execCancelled
					case werr != nil:
						kind, item = execErr, append(item, werr.Error()...)
					default:
						var eerr error
						if item, eerr = appendValue(rinfo, item, &r); eerr != nil {
							kind, item = execBadResult, fmt.Appendf(item[:0], "%v", eerr)
						}
					}
				}
				s.end()
				ctx.cancel() // a goroutine the task left behind learns that it is over
			}
			rs.mu.Lock()
			rs.taskAt = time.Time{}
			rs.out = append(rs.out, kind)
			rs.out = binary.AppendUvarint(rs.out, uint64(len(item)))
			rs.out = append(rs.out, item...)
			rs.n++
			if i == int(n)-1 {
				rs.flush()
			}
			err := rs.err
			rs.mu.Unlock()
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// runTask runs one task, turning a panic into an error with the panic's
// value and a short stack.
func runTask[T, R any](work func(context.Context, T) (R, error), ctx context.Context, v T) (r R, err error, panicked bool) {
	defer func() {
		if p := recover(); p != nil {
			err, panicked = fmt.Errorf("%v\n%s", p, shortStack(debug.Stack())), true
		}
	}()
	r, err = work(ctx, v)
	return r, err, false
}

// shortStack keeps the frames of a panic's stack from the panicking
// function on, at most a few of them.
func shortStack(st []byte) string {
	lines := strings.Split(strings.TrimSpace(string(st)), "\n")
	// Skip the goroutine line, debug.Stack, this package's deferred
	// function and the runtime's panic frames (two lines each).
	i := 1
	for i+1 < len(lines) && (strings.HasPrefix(lines[i], "runtime/debug.") || strings.HasPrefix(lines[i], "panic(") || strings.HasPrefix(lines[i], "runtime.") || strings.Contains(lines[i], "mpi.runTask")) {
		i += 2
	}
	lines = lines[i:]
	if len(lines) > 10 {
		lines = lines[:10]
	}
	return strings.Join(lines, "\n")
}
