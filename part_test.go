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

// partSide is one side of a partitioned transfer of float64s: parts
// partitions of count elements of the datatype mk makes (for buf, which
// a datatype of absolute addresses needs). Each element holds
// len(per) float64s of the message, at per (in float64s) from its start;
// elements are ext float64s apart. bottom: the buffer is mpi.Bottom.
type partSide struct {
	parts, count int
	per          []int
	ext          int
	bottom       bool
	mk           func(buf []float64) (*mpi.Datatype, error)
}

// pos is where the k-th float64 of the message lies in the side's buffer.
func (s partSide) pos(k int) int { return k/len(s.per)*s.ext + s.per[k%len(s.per)] }

// total is the number of float64s of the message.
func (s partSide) total() int { return s.parts * s.count * len(s.per) }

// make returns a buffer for the side's partitions and its committed
// datatype.
func (s partSide) make() ([]float64, *mpi.Datatype, error) {
	buf := make([]float64, s.parts*s.count*s.ext)
	dt, err := s.mk(buf)
	if err != nil {
		return nil, nil, err
	}
	return buf, dt, dt.Commit()
}

// partContig is count float64s per element.
func partContig() partSide {
	return partSide{per: []int{0}, ext: 1, mk: func([]float64) (*mpi.Datatype, error) { return mpi.Float64, nil }}
}

// partStrided is a vector of n float64s stride apart, resized to n×stride
// (MPICH part/parrived_strided's datatype).
func partStrided(n, stride int) partSide {
	s := partSide{ext: n * stride}
	for q := range n {
		s.per = append(s.per, q*stride)
	}
	s.mk = func([]float64) (*mpi.Datatype, error) {
		v, err := mpi.NewVector(n, 1, stride, mpi.Float64)
		if err != nil {
			return nil, err
		}
		defer v.Free()
		return mpi.NewResized(v, 0, n*stride*8)
	}
	return s
}

func (s partSide) with(parts, count int) partSide {
	s.parts, s.count = parts, count
	return s
}

// TestPartitionedDatatypes: partitioned sends and receives of datatypes
// that are not contiguous, with the same or different numbers of
// partitions on the two sides (MPI-4.0 4.2: partition i is the elements
// [i×count, (i+1)×count) of the buffer): each receive partition, the
// moment Parrived reports it, holds its elements in place, the gaps of
// the datatype are left alone, and each run gets its own data. mpigo
// once refused every datatype that is not contiguous (MPICH
// part/parrived_strided).
func TestPartitionedDatatypes(t *testing.T) {
	indexed := partSide{per: []int{0, 1, 3}, ext: 4, mk: func([]float64) (*mpi.Datatype, error) {
		return mpi.NewIndexed([]int{2, 1}, []int{0, 3}, mpi.Float64)
	}}
	// At Bottom: one element of absolute addresses, every other float64.
	bottom := func(n int) partSide {
		s := partSide{ext: 2 * n, bottom: true}
		for k := range n {
			s.per = append(s.per, 2*k)
		}
		s.mk = func(buf []float64) (*mpi.Datatype, error) {
			addrs := make([]int, n)
			for k := range addrs {
				addrs[k] = mpi.GetAddress(&buf[2*k])
			}
			return mpi.NewHindexedBlock(1, addrs, mpi.Float64)
		}
		return s
	}
	cases := []struct {
		name       string
		send, recv partSide
	}{
		{"strided 8 to 8", partStrided(4, 2).with(8, 1), partStrided(4, 2).with(8, 1)},
		{"strided by 8", partStrided(1, 8).with(8, 1), partStrided(1, 8).with(8, 1)},
		{"strided 17 to 33", partStrided(33, 2).with(17, 1), partStrided(17, 2).with(33, 1)},
		{"strided 33 to 17", partStrided(17, 2).with(33, 1), partStrided(33, 2).with(17, 1)},
		{"strided to contiguous", partStrided(6, 3).with(4, 2), partContig().with(6, 8)},
		{"contiguous to indexed", partContig().with(3, 8), indexed.with(2, 4)},
		{"indexed to strided", indexed.with(4, 2), partStrided(3, 2).with(2, 4)},
		{"contiguous to Bottom", partContig().with(4, 6), bottom(24).with(1, 1)},
		{"Bottom to strided", bottom(24).with(1, 1), partStrided(2, 2).with(3, 4)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.send.total() != tc.recv.total() {
				t.Fatalf("the case is wrong: %d float64s sent, %d received", tc.send.total(), tc.recv.total())
			}
			matrix(t, 2, func(world *mpi.Comm) error {
				side := tc.recv
				if world.Rank() == 0 {
					side = tc.send
				}
				buf, dt, err := side.make()
				if err != nil {
					return err
				}
				b := mpi.AsBytes(buf)
				if side.bottom {
					b = mpi.Bottom
				}
				var req *mpi.Request
				if world.Rank() == 0 {
					req, err = world.PsendInit(b, side.parts, side.count, dt, 1, 4, nil)
				} else {
					req, err = world.PrecvInit(b, side.parts, side.count, dt, 0, 4, nil)
				}
				if err != nil {
					return err
				}
				if dt != mpi.Float64 {
					// The request keeps what it needs of the datatype.
					if err := dt.Free(); err != nil {
						return err
					}
				}
				per := side.count * len(side.per) // float64s of one partition
				for run := range 2 {
					v := func(k int) float64 { return float64(1000*(run+1) + k) }
					if world.Rank() == 0 {
						if err := req.Start(); err != nil {
							return err
						}
						for i := side.parts - 1; i >= 0; i-- {
							for k := i * per; k < (i+1)*per; k++ {
								buf[side.pos(k)] = v(k)
							}
							if err := req.Pready(i); err != nil {
								return err
							}
						}
						if _, err := req.Wait(); err != nil {
							return err
						}
						continue
					}
					for i := range buf {
						buf[i] = -1
					}
					if err := req.Start(); err != nil {
						return err
					}
					seen := make([]bool, side.parts)
					for left, deadline := side.parts, time.Now().Add(time.Minute); left > 0; {
						if time.Now().After(deadline) {
							return fmt.Errorf("run %d: %d partitions never arrived", run, left)
						}
						for j := range seen {
							if seen[j] {
								continue
							}
							ok, err := req.Parrived(j)
							if err != nil {
								return err
							}
							if !ok {
								continue
							}
							seen[j] = true
							left--
							for k := j * per; k < (j+1)*per; k++ {
								if got := buf[side.pos(k)]; got != v(k) {
									return fmt.Errorf("run %d: partition %d has arrived, but float64 %d of the message (buf[%d]) is %v, want %v", run, j, k, side.pos(k), got, v(k))
								}
							}
						}
					}
					if _, err := req.Wait(); err != nil {
						return err
					}
					in := make([]bool, len(buf))
					for k := range side.total() {
						in[side.pos(k)] = true
					}
					for i, x := range buf {
						if !in[i] && x != -1 {
							return fmt.Errorf("run %d: buf[%d], a gap of the datatype, is %v", run, i, x)
						}
					}
				}
				return req.Free()
			})
		})
	}
}

// TestPartitionedShortMessage: a message shorter than the partitioned
// receive (MPI allows it, as for any receive) is all in the buffer at
// Wait, though it ends inside a receive partition of a datatype that is
// not contiguous (mpigo unpacked only the partitions that had all their
// bytes), and the receive's status counts what came: Bytes, Count in the
// receive's elements (it said 0), CountOf. MPICH part/pingping checks
// both.
func TestPartitionedShortMessage(t *testing.T) {
	cases := []struct {
		name       string
		send, recv partSide
		typed      bool // the receive is mpi.PrecvInit[float64]
		wantCount  int  // Status.Count
	}{
		// 15 float64s into 5 partitions of 4, every other float64.
		{name: "into strided", send: partContig().with(3, 5), recv: partStrided(4, 2).with(5, 1), wantCount: mpi.Undefined},
		{name: "into strided, whole elements", send: partContig().with(2, 8), recv: partStrided(4, 2).with(5, 1), wantCount: 4},
		{name: "strided into float64s", send: partStrided(5, 3).with(3, 1), recv: partContig().with(4, 5), wantCount: 15},
		{name: "typed", send: partContig().with(3, 5), recv: partContig().with(4, 5), typed: true, wantCount: 15},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sent := tc.send.total()
			matrix(t, 2, func(world *mpi.Comm) error {
				side := tc.recv
				if world.Rank() == 0 {
					side = tc.send
				}
				buf, dt, err := side.make()
				if err != nil {
					return err
				}
				var req *mpi.Request
				switch {
				case world.Rank() == 0:
					req, err = world.PsendInit(mpi.AsBytes(buf), side.parts, side.count, dt, 1, 0, nil)
				case tc.typed:
					req, err = mpi.PrecvInit(world, buf, side.parts, 0, 0)
				default:
					req, err = world.PrecvInit(mpi.AsBytes(buf), side.parts, side.count, dt, 0, 0, nil)
				}
				if err != nil {
					return err
				}
				for i := range buf {
					buf[i] = -1
				}
				if err := req.Start(); err != nil {
					return err
				}
				if world.Rank() == 0 {
					for k := range sent {
						buf[side.pos(k)] = float64(k)
					}
					if err := req.PreadyRange(0, side.parts-1); err != nil {
						return err
					}
				}
				st, err := req.Wait()
				if err != nil {
					return err
				}
				if world.Rank() == 0 {
					return req.Free()
				}
				in := make([]bool, len(buf))
				for k := range sent {
					in[side.pos(k)] = true
					if got := buf[side.pos(k)]; got != float64(k) {
						return fmt.Errorf("float64 %d of the message (buf[%d]) is %v", k, side.pos(k), got)
					}
				}
				for i, x := range buf {
					if !in[i] && x != -1 {
						return fmt.Errorf("buf[%d], past the message or a gap, is %v", i, x)
					}
				}
				if st.Bytes() != 8*sent || st.Count() != tc.wantCount || st.CountOf(mpi.Float64) != sent || st.Tag != 0 || st.Source != 0 {
					return fmt.Errorf("status: %d bytes, Count %d, CountOf(Float64) %d, source %d tag %d; want %d, %d, %d, 0, 0",
						st.Bytes(), st.Count(), st.CountOf(mpi.Float64), st.Source, st.Tag, 8*sent, tc.wantCount, sent)
				}
				return req.Free()
			})
		})
	}
}
