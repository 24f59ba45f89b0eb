package mpi_test

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math/rand"
	"sync"
	"testing"

	"github.com/mpigo/mpi"
)

// TestStress sends many messages of random sizes and tags between 8 ranks,
// received with a mix of specific and wildcard sources, with probes and
// non-blocking and blocking calls from two goroutines per rank. Every
// payload carries its sender, sequence number and a checksum: nothing may be
// lost, duplicated, corrupted, or overtake an earlier message from the same
// sender.
func TestStress(t *testing.T) {
	total := stressSize(100_000)
	for _, tc := range transports() {
		t.Run(tc.name, func(t *testing.T) {
			if err := mpi.RunConfig(8, tc.cfg, func(world *mpi.Comm) error { return stressRank(world, total) }); err != nil {
				t.Fatal(err)
			}
		})
	}
}

type planned struct {
	src, dst, tag, size int
}

// stressPlan is the same on every rank: it is derived from a fixed seed.
func stressPlan(n, total int) []planned {
	rng := rand.New(rand.NewSource(7))
	plan := make([]planned, total)
	for i := range plan {
		src := rng.Intn(n)
		dst := rng.Intn(n)
		var size int
		switch x := rng.Intn(100); {
		case x < 80:
			size = 16 + rng.Intn(256)
		case x < 97:
			size = 16 + rng.Intn(16<<10)
		default:
			size = 16 + rng.Intn(128<<10)
		}
		plan[i] = planned{src, dst, rng.Intn(1000), size}
	}
	return plan
}

func stressRank(world *mpi.Comm, total int) error {
	me, n := world.Rank(), world.Size()
	plan := stressPlan(n, total)
	var mine []planned
	expect := make([]int, n) // messages to receive from each source
	for _, p := range plan {
		if p.src == me {
			mine = append(mine, p)
		}
		if p.dst == me {
			expect[p.src]++
		}
	}
	var wg sync.WaitGroup
	var sendErr error
	wg.Add(1)
	go func() { // sender goroutine: every message posted with Isend, then WaitAll
		// (windows would deadlock: a receiver waiting for a specific source
		// could wait for a message stuck behind the sender's window)
		defer wg.Done()
		seq := make([]uint32, n)
		var reqs []mpi.Waiter
		for i, p := range mine {
			buf := make([]byte, p.size)
			binary.LittleEndian.PutUint32(buf[0:], uint32(me))
			binary.LittleEndian.PutUint32(buf[4:], seq[p.dst])
			seq[p.dst]++
			for j := 12; j < len(buf); j++ {
				buf[j] = byte(i + j)
			}
			binary.LittleEndian.PutUint32(buf[8:], crc32.ChecksumIEEE(buf[12:]))
			r, err := mpi.Isend(world, buf, p.dst, p.tag)
			if err != nil {
				sendErr = err
				return
			}
			reqs = append(reqs, r)
		}
		sendErr = mpi.WaitAll(reqs...)
	}()
	// Receiver: the calling goroutine.
	rng := rand.New(rand.NewSource(int64(me)))
	next := make([]uint32, n)
	left := 0
	for _, e := range expect {
		left += e
	}
	for left > 0 {
		src := mpi.AnySource
		if rng.Intn(2) == 0 {
			// A specific source that still has messages for us.
			for {
				s := rng.Intn(n)
				if int(next[s]) < expect[s] {
					src = s
					break
				}
			}
		}
		var v []byte
		var st mpi.Status
		var err error
		switch rng.Intn(3) {
		case 0:
			v, st, err = mpi.Recv[[]byte](world, src, mpi.AnyTag)
		case 1:
			var m *mpi.Message
			if m, st, err = mpi.Mprobe(world, src, mpi.AnyTag); err == nil {
				v, st, err = mpi.Mrecv[[]byte](m)
			}
		default:
			if st, err = mpi.Probe(world, src, mpi.AnyTag); err == nil {
				v = make([]byte, st.Bytes())
				st, err = mpi.RecvInto(world, v, st.Source, st.Tag)
			}
		}
		if err != nil {
			return err
		}
		from := int(binary.LittleEndian.Uint32(v[0:]))
		seq := binary.LittleEndian.Uint32(v[4:])
		if from != st.Source {
			return fmt.Errorf("message claims sender %d, status says %d", from, st.Source)
		}
		if seq != next[from] {
			return fmt.Errorf("from %d: got sequence %d, want %d (lost or overtaken)", from, seq, next[from])
		}
		if crc32.ChecksumIEEE(v[12:]) != binary.LittleEndian.Uint32(v[8:]) {
			return fmt.Errorf("from %d seq %d: checksum mismatch (%d bytes)", from, seq, len(v))
		}
		next[from]++
		left--
	}
	wg.Wait()
	if sendErr != nil {
		return sendErr
	}
	// Nothing extra may be waiting.
	if err := mpi.Barrier(world); err != nil {
		return err
	}
	ok, st, err := world.Iprobe(mpi.AnySource, mpi.AnyTag)
	if err != nil || ok {
		return fmt.Errorf("an unexpected extra message is waiting: %+v %v", st, err)
	}
	return nil
}
