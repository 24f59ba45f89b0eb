package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/mpigo/mpi"
	"github.com/mpigo/mpi/internal/boot"
)

const benchUsage = `Usage: mpigo bench TEST [flags]

Tests (output follows the OSU micro-benchmarks: '#' comment lines, then
"SIZE VALUE" per message size):
  latency    half the round trip of a blocking ping-pong between ranks 0 and 1 (us)
  bw         rank 0 sends windows of 64 non-blocking messages to rank 1,
             which acknowledges each window (MB/s, MB = 10^6 bytes)
  bibw       like bw, in both directions at once (MB/s, both directions counted)
  allreduce  Allreduce of SIZE bytes of float64 with Sum (us, slowest rank's average)
  bcast      Bcast of SIZE bytes from rank 0 (us)
  barrier    Barrier (us; one line with size 0)

APIs (-api; latency, bw and bibw):
  raw        c.Send(buf, SIZE, mpi.Byte, ...): the low-level byte path
  typed      mpi.Send of a []float64 of SIZE/8 elements (rounded up), received
             with mpi.RecvInto: plain data, no copy, no encoding
  object     mpi.Send of a []Record (structs holding strings, encoded by the
             codec), about SIZE bytes encoded (at least one record), received
             with mpi.Recv: the cost of encoding, decoding and allocating

Flags:
`

type benchConfig struct {
	args      []string // the command line, to start ranks as processes
	errOut    io.Writer
	test      string
	n         int
	transport string
	sizes     []int
	iters     int
	api       string
	out       io.Writer
}

func bench(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		fmt.Fprint(stderr, benchUsage)
		benchFlags(&benchConfig{}, stderr).PrintDefaults()
		return 2
	}
	cfg := &benchConfig{test: args[0], out: stdout, errOut: stderr, args: append([]string{"bench"}, args...)}
	fs := benchFlags(cfg, stderr)
	sizes := fs.Lookup("sizes")
	if err := fs.Parse(args[1:]); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "mpigo bench: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	var err error
	spec := sizes.Value.String()
	if spec == "" {
		spec = defaultSizes(cfg.test)
	}
	if cfg.sizes, err = parseSizes(spec); err != nil {
		fmt.Fprintf(stderr, "mpigo bench: -sizes %q: %v\n", spec, err)
		return 2
	}
	if err := runBench(cfg); err != nil {
		fmt.Fprintf(stderr, "mpigo bench: %v\n", err)
		return 1
	}
	return 0
}

func benchFlags(cfg *benchConfig, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, benchUsage); fs.PrintDefaults() }
	fs.IntVar(&cfg.n, "n", 2, "number of ranks")
	fs.StringVar(&cfg.transport, "transport", "inproc", "transport between ranks: inproc (goroutine ranks, single copy) or tcp (ranks are processes on this machine)")
	fs.String("sizes", "", "message sizes in bytes: a list (8,1024) or MIN:MAX (powers of two)")
	fs.IntVar(&cfg.iters, "iters", 0, "iterations per size (0: chosen by size)")
	fs.StringVar(&cfg.api, "api", "typed", "API to measure: raw (c.Send(buf, count, mpi.Byte, ...)), typed (mpi.Send of []float64) or object (mpi.Send of []Record, encoded)")
	return fs
}

func defaultSizes(test string) string {
	switch test {
	case "allreduce", "bcast":
		return "8:1048576"
	case "barrier":
		return "0"
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
	return max(iters/10, 1), iters
}

func runBench(b *benchConfig) error {
	if b.transport != "inproc" && b.transport != "tcp" {
		return fmt.Errorf("transport %q is not available in this build (available: inproc, tcp)", b.transport)
	}
	if b.api != "typed" && b.api != "raw" && b.api != "object" {
		return fmt.Errorf("-api %q: want raw, typed or object", b.api)
	}
	var body func(c *mpi.Comm, size int) (float64, error)
	unit := "Latency (us)"
	switch b.test {
	case "latency":
		body = b.latency
	case "bw":
		body, unit = b.bw, "Bandwidth (MB/s)"
	case "bibw":
		body, unit = b.bibw, "Bandwidth (MB/s)"
	case "allreduce":
		body = b.allreduce
	case "bcast":
		body = b.bcast
	case "barrier":
		body = b.barrier
	default:
		return fmt.Errorf("unknown test %q (want latency, bw, bibw, allreduce, bcast or barrier)", b.test)
	}
	if b.n < 2 && (b.test == "latency" || b.test == "bw" || b.test == "bibw") {
		return fmt.Errorf("%s needs at least 2 ranks", b.test)
	}
	header := func() {
		fmt.Fprintf(b.out, "# mpigo bench %s\n", b.test)
		fmt.Fprintf(b.out, "# mpigo %s, transport %s, %d ranks, api %s, %s, GOMAXPROCS %d\n", mpi.Version, b.transport, b.n, b.api, runtime.Version(), runtime.GOMAXPROCS(0))
		fmt.Fprintf(b.out, "# %-10s %s\n", "Size", unit)
	}
	rank := func(world *mpi.Comm) error {
		for _, size := range b.sizes {
			v, err := body(world, size)
			if err != nil {
				return fmt.Errorf("size %d: %w", size, err)
			}
			if world.Rank() == 0 {
				fmt.Fprintf(b.out, "%-12d %.2f\n", size, v)
			}
		}
		return nil
	}
	if b.transport == "tcp" {
		// Ranks are processes on this machine, started as mpigo run would.
		if _, launched := os.LookupEnv(boot.EnvRank); launched {
			mpi.Main(func(world *mpi.Comm) error {
				if world.Rank() == 0 {
					header()
				}
				return rank(world)
			})
		}
		exe, err := os.Executable()
		if err != nil {
			return err
		}
		if code := launch(&runConfig{ranksPerProc: 1, groups: []runGroup{{n: b.n, prog: exe, args: b.args}}}, b.out, b.errOut); code != 0 {
			return fmt.Errorf("the benchmark job failed (status %d)", code)
		}
		return nil
	}
	header()
	return mpi.Run(b.n, rank)
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
	for range slots {
		switch b.api {
		case "raw":
			m.bytes = append(m.bytes, make([]byte, size))
		case "typed":
			m.floats = append(m.floats, make([]float64, (size+7)/8))
		}
	}
	if b.api == "object" {
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

const window = 64

func (b *benchConfig) bw(c *mpi.Comm, size int) (float64, error) {
	return b.bandwidth(c, size, false)
}

func (b *benchConfig) bibw(c *mpi.Comm, size int) (float64, error) {
	return b.bandwidth(c, size, true)
}

func (b *benchConfig) bandwidth(c *mpi.Comm, size int, both bool) (float64, error) {
	m := b.messages(size, window+1) // slot window sends; the others receive, one buffer per message as osu_bw
	ack := make([]byte, 4)
	warm, iters := b.iterations(size, 100, 20)
	reqs := make([]mpi.Waiter, 0, 2*window)
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
		reqs = reqs[:0]
		if me == 1 || both {
			for w := 0; w < window; w++ {
				r, err := m.irecv(c, w, peer, 2)
				if err != nil {
					return 0, err
				}
				reqs = append(reqs, r)
			}
		}
		if me == 0 || both {
			for w := 0; w < window; w++ {
				r, err := m.isend(c, window, peer, 2)
				if err != nil {
					return 0, err
				}
				reqs = append(reqs, r)
			}
		}
		if err := mpi.WaitAll(reqs...); err != nil {
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
	v := make([]float64, max(size/8, 1))
	out := make([]float64, len(v))
	return b.collective(c, size, func() error {
		return mpi.AllreduceSliceInto(c, v, out, mpi.Sum[float64]())
	})
}

func (b *benchConfig) bcast(c *mpi.Comm, size int) (float64, error) {
	v := make([]byte, size)
	return b.collective(c, size, func() error {
		_, err := mpi.Bcast(c, v, 0)
		return err
	})
}

func (b *benchConfig) barrier(c *mpi.Comm, size int) (float64, error) {
	return b.collective(c, size, func() error { return mpi.Barrier(c) })
}
