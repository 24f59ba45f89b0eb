package mpi_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/mpigo/mpi"
)

// TestPartitionedInitOrder: several partitioned requests between one pair
// of ranks, active at once, are paired in the order of their Init calls
// (MPI-4.0 4.2.2), whatever the order of their Starts, on one tag, on
// different tags and on different communicators; and each run of a
// reused pair gets that run's data. mpigo once paired them in the order
// their partitions arrived, and several receives on one tag read each
// other's headers (MPICH part/multipart: "expected 1 but received 3").
func TestPartitionedInitOrder(t *testing.T) {
	const reqs, parts, per = 3, 8, 64
	cases := []struct {
		name string
		// sendInit and recvInit: the order of the Init calls, by request;
		// sendStart: the order of the sender's Starts.
		sendInit, recvInit, sendStart []int
		tags                          [reqs]int // the tag of each request
		comms                         bool      // each request on a communicator of its own
	}{
		{name: "same tag", sendInit: []int{0, 1, 2}, recvInit: []int{0, 1, 2}, sendStart: []int{2, 0, 1}},
		{name: "same tag, reversed starts", sendInit: []int{0, 1, 2}, recvInit: []int{0, 1, 2}, sendStart: []int{2, 1, 0}},
		{name: "different tags", sendInit: []int{2, 1, 0}, recvInit: []int{0, 1, 2}, sendStart: []int{0, 1, 2}, tags: [reqs]int{0, 1, 2}},
		{name: "different comms", sendInit: []int{2, 1, 0}, recvInit: []int{0, 1, 2}, sendStart: []int{0, 1, 2}, comms: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			matrix(t, 2, func(world *mpi.Comm) error {
				comms := [reqs]*mpi.Comm{world, world, world}
				if tc.comms {
					for i := range comms {
						d, err := world.Dup()
						if err != nil {
							return err
						}
						defer d.Free()
						comms[i] = d
					}
				}
				var bufs [reqs][]int32
				var rs [reqs]*mpi.Request
				for i := range bufs {
					bufs[i] = make([]int32, parts*per)
				}
				order := tc.recvInit
				if world.Rank() == 0 {
					order = tc.sendInit
				}
				for _, i := range order {
					var err error
					if world.Rank() == 0 {
						rs[i], err = mpi.PsendInit(comms[i], bufs[i], parts, 1, tc.tags[i])
					} else {
						rs[i], err = mpi.PrecvInit(comms[i], bufs[i], parts, 0, tc.tags[i])
					}
					if err != nil {
						return err
					}
				}
				for run := range 3 {
					if world.Rank() == 0 {
						for _, i := range tc.sendStart {
							if err := rs[i].Start(); err != nil {
								return err
							}
							for k := range bufs[i] {
								bufs[i][k] = int32(100*run + 10*i + k%7)
							}
							if err := rs[i].PreadyRange(0, parts-1); err != nil {
								return err
							}
						}
					} else {
						for i := range rs {
							clear(bufs[i])
							if err := rs[i].Start(); err != nil {
								return err
							}
						}
					}
					sts, err := mpi.WaitAllStatus(rs[0], rs[1], rs[2])
					if err != nil {
						return fmt.Errorf("rank %d run %d: %v", world.Rank(), run, err)
					}
					if world.Rank() == 0 {
						continue
					}
					for i := range rs {
						if sts[i].Source != 0 || sts[i].Tag != tc.tags[i] {
							return fmt.Errorf("run %d: request %d's status says source %d tag %d, want 0 and %d", run, i, sts[i].Source, sts[i].Tag, tc.tags[i])
						}
						for k, v := range bufs[i] {
							if want := int32(100*run + 10*i + k%7); v != want {
								return fmt.Errorf("run %d: request %d has %d at %d, want %d (data of another request?)", run, i, v, k, want)
							}
						}
					}
				}
				for _, r := range rs {
					if err := r.Free(); err != nil {
						return err
					}
				}
				return nil
			})
		})
	}
}

// TestPartitionedTagZeroDuringAllreduce: a partitioned message with tag 0
// that reaches a rank parked in an allreduce is not taken by the
// allreduce (the partitioned messages of tag 0 once had the tag of the
// wait of a meeting in memory, meetTag, which every wait of the job
// posts at once when Spin is off). The sender starts a moment after the
// receiver entered the allreduce, so that it is parked there by then.
func TestPartitionedTagZeroDuringAllreduce(t *testing.T) {
	for _, tc := range transports() {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			cfg.Spin = -1
			err := mpi.RunConfig(2, cfg, func(world *mpi.Comm) error {
				buf := make([]int64, 4)
				if world.Rank() == 0 {
					req, err := mpi.PsendInit(world, buf, 2, 1, 0)
					if err != nil {
						return err
					}
					time.Sleep(50 * time.Millisecond)
					if err := req.Start(); err != nil {
						return err
					}
					for i := range buf {
						buf[i] = int64(i + 1)
					}
					if err := req.PreadyRange(0, 1); err != nil {
						return err
					}
					time.Sleep(50 * time.Millisecond)
					// The send's Wait after the allreduce: over a
					// rendezvous protocol the partitions leave only once
					// the receiver has started.
					if _, err := mpi.AllreduceSlice(world, []float64{1, 2}, mpi.Sum[float64]()); err != nil {
						return err
					}
					if _, err := req.Wait(); err != nil {
						return err
					}
					return req.Free()
				}
				req, err := mpi.PrecvInit(world, buf, 2, 0, 0)
				if err != nil {
					return err
				}
				v, err := mpi.AllreduceSlice(world, []float64{1, 2}, mpi.Sum[float64]())
				if err != nil {
					return err
				}
				if !slices.Equal(v, []float64{2, 4}) {
					return fmt.Errorf("allreduce: %v", v)
				}
				if err := req.Start(); err != nil {
					return err
				}
				if _, err := req.Wait(); err != nil {
					return err
				}
				if !slices.Equal(buf, []int64{1, 2, 3, 4}) {
					return fmt.Errorf("received %v", buf)
				}
				return req.Free()
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}
