package coll

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
)

// op is one collective call, written for any rank, with the tag base given.
type op struct {
	name string
	call func(c Comm, tag int) error
}

// ops calls every collective with valid arguments and checks nothing; the
// tests below use them for plumbing, not for results.
func ops(root int) []op {
	return []op{
		{"Barrier", func(c Comm, tag int) error { return Barrier(c, tag) }},
		{"Bcast", func(c Comm, tag int) error { return Bcast(c, make([]byte, 5), root, tag) }},
		{"BcastVar", func(c Comm, tag int) error {
			_, err := BcastVar(c, []byte("hello"), root, tag)
			return err
		}},
		{"Reduce", func(c Comm, tag int) error {
			_, err := Reduce(c, label(c.Rank()), concat, false, root, tag)
			return err
		}},
		{"ReduceCommutative", func(c Comm, tag int) error {
			_, err := Reduce(c, vec(c.Rank()), sumVec, true, root, tag)
			return err
		}},
		{"Allreduce", func(c Comm, tag int) error {
			_, err := Allreduce(c, label(c.Rank()), concat, false, tag)
			return err
		}},
		{"AllreduceCommutative", func(c Comm, tag int) error {
			_, err := Allreduce(c, vec(c.Rank()), sumVec, true, tag)
			return err
		}},
		{"Gather", func(c Comm, tag int) error {
			_, err := Gather(c, payload(c.Rank(), 0), root, tag)
			return err
		}},
		{"Scatter", func(c Comm, tag int) error {
			parts := make([][]byte, c.Size())
			for i := range parts {
				parts[i] = payload(i, 3)
			}
			_, err := Scatter(c, parts, root, tag)
			return err
		}},
		{"Allgather", func(c Comm, tag int) error {
			_, err := Allgather(c, payload(c.Rank(), 4), tag)
			return err
		}},
		{"Alltoall", func(c Comm, tag int) error {
			parts := make([][]byte, c.Size())
			for i := range parts {
				parts[i] = payload(c.Rank(), i)
			}
			_, err := Alltoall(c, parts, tag)
			return err
		}},
		{"Scan", func(c Comm, tag int) error {
			_, err := Scan(c, label(c.Rank()), concat, false, tag)
			return err
		}},
		{"Exscan", func(c Comm, tag int) error {
			_, err := Exscan(c, label(c.Rank()), concat, false, tag)
			return err
		}},
	}
}

// TestSingleRankSendsNothing checks that p == 1 needs no communication.
func TestSingleRankSendsNothing(t *testing.T) {
	for _, o := range ops(0) {
		net := newFakeNet(1, true)
		errs := runNet(net, func(r int) Comm { return net.comm(r) }, func(c Comm) error { return o.call(c, tagBase) })
		if errs[0] != nil {
			t.Errorf("%s: %v", o.name, errs[0])
		}
		if len(net.tags) != 0 {
			t.Errorf("%s: communicated on p=1 (tags %v)", o.name, net.tags)
		}
	}
}

// TestSequence runs every collective back to back on one tag base, twice,
// to check that collectives sharing tags in sequence do not mix up messages.
func TestSequence(t *testing.T) {
	for _, p := range []int{3, 6, 8} {
		root := p - 1
		t.Run(fmt.Sprintf("p=%d", p), func(t *testing.T) {
			run(t, p, func(c Comm) error {
				for range 2 {
					for _, o := range ops(root) {
						if err := o.call(c, tagBase); err != nil {
							return fmt.Errorf("%s: %w", o.name, err)
						}
					}
				}
				// And one with results after all that traffic.
				got, err := Allreduce(c, label(c.Rank()), concat, false, tagBase)
				if err != nil {
					return err
				}
				if want := labels(0, p); string(got) != want {
					t.Errorf("rank %d: got %q, want %q", c.Rank(), got, want)
				}
				return nil
			})
		})
	}
}

// TestConcurrent runs all collectives at once on each rank, each in its own
// goroutine with its own tag range, and checks a few results.
func TestConcurrent(t *testing.T) {
	const p = 7
	all := ops(2)
	runTags(t, p, 0, 8*(len(all)+1)-1, func(c Comm) error {
		var wg sync.WaitGroup
		errs := make([]error, len(all)+1)
		for i, o := range all {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = o.call(c, 8*i)
			}()
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			got, err := Scan(c, label(c.Rank()), concat, false, 8*len(all))
			if err == nil && string(got) != labels(0, c.Rank()+1) {
				err = fmt.Errorf("scan got %q", got)
			}
			errs[len(all)] = err
		}()
		wg.Wait()
		return errors.Join(errs...)
	})
}

// TestInvalidArguments checks the local argument checks; every rank finds
// the error without communicating.
func TestInvalidArguments(t *testing.T) {
	const p = 3
	type bad struct {
		name string
		want error
		call func(c Comm) error
	}
	var cases []bad
	for _, root := range []int{-1, p} {
		cases = append(cases,
			bad{"Bcast", ErrRoot, func(c Comm) error { return Bcast(c, nil, root, 0) }},
			bad{"BcastVar", ErrRoot, func(c Comm) error { _, err := BcastVar(c, nil, root, 0); return err }},
			bad{"Reduce", ErrRoot, func(c Comm) error { _, err := Reduce(c, nil, concat, false, root, 0); return err }},
			bad{"ReduceCommutative", ErrRoot, func(c Comm) error { _, err := Reduce(c, nil, concat, true, root, 0); return err }},
			bad{"Gather", ErrRoot, func(c Comm) error { _, err := Gather(c, nil, root, 0); return err }},
			bad{"Scatter", ErrRoot, func(c Comm) error { _, err := Scatter(c, nil, root, 0); return err }},
		)
	}
	cases = append(cases,
		bad{"Reduce", ErrArg, func(c Comm) error { _, err := Reduce(c, nil, nil, false, 0, 0); return err }},
		bad{"Allreduce", ErrArg, func(c Comm) error { _, err := Allreduce(c, nil, nil, true, 0); return err }},
		bad{"Scan", ErrArg, func(c Comm) error { _, err := Scan(c, nil, nil, false, 0); return err }},
		bad{"Exscan", ErrArg, func(c Comm) error { _, err := Exscan(c, nil, nil, false, 0); return err }},
		bad{"Alltoall", ErrArg, func(c Comm) error { _, err := Alltoall(c, make([][]byte, p-1), 0); return err }},
		bad{"Barrier", ErrArg, func(Comm) error { return Barrier(&fakeComm{net: newFakeNet(0, false)}, 0) }},
	)
	for _, tc := range cases {
		net := newFakeNet(p, false)
		errs := runNet(net, func(r int) Comm { return net.comm(r) }, tc.call)
		for r, err := range errs {
			if !errors.Is(err, tc.want) {
				t.Errorf("%s: rank %d: got %v, want %v", tc.name, r, err, tc.want)
			}
		}
		if len(net.tags) != 0 {
			t.Errorf("%s: communicated before failing", tc.name)
		}
	}

	// Scatter checks parts at root only.
	net := newFakeNet(p, false)
	errs := runNet(net, func(r int) Comm { return net.comm(r) }, func(c Comm) error {
		_, err := Scatter(c, make([][]byte, p+1), 1, 0)
		return err
	})
	if !errors.Is(errs[1], ErrArg) {
		t.Errorf("Scatter: root got %v, want ErrArg", errs[1])
	}
}

// TestBcastLength checks that a fixed-size Bcast reports a length mismatch.
func TestBcastLength(t *testing.T) {
	for _, n := range []int{3, 8} {
		net := newFakeNet(2, false)
		errs := runNet(net, func(r int) Comm { return net.comm(r) }, func(c Comm) error {
			buf := make([]byte, 5)
			if c.Rank() == 1 {
				buf = make([]byte, n)
			}
			return Bcast(c, buf, 0, 0)
		})
		if errs[0] != nil || errs[1] == nil {
			t.Errorf("n=%d: got errors %v", n, errs)
		}
		if n > 5 && !errors.Is(errs[1], ErrMessage) {
			t.Errorf("n=%d: got %v, want ErrMessage", n, errs[1])
		}
	}
}

// TestCommErrors injects a Comm failure at each call of one rank in turn and
// checks that the failing rank returns it wrapped, and that nobody hangs.
func TestCommErrors(t *testing.T) {
	const p = 5
	for _, root := range []int{0, 3} {
		for _, o := range ops(root) {
			for _, victim := range []int{0, 3} {
				for n := 0; ; n++ {
					net := newFakeNet(p, n%2 == 1)
					fc := &failComm{n: n}
					errs := runNet(net, func(r int) Comm {
						if r == victim {
							fc.Comm = net.comm(r)
							return fc
						}
						return net.comm(r)
					}, func(c Comm) error { return o.call(c, tagBase) })
					if fc.n >= 0 { // victim made fewer than n+1 calls: done
						if errors.Join(errs...) != nil {
							t.Errorf("%s root %d victim %d: no failure injected but got %v", o.name, root, victim, errs)
						}
						break
					}
					err := errs[victim]
					if !errors.Is(err, errInjected) {
						t.Errorf("%s root %d victim %d call %d: got %v, want injected failure", o.name, root, victim, n, err)
						continue
					}
					if !strings.HasPrefix(err.Error(), "coll: ") {
						t.Errorf("%s: error %q lacks context", o.name, err)
					}
				}
			}
		}
	}
}

// TestCombineError checks that a failing Combine is reported.
func TestCombineError(t *testing.T) {
	boom := errors.New("boom")
	bad := func(acc, in []byte, _ bool) ([]byte, error) { return nil, boom }
	for _, comm := range []bool{false, true} {
		net := newFakeNet(4, false)
		errs := runNet(net, func(r int) Comm { return net.comm(r) }, func(c Comm) error {
			_, err := Allreduce(c, []byte{1}, bad, comm, 0)
			return err
		})
		if !errors.Is(errors.Join(errs...), boom) {
			t.Errorf("commutative=%v: got %v", comm, errs)
		}
	}
}

// TestMalformedPacking checks that a garbled packed message is rejected.
func TestMalformedPacking(t *testing.T) {
	for _, b := range [][]byte{{5, 1}, {0x80}, {1, 9, 0}} {
		if _, _, err := parseBlocks(b, 1); !errors.Is(err, ErrMessage) {
			t.Errorf("%v: got %v", b, err)
		}
	}
	packed := appendBlock(appendBlock(nil, []byte("ab")), nil)
	offs, blocks, err := parseBlocks(packed, 2)
	if err != nil || !bytes.Equal(blocks[0], []byte("ab")) || len(blocks[1]) != 0 || offs[2] != len(packed) {
		t.Errorf("round trip: %v %q %v", offs, blocks, err)
	}
}
