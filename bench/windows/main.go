// Command windows times each window of the 8-byte message-rate test
// (`mpigo bench bw`: rank 0 sends a window of 64 non-blocking 8-byte
// messages, rank 1 posts a receive per message into a buffer of its own
// and acknowledges the window) and prints how the windows' times are
// spread, not only their mean: the median window, the 90th and 99th
// percentiles, and the share of the windows, and of the time, that the
// windows over twice the median take. bench/ref/windows.c is the same
// test for Open MPI; bench/windows.sh runs the two side by side.
//
//	mpigo run -n 2 ./bench/windows [-iters N] [-set]
//
// With -set, each window's operations are posted in an mpi.Requests set
// (PostIsend, PostIrecvInto), which allocates no Request per message.
//
// docs/performance.md, "Where the message rate goes: the slow windows",
// explains what it showed.
package main

import (
	"flag"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/mpigo/mpi"
)

const window = 64

func main() {
	iters := flag.Int("iters", 20000, "timed windows")
	set := flag.Bool("set", false, "post each window in an mpi.Requests set")
	flag.Parse()
	mpi.Main(func(c *mpi.Comm) error {
		if c.Size() != 2 {
			return fmt.Errorf("windows needs 2 ranks, not %d", c.Size())
		}
		if *iters < 1 {
			return fmt.Errorf("-iters must be positive, not %d", *iters)
		}
		times, err := run(c, *iters, *set)
		if err != nil || c.Rank() != 0 {
			return err
		}
		who := "mpigo"
		if *set {
			who = "mpigo (set)"
		}
		fmt.Println(summary(who, times))
		return nil
	})
}

// run times iters windows (after 100 untimed ones) and returns, on rank
// 0, the time of each: from its first send to the acknowledgement. With
// set, the windows are posted in a Requests set.
func run(c *mpi.Comm, iters int, set bool) ([]time.Duration, error) {
	bufs := make([][]float64, window+1)
	for i := range bufs {
		bufs[i] = make([]float64, 1)
	}
	ack := make([]byte, 4)
	reqs := make([]mpi.Waiter, 0, window)
	var rs mpi.Requests
	times := make([]time.Duration, 0, iters)
	if err := mpi.Barrier(c); err != nil {
		return nil, err
	}
	const warm = 100
	for i := 0; i < warm+iters; i++ {
		t0 := time.Now()
		reqs = reqs[:0]
		for w := 0; w < window; w++ {
			var r *mpi.Request
			var err error
			switch {
			case set && c.Rank() == 0:
				err = mpi.PostIsend(&rs, c, bufs[window], 1, 2)
			case set:
				err = mpi.PostIrecvInto(&rs, c, bufs[w], 0, 2)
			case c.Rank() == 0:
				r, err = mpi.Isend(c, bufs[window], 1, 2)
			default:
				r, err = mpi.IrecvInto(c, bufs[w], 0, 2)
			}
			if err != nil {
				return nil, err
			}
			if !set {
				reqs = append(reqs, r)
			}
		}
		var err error
		if set {
			err = rs.WaitAll()
		} else {
			err = mpi.WaitAll(reqs...)
		}
		if err != nil {
			return nil, err
		}
		if c.Rank() == 0 {
			if _, err := c.Recv(ack, len(ack), mpi.Byte, 1, 3); err != nil {
				return nil, err
			}
			if i >= warm {
				times = append(times, time.Since(t0))
			}
		} else if err := c.Send(ack, len(ack), mpi.Byte, 0, 3); err != nil {
			return nil, err
		}
	}
	return times, nil
}

// summary describes how the window times are spread.
func summary(who string, times []time.Duration) string {
	var sum time.Duration
	for _, d := range times {
		sum += d
	}
	s := slices.Clone(times)
	slices.Sort(s)
	med := s[len(s)/2]
	var slow time.Duration
	n := 0
	for _, d := range times {
		if d > 2*med {
			slow += d
			n++
		}
	}
	us := func(d time.Duration) float64 { return float64(d) / 1e3 }
	mean := sum / time.Duration(len(times))
	return fmt.Sprintf("%s: %d windows, %.1f MB/s; window median %.2f us, p90 %.2f, p99 %.2f, mean %.2f; %.1f%% of the windows over twice the median, taking %.0f%% of the time",
		who, len(times), float64(8*window*len(times))/sum.Seconds()/1e6, us(med), us(s[len(s)*9/10]), us(s[len(s)*99/100]), us(mean),
		100*float64(n)/float64(len(times)), 100*float64(slow)/float64(sum))
}

func init() {
	flag.Usage = func() {
		fmt.Fprintf(os.Stderr, "usage: mpigo run -n 2 ./bench/windows [-iters N]\n")
		flag.PrintDefaults()
	}
}
