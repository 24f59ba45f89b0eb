package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/mpigo/mpi"
	"github.com/mpigo/mpi/internal/boot"
)

const benchUsage = `Usage: mpigo bench TEST [flags]
       mpigo bench report [flags]    (mpigo bench report -h for its flags)

Each size is measured -reps times (3 by default). The text output follows
the OSU micro-benchmarks: '#' comment lines, then "SIZE VALUE MIN MAX" per
message size, VALUE the median of the repetitions, MIN and MAX the extremes.
-format csv and -format json give the same numbers for programs; -plot
draws them.

Tests:
  latency    half the round trip of a blocking ping-pong between ranks 0 and 1 (us)
  sendrecv   ranks 0 and 1 exchange SIZE bytes both ways at once with
             Sendrecv, as a halo exchange does (us per exchange)
  bw         rank 0 sends windows of 64 non-blocking messages to rank 1,
             which acknowledges each window (MB/s, MB = 10^6 bytes)
  bibw       like bw, in both directions at once (MB/s, both directions counted)
  allreduce  Allreduce of SIZE bytes of float64 with Sum (us, slowest rank's average)
  bcast      Bcast of SIZE bytes from rank 0 (us)
             (both with -persistent: the persistent form, AllreduceInit or
             BcastInit once per repetition, then Start and Wait per iteration)
  barrier    Barrier (us; one line with size 0)
  partitioned
             rank 0 sends rank 1 a message of SIZE bytes (default 4 MiB)
             that 4 goroutines fill, a quarter each: partitioned, each
             goroutine readying its quarter with Pready as soon as it is
             written (PsendInit/PrecvInit once, Start and Wait per
             message), against one plain Send after the goroutines joined
             (us per message; the last column is the plain form's)
  allgather  Allgather of SIZE bytes from every rank (us)
  alltoall   Alltoall of SIZE bytes to every peer (us)
  reduce     Reduce of SIZE bytes of float64 with Sum to rank 0 (us)
  reduce_scatter  ReduceScatterBlock of a SIZE-byte float64 vector (us)
  scan       Scan of SIZE bytes of float64 with Sum (us)
  iallreduce, ibcast, iallgather, ialltoall, ibarrier
             the non-blocking forms, measured as OSU's non-blocking
             collective tests do: the pure time (start + wait), then a
             start, computation lasting that long, and wait; columns are
             overall, compute and pure times (us) and the overlap (%):
             100·(1 - (overall - compute)/pure), 100 when communication
             hides entirely behind computation; -yield makes the
             computation yield its processor now and then;
             the last two columns are the min and max of overall
  put_latency, get_latency, acc_latency, fop_latency, cas_latency
             one-sided, OSU's flush form: rank 0 locks rank 1's window once;
             each iteration is one Put, Get, Accumulate (Sum), FetchAndOp
             (Sum of an int64) or CompareAndSwap, then Flush (us)
  put_bw, get_bw
             one-sided: 64 Puts or Gets of SIZE bytes, then Flush (MB/s)
  executor   the task pool (mpi.NewExecutor): rank 0 maps tasks over the
             other ranks; SIZE is a task's duration in microseconds (a sleep;
             0: empty tasks; default 0,1000); tasks per second
  executor_util
             the same, as the workers' utilisation (%): the time the tasks
             took on the workers over the workers' time (default SIZE 1000)
  io         MPI-IO, IOR style, all of the following in turn: the ranks
             write (read) one shared file in -dir; MB/s of all ranks
             together, File.Sync inside the clock for writes, and the
             time per operation (us); the files are removed
  io_seg_write, io_seg_read
             segmented: each rank a contiguous block of SIZE bytes,
             WriteAtAll / ReadAtAll
  io_strided_write_coll, io_strided_read_coll
             strided: each rank owns every n-th piece of SIZE bytes (a
             vector filetype view), 16 pieces per rank per operation,
             collective (two-phase I/O)
  io_strided_write_ind, io_strided_read_ind
             the same pattern with independent WriteAt / ReadAt (data
             sieving)

APIs (-api; latency, sendrecv, bw and bibw):
  raw        c.Send(buf, SIZE, mpi.Byte, ...): the low-level byte path
  typed      mpi.Send of a []float64 of SIZE/8 elements (rounded up), received
             with mpi.RecvInto: plain data, no copy, no encoding
  set        typed, with bw and bibw posting each window's operations in an
             mpi.Requests set (mpi.PostIsend, mpi.PostIrecvInto, WaitAll),
             which reuses its requests instead of allocating one per message
  object     mpi.Send of a []Record (structs holding strings, encoded by the
             codec), about SIZE bytes encoded (at least one record), received
             with mpi.Recv: the cost of encoding, decoding and allocating

Flags:
`

const benchUsageTail = `
Examples:
  mpigo bench latency -transport shm
  mpigo bench bw -format csv > bw.csv
  mpigo bench latency -plot latency.svg -ref bench/ref/results-2026-11-22.txt
  mpigo bench report -transports inproc,tcp -html report.html
`

type benchConfig struct {
	errOut    io.Writer
	test      string
	n         int
	transport string
	sizes     []int
	sizeSpec  string // -sizes as given ("" for the test's default)
	iters     int
	api       string
	out       io.Writer
	reps      int    // repetitions of each size
	format    string // text, csv or json
	plotFile  string // -plot: write a picture of the results there
	progress  string // auto, lines or off
	refs      refList
	yield     bool   // non-blocking tests: the computation yields its processor
	dir       string // I/O tests: where the files go
	// persistent makes allreduce and bcast measure Start+Wait of a
	// persistent collective set up once per repetition.
	persistent bool
	child      bool // a rank process reporting to the mpigo bench that started it

	// Set while measuring, by rank 0 (extraVals) or every rank (lastIters).
	extraVals []float64    // further columns of the current measurement (non-blocking tests)
	lastIters atomic.Int64 // timed iterations of the current measurement
}

func bench(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "report" {
		return benchReport(args[1:], stdout, stderr)
	}
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		if len(args) > 0 && isHelp(args[0]) {
			// Asked for: the help goes to stdout (so `| less` shows it).
			fmt.Fprint(stdout, benchUsage)
			benchFlags(&benchConfig{}, stdout).PrintDefaults()
			fmt.Fprint(stdout, benchUsageTail)
			return 0
		}
		fmt.Fprint(stderr, benchUsage)
		benchFlags(&benchConfig{}, stderr).PrintDefaults()
		fmt.Fprint(stderr, benchUsageTail)
		return 2
	}
	cfg := &benchConfig{test: args[0], out: stdout, errOut: stderr}
	fs := benchFlags(cfg, stderr)
	fs.BoolVar(&cfg.child, "child", false, "(internal) a rank process of a shm or tcp benchmark, reporting to the mpigo bench that started it")
	if err := fs.Parse(args[1:]); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "mpigo bench: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	if err := cfg.check(); err != nil {
		fmt.Fprintf(stderr, "mpigo bench: %v\n", err)
		return 2
	}
	run := benchOne
	if cfg.test == "io" {
		run = benchIO
	}
	if err := run(cfg); err != nil {
		fmt.Fprintf(stderr, "mpigo bench: %v\n", err)
		return 1
	}
	return 0
}

// check validates the flags that do not need a test run and fills in the
// sizes.
func (b *benchConfig) check() error {
	spec := b.sizeSpec
	if spec == "" {
		spec = defaultSizes(b.test)
	}
	var err error
	if b.sizes, err = parseSizes(spec); err != nil {
		return fmt.Errorf("-sizes %q: %v", spec, err)
	}
	if b.reps < 1 {
		return fmt.Errorf("-reps %d: want at least 1 repetition", b.reps)
	}
	switch b.format {
	case "text", "csv", "json":
	default:
		return fmt.Errorf("-format %q: want text, csv or json", b.format)
	}
	switch b.progress {
	case "auto", "lines", "off":
	default:
		return fmt.Errorf("-progress %q: want auto, lines or off", b.progress)
	}
	if b.plotFile != "" {
		if _, err := plotFormat(b.plotFile); err != nil {
			return fmt.Errorf("-plot: %v", err)
		}
	}
	if len(b.refs) > 0 && b.plotFile == "" {
		return errors.New("-ref draws a reference series into the -plot picture: give -plot FILE.svg or FILE.png too")
	}
	return nil
}

func benchFlags(cfg *benchConfig, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, benchUsage); fs.PrintDefaults(); fmt.Fprint(stderr, benchUsageTail) }
	fs.IntVar(&cfg.n, "n", 2, "number of ranks")
	fs.StringVar(&cfg.transport, "transport", "inproc", "transport between ranks: inproc (goroutine ranks, single copy), shm or tcp (ranks are processes on this machine talking through shared memory or loopback TCP)")
	fs.StringVar(&cfg.sizeSpec, "sizes", "", "message sizes in bytes: a list (8,1024) or MIN:MAX (powers of two)")
	fs.IntVar(&cfg.iters, "iters", 0, "iterations per repetition of a size (0: chosen by size)")
	fs.IntVar(&cfg.reps, "reps", 3, "repetitions of each size: the value printed is their median; min and max are over them too")
	fs.StringVar(&cfg.format, "format", "text", "output: text (OSU style), csv or json")
	fs.StringVar(&cfg.progress, "progress", "auto", "progress on stderr: auto (one updating line when stderr is a terminal), lines (a line per size) or off")
	fs.BoolVar(&cfg.yield, "yield", false, "non-blocking tests: the computation yields its processor now and then (like calling MPI_Test in OSU's compute loop)")
	fs.StringVar(&cfg.plotFile, "plot", "", "also draw the results against message size (log axes) into this file: FILE.svg or FILE.png")
	fs.Var(&cfg.refs, "ref", "with -plot: a reference series read from `FILE` (OSU-style text of a C MPI, as bench/compare.sh and bench/ref/run.sh print, or mpigo bench csv/json); LABEL=FILE names it; may be repeated")
	fs.StringVar(&cfg.dir, "dir", os.TempDir(), "I/O tests: the directory of the benchmark's files (removed afterwards); a local disk, /dev/shm, a parallel file system")
	fs.BoolVar(&cfg.persistent, "persistent", false, "allreduce and bcast: the persistent form (AllreduceInit/BcastInit once, Start and Wait per iteration; the api column reads API+persistent)")
	fs.StringVar(&cfg.api, "api", "typed", "API to measure: raw (c.Send(buf, count, mpi.Byte, ...)), typed (mpi.Send of []float64), set (typed, windows in an mpi.Requests set) or object (mpi.Send of []Record, encoded)")
	return fs
}

func defaultSizes(test string) string {
	switch test {
	case "allreduce", "bcast":
		return "8:1048576"
	case "barrier", "ibarrier":
		return "0"
	case "executor":
		return "0,1000"
	case "partitioned":
		return "4194304"
	case "executor_util":
		return "1000"
	case "io", "io_seg_write", "io_seg_read": // io: each test its own (benchIO)
		return "65536,1048576,4194304"
	case "io_strided_write_coll", "io_strided_write_ind", "io_strided_read_coll", "io_strided_read_ind":
		return "4096,65536,1048576"
	case "put_latency", "get_latency", "acc_latency", "fop_latency", "cas_latency", "put_bw", "get_bw":
		s, _ := rmaSizes(test)
		return s
	case "allgather", "alltoall", "reduce", "reduce_scatter", "scan", "iallreduce", "ibcast", "iallgather", "ialltoall":
		return "8:1048576"
	}
	return "1:4194304"
}

func parseSizes(s string) ([]int, error) {
	if lo, hi, ok := strings.Cut(s, ":"); ok {
		a, err1 := strconv.Atoi(lo)
		b, err2 := strconv.Atoi(hi)
		if err1 != nil || err2 != nil || a < 0 || b < a {
			return nil, errors.New("want MIN:MAX with 0 <= MIN <= MAX")
		}
		var out []int
		if a == 0 {
			out = append(out, 0)
			a = 1
		}
		for v := a; v <= b; v *= 2 {
			out = append(out, v)
		}
		return out, nil
	}
	var out []int
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || v < 0 {
			return nil, fmt.Errorf("bad size %q", f)
		}
		out = append(out, v)
	}
	return out, nil
}

// iterations returns the warm-up and timed iterations for a size.
func (b *benchConfig) iterations(size int, small, large int) (warm, iters int) {
	iters = small
	if size > 64<<10 {
		iters = large
	}
	if size >= 1<<20 {
		iters = max(large/4, 10)
	}
	if b.iters > 0 {
		iters = b.iters
	}
	b.lastIters.Store(int64(iters))
	return max(iters/10, 1), iters
}

// benchBody measures one size once and returns rank 0's value.
type benchBody func(c *mpi.Comm, size int) (float64, error)

// prepare checks the configuration against the test and returns the
// function measuring it, with the run's description.
func (b *benchConfig) prepare() (benchBody, *benchRun, error) {
	if b.transport != "inproc" && b.transport != "tcp" && b.transport != "shm" {
		return nil, nil, fmt.Errorf("transport %q is not available in this build (available: inproc, shm, tcp)", b.transport)
	}
	if b.api != "typed" && b.api != "raw" && b.api != "set" && b.api != "object" {
		return nil, nil, fmt.Errorf("-api %q: want raw, typed, set or object", b.api)
	}
	var body benchBody
	quantity := "latency"
	switch b.test {
	case "latency":
		body = b.latency
	case "sendrecv":
		body = b.sendrecv
	case "bw":
		body, quantity = b.bw, "bandwidth"
	case "bibw":
		body, quantity = b.bibw, "bandwidth"
	case "allreduce":
		body = b.allreduce
	case "bcast":
		body = b.bcast
	case "barrier":
		body = b.barrier
	case "partitioned":
		body = b.partitioned
	case "allgather", "alltoall", "reduce", "reduce_scatter", "scan":
		body = b.moreColl
	case "iallreduce", "ibcast", "iallgather", "ialltoall", "ibarrier":
		body = b.nonblocking
	case "put_latency", "get_latency", "acc_latency", "fop_latency", "cas_latency":
		body = b.rma
	case "put_bw", "get_bw":
		body, quantity = b.rma, "bandwidth"
	case "executor":
		body, quantity = b.executor, "rate"
	case "executor_util":
		body, quantity = b.executor, "utilisation"
	case "io_seg_write", "io_seg_read", "io_strided_write_coll", "io_strided_write_ind", "io_strided_read_coll", "io_strided_read_ind":
		body, quantity = b.io, "bandwidth"
	default:
		return nil, nil, fmt.Errorf("unknown test %q (want %s)", b.test, strings.Join(benchTests, ", "))
	}
	if b.test == "ibarrier" {
		b.sizes = []int{0}
	}
	if b.persistent && b.test != "allreduce" && b.test != "bcast" {
		return nil, nil, fmt.Errorf("-persistent applies to allreduce and bcast, not %s", b.test)
	}
	if b.persistent && b.api != "typed" && b.api != "raw" {
		return nil, nil, fmt.Errorf("-persistent: -api %s has no persistent form (want typed or raw)", b.api)
	}
	if b.n < 1 {
		return nil, nil, fmt.Errorf("-n %d: want at least 1 rank", b.n)
	}
	if _, oneSided := rmaTests[b.test]; b.n < 2 && (strings.HasPrefix(b.test, "executor") || b.test == "latency" || b.test == "sendrecv" || b.test == "partitioned" || b.test == "bw" || b.test == "bibw" || oneSided) {
		return nil, nil, fmt.Errorf("%s needs at least 2 ranks", b.test)
	}
	r := &benchRun{
		Test: b.test, Quantity: quantity, Unit: "us", Transport: b.transport, Ranks: b.n, API: b.api,
		Repetitions: b.reps, Mpigo: mpi.Version, Go: runtime.Version(), GOMAXPROCS: runtime.GOMAXPROCS(0),
		CPUs: runtime.NumCPU(), Date: time.Now().UTC().Format(time.RFC3339),
	}
	if b.persistent {
		r.API += "+persistent"
	}
	switch quantity {
	case "bandwidth":
		r.Unit = "MB/s"
	case "rate":
		r.Unit = "tasks/s"
	case "utilisation":
		r.Unit = "%"
	}
	return body, r, nil
}

// benchTests lists every test, in the order of the help.
var benchTests = []string{"latency", "sendrecv", "bw", "bibw", "allreduce", "bcast", "barrier", "partitioned", "allgather", "alltoall", "reduce", "reduce_scatter", "scan", "iallreduce", "ibcast", "iallgather", "ialltoall", "ibarrier", "put_latency", "get_latency", "acc_latency", "fop_latency", "cas_latency", "put_bw", "get_bw", "executor", "executor_util", "io", "io_seg_write", "io_seg_read", "io_strided_write_coll", "io_strided_write_ind", "io_strided_read_coll", "io_strided_read_ind"}

// benchEvents receives what rank 0 measures, as it goes.
type benchEvents interface {
	start(index, size int) // measuring sizes[index] begins
	point(p benchPoint)    // its result
}

// measure runs every size b.reps times on this rank; rank 0 reports to ev.
func (b *benchConfig) measure(world *mpi.Comm, body benchBody, ev benchEvents) error {
	root := world.Rank() == 0
	vals := make([]float64, 0, b.reps)
	for i, size := range b.sizes {
		if root {
			ev.start(i, size)
		}
		vals = vals[:0]
		var extras [][]float64
		for range b.reps {
			if root {
				b.extraVals = nil // only rank 0 touches it: goroutine ranks share b
			}
			v, err := body(world, size)
			if err != nil {
				return fmt.Errorf("size %d: %w", size, err)
			}
			if root {
				vals = append(vals, v)
				if b.extraVals != nil {
					extras = append(extras, b.extraVals)
				}
			}
		}
		if root {
			ev.point(summarize(b.test, size, int(b.lastIters.Load()), vals, extras))
		}
	}
	return nil
}

// runBench measures b and reports to ev, with goroutine ranks or, for
// the shm and tcp transports, ranks as processes started from this
// executable (which then report through their output).
func (b *benchConfig) runBench(body benchBody, ev benchEvents) error {
	if b.transport == "inproc" {
		return mpi.Run(b.n, func(world *mpi.Comm) error { return b.measure(world, body, ev) })
	}
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	dec := &childDecoder{ev: ev, other: b.errOut}
	code := launch(&runConfig{ranksPerProc: 1, transport: b.transport, groups: []runGroup{{n: b.n, prog: exe, args: b.childArgs()}}}, "", dec, b.errOut)
	dec.flush()
	if dec.err != nil {
		return dec.err
	}
	if code != 0 {
		return fmt.Errorf("the benchmark job failed (status %d)", code)
	}
	return nil
}

// childArgs is the command line of a rank process measuring b.
func (b *benchConfig) childArgs() []string {
	sizes := make([]string, len(b.sizes))
	for i, s := range b.sizes {
		sizes[i] = strconv.Itoa(s)
	}
	args := []string{"bench", b.test, "-child", "-n", strconv.Itoa(b.n), "-transport", b.transport, "-api", b.api,
		"-sizes", strings.Join(sizes, ","), "-iters", strconv.Itoa(b.iters), "-reps", strconv.Itoa(b.reps), "-dir", b.dir}
	if b.yield {
		args = append(args, "-yield")
	}
	if b.persistent {
		args = append(args, "-persistent")
	}
	return args
}

// benchOne runs one test as "mpigo bench TEST" does.
func benchOne(b *benchConfig) error {
	body, run, err := b.prepare()
	if err != nil {
		return err
	}
	if _, launched := os.LookupEnv(boot.EnvRank); launched {
		// A rank process. Started by a shm or tcp benchmark (-child): rank
		// 0 reports to the mpigo bench that started the job, through its
		// standard output. Started by a person with mpigo run: rank 0
		// prints the results itself.
		mpi.Main(func(world *mpi.Comm) error {
			if b.child {
				return b.measure(world, body, &childEncoder{w: os.Stdout})
			}
			out := &benchOutput{cfg: b, run: run, prog: newProgress(b.errOut, "off")}
			run.Transport, run.Ranks = os.Getenv("MPIGO_TRANSPORT"), world.Size()
			if run.Transport == "" {
				run.Transport = "launched"
			}
			if err := b.measure(world, body, out); err != nil || world.Rank() != 0 {
				return err
			}
			return b.finish(out)
		})
		return nil // not reached: Main exits
	}
	if w := coresWarning(b.n, b.transport); w != "" {
		fmt.Fprintln(b.errOut, w)
	}
	prog := newProgress(b.errOut, b.progress)
	out := &benchOutput{cfg: b, run: run, prog: prog}
	err = b.runBench(body, out)
	prog.done()
	if err != nil {
		return err
	}
	return b.finish(out)
}

// finish writes what is written once everything is measured: csv or
// json, and the picture.
func (b *benchConfig) finish(out *benchOutput) error {
	if err := out.finish(); err != nil {
		return err
	}
	if b.plotFile == "" {
		return nil
	}
	refs, err := b.refs.load()
	if err != nil {
		return err
	}
	if err := writePlot(b.plotFile, []*benchRun{out.run}, refs); err != nil {
		return err
	}
	fmt.Fprintf(b.errOut, "mpigo bench: wrote %s\n", b.plotFile)
	return nil
}

// Record is the element of -api object messages: a struct holding
// strings, which the typed layer encodes.
type Record struct {
	ID     int64
	Name   string
	Email  string
	Tags   []string
	Score  float64
	Pos    [3]float32
	Active bool
}

// recordSize is about the encoded size of one Record of makeRecords.
const recordSize = 72

func makeRecords(size int) []Record {
	rs := make([]Record, max(size/recordSize, 1))
	for i := range rs {
		rs[i] = Record{ID: int64(i), Name: fmt.Sprintf("record-%07d", i), Email: fmt.Sprintf("user%07d@example.org", i),
			Tags: []string{"alpha", "beta"}, Score: float64(i), Pos: [3]float32{1, 2, 3}, Active: i%2 == 0}
	}
	return rs
}

// messages sends and receives the benchmark's messages of one size
// through one API. A receive slot is a buffer of its own, as osu_bw has
// one per message of a window.
type messages struct {
	api     string
	bytes   [][]byte    // raw: slot buffers
	floats  [][]float64 // typed: slot buffers
	records []Record    // object: the value sent
}

func (b *benchConfig) messages(size, slots int) *messages {
	m := &messages{api: b.api}
	if m.api == "set" { // typed messages; bandwidth posts them in a set
		m.api = "typed"
	}
	for range slots {
		switch m.api {
		case "raw":
			m.bytes = append(m.bytes, make([]byte, size))
		case "typed":
			m.floats = append(m.floats, make([]float64, (size+7)/8))
		}
	}
	if m.api == "object" {
		m.records = makeRecords(size)
	}
	return m
}

func (m *messages) send(c *mpi.Comm, slot, dest, tag int) error {
	switch m.api {
	case "raw":
		return c.Send(m.bytes[slot], len(m.bytes[slot]), mpi.Byte, dest, tag)
	case "typed":
		return mpi.Send(c, m.floats[slot], dest, tag)
	}
	return mpi.Send(c, m.records, dest, tag)
}

func (m *messages) recv(c *mpi.Comm, slot, src, tag int) error {
	switch m.api {
	case "raw":
		_, err := c.Recv(m.bytes[slot], len(m.bytes[slot]), mpi.Byte, src, tag)
		return err
	case "typed":
		_, err := mpi.RecvInto(c, m.floats[slot], src, tag)
		return err
	}
	v, _, err := mpi.Recv[[]Record](c, src, tag)
	if err == nil && len(v) != len(m.records) {
		err = fmt.Errorf("received %d records, want %d", len(v), len(m.records))
	}
	return err
}

func (m *messages) isend(c *mpi.Comm, slot, dest, tag int) (mpi.Waiter, error) {
	switch m.api {
	case "raw":
		return c.Isend(m.bytes[slot], len(m.bytes[slot]), mpi.Byte, dest, tag)
	case "typed":
		return mpi.Isend(c, m.floats[slot], dest, tag)
	}
	return mpi.Isend(c, m.records, dest, tag)
}

func (m *messages) irecv(c *mpi.Comm, slot, src, tag int) (mpi.Waiter, error) {
	switch m.api {
	case "raw":
		return c.Irecv(m.bytes[slot], len(m.bytes[slot]), mpi.Byte, src, tag)
	case "typed":
		return mpi.IrecvInto(c, m.floats[slot], src, tag)
	}
	return mpi.Irecv[[]Record](c, src, tag)
}

func (b *benchConfig) latency(c *mpi.Comm, size int) (float64, error) {
	m := b.messages(size, 1)
	warm, iters := b.iterations(size, 10000, 1000)
	if err := mpi.Barrier(c); err != nil {
		return 0, err
	}
	var start time.Time
	for i := 0; i < warm+iters; i++ {
		if i == warm {
			start = time.Now()
		}
		switch c.Rank() {
		case 0:
			if err := m.send(c, 0, 1, 1); err != nil {
				return 0, err
			}
			if err := m.recv(c, 0, 1, 1); err != nil {
				return 0, err
			}
		case 1:
			if err := m.recv(c, 0, 0, 1); err != nil {
				return 0, err
			}
			if err := m.send(c, 0, 0, 1); err != nil {
				return 0, err
			}
		}
	}
	el := time.Since(start)
	return float64(el.Nanoseconds()) / 1e3 / float64(iters) / 2, nil
}

// sendrecv times exchanges between ranks 0 and 1: each sends SIZE bytes
// to the other and receives the other's in one Sendrecv.
func (b *benchConfig) sendrecv(c *mpi.Comm, size int) (float64, error) {
	m := b.messages(size, 2) // slot 0 goes out, slot 1 comes in
	warm, iters := b.iterations(size, 10000, 1000)
	if err := mpi.Barrier(c); err != nil {
		return 0, err
	}
	me := c.Rank()
	var start time.Time
	for i := 0; i < warm+iters; i++ {
		if i == warm {
			start = time.Now()
		}
		if me > 1 {
			continue
		}
		if err := m.sendrecv(c, 1-me, 1); err != nil {
			return 0, err
		}
	}
	el := time.Since(start)
	return float64(el.Nanoseconds()) / 1e3 / float64(iters), nil
}

// sendrecv sends slot 0 to peer and receives slot 1 from it at once.
func (m *messages) sendrecv(c *mpi.Comm, peer, tag int) error {
	var err error
	switch m.api {
	case "raw":
		_, err = c.Sendrecv(m.bytes[0], len(m.bytes[0]), mpi.Byte, peer, tag, m.bytes[1], len(m.bytes[1]), mpi.Byte, peer, tag)
	case "typed":
		_, err = mpi.SendrecvInto(c, m.floats[0], peer, tag, m.floats[1], peer, tag)
	default:
		var v []Record
		v, _, err = mpi.Sendrecv[[]Record](c, m.records, peer, tag, peer, tag)
		if err == nil && len(v) != len(m.records) {
			err = fmt.Errorf("received %d records, want %d", len(v), len(m.records))
		}
	}
	return err
}

const window = 64

func (b *benchConfig) bw(c *mpi.Comm, size int) (float64, error) {
	return b.bandwidth(c, size, false)
}

func (b *benchConfig) bibw(c *mpi.Comm, size int) (float64, error) {
	return b.bandwidth(c, size, true)
}

// window posts a window of receives from peer (if recv) and of sends to
// it (if send), keeping their requests in reqs, and waits for them all.
func (m *messages) window(reqs []mpi.Waiter, c *mpi.Comm, peer int, recv, send bool) ([]mpi.Waiter, error) {
	if recv {
		for w := 0; w < window; w++ {
			r, err := m.irecv(c, w, peer, 2)
			if err != nil {
				return reqs, err
			}
			reqs = append(reqs, r)
		}
	}
	if send {
		for w := 0; w < window; w++ {
			r, err := m.isend(c, window, peer, 2)
			if err != nil {
				return reqs, err
			}
			reqs = append(reqs, r)
		}
	}
	return reqs, mpi.WaitAll(reqs...)
}

// windowSet is window for -api set: the typed operations, posted in rs.
func (m *messages) windowSet(rs *mpi.Requests, c *mpi.Comm, peer int, recv, send bool) error {
	if recv {
		for w := 0; w < window; w++ {
			if err := mpi.PostIrecvInto(rs, c, m.floats[w], peer, 2); err != nil {
				return err
			}
		}
	}
	if send {
		for w := 0; w < window; w++ {
			if err := mpi.PostIsend(rs, c, m.floats[window], peer, 2); err != nil {
				return err
			}
		}
	}
	return rs.WaitAll()
}

func (b *benchConfig) bandwidth(c *mpi.Comm, size int, both bool) (float64, error) {
	m := b.messages(size, window+1) // slot window sends; the others receive, one buffer per message as osu_bw
	ack := make([]byte, 4)
	warm, iters := b.iterations(size, 100, 20)
	reqs := make([]mpi.Waiter, 0, 2*window)
	var rs mpi.Requests // -api set
	if err := mpi.Barrier(c); err != nil {
		return 0, err
	}
	me := c.Rank()
	var start time.Time
	for i := 0; i < warm+iters; i++ {
		if i == warm {
			start = time.Now()
		}
		if me > 1 {
			continue
		}
		peer := 1 - me
		var err error
		if b.api == "set" {
			err = m.windowSet(&rs, c, peer, me == 1 || both, me == 0 || both)
		} else {
			reqs, err = m.window(reqs[:0], c, peer, me == 1 || both, me == 0 || both)
		}
		if err != nil {
			return 0, err
		}
		if me == 0 {
			if _, err := c.Recv(ack, len(ack), mpi.Byte, 1, 3); err != nil {
				return 0, err
			}
		} else {
			if err := c.Send(ack, len(ack), mpi.Byte, 0, 3); err != nil {
				return 0, err
			}
		}
	}
	el := time.Since(start).Seconds()
	bytes := float64(size) * window * float64(iters)
	if both {
		bytes *= 2
	}
	if err := mpi.Barrier(c); err != nil {
		return 0, err
	}
	return bytes / el / 1e6, nil
}

// collective times body and returns the slowest rank's average in us.
func (b *benchConfig) collective(c *mpi.Comm, size int, body func() error) (float64, error) {
	warm, iters := b.iterations(size, 1000, 100)
	if err := mpi.Barrier(c); err != nil {
		return 0, err
	}
	var start time.Time
	for i := 0; i < warm+iters; i++ {
		if i == warm {
			start = time.Now()
		}
		if err := body(); err != nil {
			return 0, err
		}
	}
	avg := float64(time.Since(start).Nanoseconds()) / 1e3 / float64(iters)
	return mpi.Allreduce(c, avg, mpi.Max[float64]())
}

func (b *benchConfig) allreduce(c *mpi.Comm, size int) (float64, error) {
	if b.persistent {
		return b.persistentColl(c, size)
	}
	body, _ := b.collBody(c, "allreduce", size)
	return b.collective(c, size, body)
}

func (b *benchConfig) bcast(c *mpi.Comm, size int) (float64, error) {
	if b.persistent {
		return b.persistentColl(c, size)
	}
	body, _ := b.collBody(c, "bcast", size)
	return b.collective(c, size, body)
}

// persistentColl measures the persistent form of allreduce or bcast on
// the buffers the plain form uses: the request is made before the timing
// (as an iterative solver makes it once), each iteration starts and waits
// for it, and it is freed after.
func (b *benchConfig) persistentColl(c *mpi.Comm, size int) (float64, error) {
	elems := max(size/8, 1)
	raw := b.api == "raw"
	var r *mpi.Request
	var err error
	switch {
	case b.test == "allreduce" && raw:
		v, out := make([]float64, elems), make([]float64, elems)
		r, err = c.AllreduceInit(mpi.AsBytes(v), mpi.AsBytes(out), elems, mpi.Float64, mpi.OpSum, nil)
	case b.test == "allreduce":
		v, out := make([]float64, elems), make([]float64, elems)
		r, err = mpi.AllreduceInit(c, v, out, mpi.Sum[float64]())
	case raw:
		v := make([]byte, size)
		r, err = c.BcastInit(v, size, mpi.Byte, 0, nil)
	default:
		r, err = mpi.BcastInit(c, make([]byte, size), 0)
	}
	if err != nil {
		return 0, err
	}
	v, err := b.collective(c, size, func() error {
		if err := r.Start(); err != nil {
			return err
		}
		_, err := r.Wait()
		return err
	})
	if ferr := r.Free(); err == nil {
		err = ferr
	}
	return v, err
}

func (b *benchConfig) barrier(c *mpi.Comm, size int) (float64, error) {
	return b.collective(c, size, func() error { return mpi.Barrier(c) })
}

// moreColl measures allgather, alltoall, reduce, reduce_scatter and scan,
// through the low-level layer with -api raw and the typed one otherwise
// (the forms that write into the caller's slices where there is one:
// BcastInto, AllgatherInto, AlltoallInto, AllreduceSliceInto).
func (b *benchConfig) moreColl(c *mpi.Comm, size int) (float64, error) {
	body, err := b.collBody(c, b.test, size)
	if err != nil {
		return 0, err
	}
	return b.collective(c, size, body)
}

// collBody returns one call of collective test at size.
func (b *benchConfig) collBody(c *mpi.Comm, test string, size int) (func() error, error) {
	p := c.Size()
	elems := max(size/8, 1)
	raw := b.api == "raw"
	switch test {
	case "allreduce":
		v, out := make([]float64, elems), make([]float64, elems)
		if raw {
			return func() error {
				return c.Allreduce(mpi.AsBytes(v), mpi.AsBytes(out), elems, mpi.Float64, mpi.OpSum)
			}, nil
		}
		return func() error { return mpi.AllreduceSliceInto(c, v, out, mpi.Sum[float64]()) }, nil
	case "bcast":
		v := make([]byte, size)
		if raw {
			return func() error { return c.Bcast(v, size, mpi.Byte, 0) }, nil
		}
		return func() error { return mpi.BcastInto(c, v, 0) }, nil
	case "barrier":
		return func() error { return mpi.Barrier(c) }, nil
	case "allgather":
		v, out := make([]byte, size), make([]byte, size*p)
		if raw {
			return func() error { return c.Allgather(v, size, mpi.Byte, out, size, mpi.Byte) }, nil
		}
		return func() error { return mpi.AllgatherInto(c, v, out) }, nil
	case "alltoall":
		send, recv := make([]byte, size*p), make([]byte, size*p)
		if raw {
			return func() error { return c.Alltoall(send, size, mpi.Byte, recv, size, mpi.Byte) }, nil
		}
		return func() error { return mpi.AlltoallInto(c, send, recv) }, nil
	case "reduce":
		v, out := make([]float64, elems), make([]float64, elems)
		if raw {
			return func() error {
				return c.Reduce(mpi.AsBytes(v), mpi.AsBytes(out), elems, mpi.Float64, mpi.OpSum, 0)
			}, nil
		}
		return func() error { return mpi.ReduceSliceInto(c, v, out, mpi.Sum[float64](), 0) }, nil
	case "reduce_scatter":
		blk := max(elems/p, 1)
		v, out := make([]float64, blk*p), make([]float64, blk)
		if raw {
			return func() error {
				return c.ReduceScatterBlock(mpi.AsBytes(v), mpi.AsBytes(out), blk, mpi.Float64, mpi.OpSum)
			}, nil
		}
		return func() error { return mpi.ReduceScatterBlockInto(c, v, out, mpi.Sum[float64]()) }, nil
	case "scan":
		v, out := make([]float64, elems), make([]float64, elems)
		if raw {
			return func() error { return c.Scan(mpi.AsBytes(v), mpi.AsBytes(out), elems, mpi.Float64, mpi.OpSum) }, nil
		}
		return func() error { return mpi.ScanSliceInto(c, v, out, mpi.Sum[float64]()) }, nil
	}
	return nil, fmt.Errorf("no collective %q", test)
}

// istart returns a function starting one non-blocking collective (low-level layer).
func (b *benchConfig) istart(c *mpi.Comm, test string, size int) (func() (*mpi.Request, error), error) {
	p := c.Size()
	elems := max(size/8, 1)
	switch test {
	case "iallreduce":
		v, out := make([]float64, elems), make([]float64, elems)
		return func() (*mpi.Request, error) {
			return c.Iallreduce(mpi.AsBytes(v), mpi.AsBytes(out), elems, mpi.Float64, mpi.OpSum)
		}, nil
	case "ibcast":
		v := make([]byte, size)
		return func() (*mpi.Request, error) { return c.Ibcast(v, size, mpi.Byte, 0) }, nil
	case "iallgather":
		v, out := make([]byte, size), make([]byte, size*p)
		return func() (*mpi.Request, error) { return c.Iallgather(v, size, mpi.Byte, out, size, mpi.Byte) }, nil
	case "ialltoall":
		send, recv := make([]byte, size*p), make([]byte, size*p)
		return func() (*mpi.Request, error) { return c.Ialltoall(send, size, mpi.Byte, recv, size, mpi.Byte) }, nil
	case "ibarrier":
		return c.Ibarrier, nil
	}
	return nil, fmt.Errorf("no non-blocking collective %q", test)
}

// compute busy-works for about d; with yield it gives its processor to
// other goroutines (the collectives' progress) between slices of work, as
// OSU's tests can call MPI_Test inside the computation.
func compute(d time.Duration, yield bool) {
	end := time.Now().Add(d)
	x := 1.0
	for time.Now().Before(end) {
		for i := 0; i < 100; i++ {
			x = x*1.0000001 + 1e-9
		}
		if yield {
			runtime.Gosched()
		}
	}
	sink.Store(math.Float64bits(x)) // keeps the loop from being optimised away
}

var sink atomic.Uint64

// nonblocking measures a non-blocking collective as OSU's osu_i* tests do
// and returns the overall time; the other columns go to b.extra.
func (b *benchConfig) nonblocking(c *mpi.Comm, size int) (float64, error) {
	start, err := b.istart(c, b.test, size)
	if err != nil {
		return 0, err
	}
	warm, iters := b.iterations(size, 200, 50)
	run := func(work time.Duration) (float64, error) {
		if err := mpi.Barrier(c); err != nil {
			return 0, err
		}
		var t0 time.Time
		for i := 0; i < warm+iters; i++ {
			if i == warm {
				t0 = time.Now()
			}
			r, err := start()
			if err != nil {
				return 0, err
			}
			if work > 0 {
				compute(work, b.yield)
			}
			if _, err := r.Wait(); err != nil {
				return 0, err
			}
		}
		avg := float64(time.Since(t0).Nanoseconds()) / 1e3 / float64(iters)
		return mpi.Allreduce(c, avg, mpi.Max[float64]())
	}
	pure, err := run(0)
	if err != nil {
		return 0, err
	}
	work := time.Duration(pure * 1e3)
	t0 := time.Now()
	for i := 0; i < 20; i++ {
		compute(work, b.yield)
	}
	comp := float64(time.Since(t0).Nanoseconds()) / 1e3 / 20
	overall, err := run(work)
	if err != nil {
		return 0, err
	}
	overlap := 100 * (1 - (overall-comp)/pure)
	overlap = max(0, min(100, overlap))
	if c.Rank() == 0 { // only rank 0 reports; other goroutine ranks share b
		b.extraVals = []float64{comp, pure, overlap}
	}
	return overall, nil
}
