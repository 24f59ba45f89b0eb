package coll

import (
	"bytes"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
)

func TestBarrier(t *testing.T) {
	forSizes(t, func(t *testing.T, p int) {
		for _, rv := range []bool{false, true} {
			var entered atomic.Int64
			net := newFakeNet(p, rv)
			errs := runNet(net, func(r int) Comm { return net.comm(r) }, func(c Comm) error {
				// Several barriers in a row on one tag: nobody may leave
				// barrier i before everyone entered it.
				for i := 1; i <= 3; i++ {
					entered.Add(1)
					if err := Barrier(c, tagBase); err != nil {
						return err
					}
					if got := entered.Load(); got < int64(i*p) {
						t.Errorf("rank %d left barrier %d after only %d entries", c.Rank(), i, got)
					}
					if err := Barrier(c, tagBase); err != nil {
						return err
					}
				}
				return nil
			})
			if err := errors.Join(errs...); err != nil {
				t.Errorf("rendezvous=%v: %v", rv, err)
			}
			if l := net.leftovers(); len(l) > 0 {
				t.Errorf("rendezvous=%v: leftovers %v", rv, l)
			}
		}
	})
}

func TestBcast(t *testing.T) {
	forRoots(t, func(t *testing.T, p, root int) {
		for _, n := range []int{0, 1, 100} {
			want := bytes.Repeat([]byte{byte(root + 1)}, n)
			run(t, p, func(c Comm) error {
				buf := make([]byte, n)
				if c.Rank() == root {
					copy(buf, want)
				}
				if err := Bcast(c, buf, root, tagBase); err != nil {
					return err
				}
				if !bytes.Equal(buf, want) {
					t.Errorf("rank %d: got %v, want %v", c.Rank(), buf, want)
				}
				return nil
			})
		}
	})
}

func TestBcastVar(t *testing.T) {
	forRoots(t, func(t *testing.T, p, root int) {
		for _, n := range []int{0, 37} {
			want := bytes.Repeat([]byte{byte(root + 7)}, n)
			run(t, p, func(c Comm) error {
				var in []byte
				if c.Rank() == root {
					in = bytes.Clone(want)
				}
				got, err := BcastVar(c, in, root, tagBase)
				if err != nil {
					return err
				}
				if !bytes.Equal(got, want) {
					t.Errorf("rank %d: got %v, want %v", c.Rank(), got, want)
				}
				return nil
			})
		}
	})
}

func TestReduce(t *testing.T) {
	for _, red := range reductions {
		t.Run(red.name, func(t *testing.T) {
			forRoots(t, func(t *testing.T, p, root int) {
				want := red.want(0, p)
				run(t, p, func(c Comm) error {
					buf := guarded(red.in(c.Rank()))
					snap := snapshot(buf)
					got, err := Reduce(c, buf, red.f, red.commutative, root, tagBase)
					if err != nil {
						return err
					}
					checkUnchanged(t, "reduce", buf, snap)
					if c.Rank() == root && !bytes.Equal(got, want) {
						t.Errorf("root %d: got %q, want %q", root, got, want)
					}
					return nil
				})
			})
		})
	}
}

func TestAllreduce(t *testing.T) {
	for _, red := range reductions {
		t.Run(red.name, func(t *testing.T) {
			forSizes(t, func(t *testing.T, p int) {
				want := red.want(0, p)
				run(t, p, func(c Comm) error {
					buf := guarded(red.in(c.Rank()))
					snap := snapshot(buf)
					got, err := Allreduce(c, buf, red.f, red.commutative, tagBase)
					if err != nil {
						return err
					}
					checkUnchanged(t, "allreduce", buf, snap)
					if !bytes.Equal(got, want) {
						t.Errorf("rank %d: got %q, want %q", c.Rank(), got, want)
					}
					return nil
				})
			})
		})
	}
}

// TestAllreduceIdentical checks that every rank gets bit-identical results
// even when the combining order matters: with floating point, and with a
// non-commutative operation wrongly declared commutative.
func TestAllreduceIdentical(t *testing.T) {
	cases := []struct {
		name string
		f    Combine
		in   func(int) []byte
	}{{"float", fsum, fval}, {"concat", concat, label}}
	for _, tc := range cases {
		for _, comm := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/commutative=%v", tc.name, comm), func(t *testing.T) {
				forSizes(t, func(t *testing.T, p int) {
					res := make([][]byte, p)
					run(t, p, func(c Comm) error {
						got, err := Allreduce(c, tc.in(c.Rank()), tc.f, comm, tagBase)
						res[c.Rank()] = got
						return err
					})
					for r := 1; r < p; r++ {
						if !bytes.Equal(res[r], res[0]) {
							t.Errorf("rank %d got %x, rank 0 got %x", r, res[r], res[0])
						}
					}
				})
			})
		}
	}
}

func TestScan(t *testing.T) {
	for _, red := range reductions {
		t.Run(red.name, func(t *testing.T) {
			forSizes(t, func(t *testing.T, p int) {
				run(t, p, func(c Comm) error {
					r := c.Rank()
					buf := guarded(red.in(r))
					snap := snapshot(buf)
					got, err := Scan(c, buf, red.f, red.commutative, tagBase)
					if err != nil {
						return err
					}
					checkUnchanged(t, "scan", buf, snap)
					if want := red.want(0, r+1); !bytes.Equal(got, want) {
						t.Errorf("rank %d: got %q, want %q", r, got, want)
					}
					return nil
				})
			})
		})
	}
}

func TestExscan(t *testing.T) {
	for _, red := range reductions {
		t.Run(red.name, func(t *testing.T) {
			forSizes(t, func(t *testing.T, p int) {
				run(t, p, func(c Comm) error {
					r := c.Rank()
					buf := guarded(red.in(r))
					snap := snapshot(buf)
					got, err := Exscan(c, buf, red.f, red.commutative, tagBase)
					if err != nil {
						return err
					}
					checkUnchanged(t, "exscan", buf, snap)
					switch {
					case r == 0 && got != nil:
						t.Errorf("rank 0: got %q, want nil", got)
					case r > 0 && !bytes.Equal(got, red.want(0, r)):
						t.Errorf("rank %d: got %q, want %q", r, got, red.want(0, r))
					}
					return nil
				})
			})
		})
	}
}

func TestGather(t *testing.T) {
	forRoots(t, func(t *testing.T, p, root int) {
		run(t, p, func(c Comm) error {
			r := c.Rank()
			buf := guarded(payload(r, 1))
			snap := snapshot(buf)
			got, err := Gather(c, buf, root, tagBase)
			if err != nil {
				return err
			}
			checkUnchanged(t, "gather", buf, snap)
			if r != root {
				if got != nil {
					t.Errorf("rank %d: got %q, want nil", r, got)
				}
				return nil
			}
			checkBlocks(t, r, got, p, func(i int) []byte { return payload(i, 1) })
			if len(buf) > 0 && len(got) == p {
				buf[0]++ // root's own block must be a copy
				if !bytes.Equal(got[root], payload(root, 1)) {
					t.Errorf("root's block aliases its buf")
				}
			}
			return nil
		})
	})
}

// fixedBlock is rank i's block of n bytes in the fixed-size gather and
// scatter tests: different for every rank and every byte.
func fixedBlock(i, n int) []byte {
	b := make([]byte, n)
	for j := range b {
		b[j] = byte(i*31 + j + 1)
	}
	return b
}

// GatherFixed puts every rank's block at its place at root, for every
// size and root and blocks of several lengths (0 included), and leaves
// every buf as it was.
func TestGatherFixed(t *testing.T) {
	forRoots(t, func(t *testing.T, p, root int) {
		for _, n := range []int{0, 1, 7, 64} {
			run(t, p, func(c Comm) error {
				r := c.Rank()
				block := func(i int) []byte { return fixedBlock(i, n) }
				buf := block(r)
				snap := snapshot(buf)
				var out []byte
				if r == root {
					out = make([]byte, p*n)
				}
				if err := GatherFixed(c, buf, out, root, tagBase); err != nil {
					return err
				}
				checkUnchanged(t, "gather", buf, snap)
				if r != root {
					return nil
				}
				for i := range p {
					if got := out[i*n : (i+1)*n]; !bytes.Equal(got, block(i)) {
						t.Errorf("p=%d root=%d n=%d: block %d is %x, want %x", p, root, n, i, got, block(i))
					}
				}
				return nil
			})
		}
	})
}

// ScatterFixed gives every rank its block, for every size and root and
// blocks of several lengths (0 included), and leaves root's input as it
// was.
func TestScatterFixed(t *testing.T) {
	forRoots(t, func(t *testing.T, p, root int) {
		for _, n := range []int{0, 1, 7, 64} {
			run(t, p, func(c Comm) error {
				r := c.Rank()
				block := func(i int) []byte { return fixedBlock(i, n) }
				var in []byte
				if r == root {
					for i := range p {
						in = append(in, block(i)...)
					}
				}
				snap := snapshot(in)
				out := make([]byte, n)
				if err := ScatterFixed(c, in, out, root, tagBase); err != nil {
					return err
				}
				checkUnchanged(t, "scatter", in, snap)
				if !bytes.Equal(out, block(r)) {
					t.Errorf("p=%d root=%d n=%d: rank %d got %x, want %x", p, root, n, r, out, block(r))
				}
				return nil
			})
		}
	})
}

// checkBlocks checks that got holds p blocks equal to want(i) and that
// appending to one cannot overwrite the next.
func checkBlocks(t *testing.T, r int, got [][]byte, p int, want func(int) []byte) {
	t.Helper()
	if len(got) != p {
		t.Errorf("rank %d: got %d blocks, want %d", r, len(got), p)
		return
	}
	for i, b := range got {
		if !bytes.Equal(b, want(i)) {
			t.Errorf("rank %d: block %d = %v, want %v", r, i, b, want(i))
		}
		if cap(b) != len(b) && i != r {
			t.Errorf("rank %d: block %d has spare capacity %d", r, i, cap(b)-len(b))
		}
	}
}

func TestScatter(t *testing.T) {
	forRoots(t, func(t *testing.T, p, root int) {
		run(t, p, func(c Comm) error {
			r := c.Rank()
			var parts [][]byte
			var snaps [][]byte
			if r == root {
				for j := range p {
					parts = append(parts, guarded(payload(root, j)))
					snaps = append(snaps, snapshot(parts[j]))
				}
			}
			got, err := Scatter(c, parts, root, tagBase)
			if err != nil {
				return err
			}
			for j := range parts {
				checkUnchanged(t, "scatter", parts[j], snaps[j])
			}
			if want := payload(root, r); !bytes.Equal(got, want) {
				t.Errorf("rank %d: got %v, want %v", r, got, want)
			}
			if r == root && len(got) > 0 {
				got[0]++ // must be a copy
				checkUnchanged(t, "scatter own part", parts[r], snaps[r])
			}
			return nil
		})
	})
}

func TestAllgather(t *testing.T) {
	forSizes(t, func(t *testing.T, p int) {
		run(t, p, func(c Comm) error {
			r := c.Rank()
			buf := guarded(payload(r, 2))
			snap := snapshot(buf)
			got, err := Allgather(c, buf, tagBase)
			if err != nil {
				return err
			}
			checkUnchanged(t, "allgather", buf, snap)
			checkBlocks(t, r, got, p, func(i int) []byte { return payload(i, 2) })
			return nil
		})
	})
}

func TestAlltoall(t *testing.T) {
	forSizes(t, func(t *testing.T, p int) {
		run(t, p, func(c Comm) error {
			r := c.Rank()
			parts := make([][]byte, p)
			snaps := make([][]byte, p)
			for j := range p {
				parts[j] = guarded(payload(r, j))
				snaps[j] = snapshot(parts[j])
			}
			got, err := Alltoall(c, parts, tagBase)
			if err != nil {
				return err
			}
			for j := range p {
				checkUnchanged(t, "alltoall", parts[j], snaps[j])
			}
			if len(got) != p {
				t.Errorf("rank %d: got %d parts", r, len(got))
				return nil
			}
			for s := range p {
				if !bytes.Equal(got[s], payload(s, r)) {
					t.Errorf("rank %d: from %d got %v, want %v", r, s, got[s], payload(s, r))
				}
			}
			return nil
		})
	})
}
