package coll

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"testing"
	"time"
)

// Every algorithm of every selectable collective, run directly for every
// size in sizes (powers of two and not), in eager and rendezvous mode.

// i64vec is rank r's vector of n int64 elements.
func i64vec(r, n int) []byte {
	b := make([]byte, 8*n)
	for i := range n {
		binary.LittleEndian.PutUint64(b[8*i:], uint64(1_000_003*r+7*i+1))
	}
	return b
}

func i64sum(p, n int) []byte {
	out := make([]byte, 8*n)
	for r := range p {
		addI64(out, i64vec(r, n))
	}
	return out
}

func addI64(inout, in []byte) {
	for i := 0; i+8 <= len(inout); i += 8 {
		binary.LittleEndian.PutUint64(inout[i:], binary.LittleEndian.Uint64(inout[i:])+binary.LittleEndian.Uint64(in[i:]))
	}
}

func addF64(inout, in []byte) {
	for i := 0; i+8 <= len(inout); i += 8 {
		v := math.Float64frombits(binary.LittleEndian.Uint64(inout[i:])) + math.Float64frombits(binary.LittleEndian.Uint64(in[i:]))
		binary.LittleEndian.PutUint64(inout[i:], math.Float64bits(v))
	}
}

func TestAllreduceVecAlgorithms(t *testing.T) {
	for _, alg := range algorithms[CollAllreduce] {
		t.Run(alg, func(t *testing.T) {
			forSizes(t, func(t *testing.T, p int) {
				ns := []int{0, 1, 3, 17, 1000, 20_000}
				if p <= 4 {
					// 560 KB: halves above the eager limit. (It was 1.2 MB;
					// halved to pay for the segmented broadcast tests.)
					ns = append(ns, 70_000)
				}
				for _, n := range ns {
					sit := Situation{Ranks: p, Commutative: true, Fixed: true, Elems: n}
					if !Applicable(CollAllreduce, alg, sit) {
						run(t, p, func(c Comm) error {
							err := AllreduceVec(c, alg, i64vec(c.Rank(), n), make([]byte, 8*n), 8, addI64, tagBase)
							if !errors.Is(err, ErrArg) {
								t.Errorf("n=%d: inapplicable algorithm gave %v, want ErrArg", n, err)
							}
							return nil
						})
						continue
					}
					want := i64sum(p, n)
					run(t, p, func(c Comm) error {
						buf := i64vec(c.Rank(), n)
						if err := AllreduceVec(c, alg, buf, make([]byte, 8*n), 8, addI64, tagBase); err != nil {
							return err
						}
						if !bytes.Equal(buf, want) {
							t.Errorf("n=%d rank %d: wrong sum", n, c.Rank())
						}
						return nil
					})
					// The same with the contribution in a separate source
					// buffer, the result buffer full of garbage: src must
					// be left as it was.
					run(t, p, func(c Comm) error {
						src := i64vec(c.Rank(), n)
						buf := bytes.Repeat([]byte{0xAA}, 8*n)
						if err := AllreduceVecChosenFrom(c, alg, src, buf, make([]byte, 8*n), 8, addI64, tagBase); err != nil {
							return err
						}
						if !bytes.Equal(buf, want) {
							t.Errorf("n=%d rank %d: wrong sum from a separate source", n, c.Rank())
						}
						if !bytes.Equal(src, i64vec(c.Rank(), n)) {
							t.Errorf("n=%d rank %d: the source buffer changed", n, c.Rank())
						}
						return nil
					})
					// Floating point: every rank must get the same bits.
					res := make([][]byte, p)
					run(t, p, func(c Comm) error {
						buf := make([]byte, 8*n)
						for i := range n {
							binary.LittleEndian.PutUint64(buf[8*i:], binary.LittleEndian.Uint64(fval(c.Rank()+i)))
						}
						res[c.Rank()] = buf
						return AllreduceVec(c, alg, buf, make([]byte, 8*n), 8, addF64, tagBase)
					})
					for r := 1; r < p; r++ {
						if !bytes.Equal(res[r], res[0]) {
							t.Errorf("n=%d: rank %d's float result differs from rank 0's", n, r)
						}
					}
				}
			})
		})
	}
}

func TestReduceScatterVec(t *testing.T) {
	forSizes(t, func(t *testing.T, p int) {
		for _, shape := range []string{"block", "varied", "empty", "long"} {
			counts := make([]int, p)
			for i := range counts {
				switch shape {
				case "block":
					counts[i] = 3
				case "varied":
					counts[i] = (i * 5) % 4 // some zero
				case "long":
					counts[i] = 5000 + i // uneven, above the eager limit
				}
			}
			offs := make([]int, p+1)
			for i, n := range counts {
				offs[i+1] = offs[i] + 8*n
			}
			n := offs[p] / 8
			want := i64sum(p, n)
			run(t, p, func(c Comm) error {
				r := c.Rank()
				buf := i64vec(r, n)
				if err := ReduceScatterVec(c, buf, make([]byte, len(buf)), offs, addI64, tagBase); err != nil {
					return err
				}
				if !bytes.Equal(buf[offs[r]:offs[r+1]], want[offs[r]:offs[r+1]]) {
					t.Errorf("%s rank %d: wrong block", shape, r)
				}
				return nil
			})
		}
	})
}

func TestBcastAlgorithms(t *testing.T) {
	for _, alg := range algorithms[CollBcast] {
		t.Run(alg, func(t *testing.T) {
			forRoots(t, func(t *testing.T, p, root int) {
				for _, n := range []int{0, 1, 5, 1000} {
					want := make([]byte, n)
					for i := range want {
						want[i] = byte(root*13 + i)
					}
					run(t, p, func(c Comm) error {
						buf := make([]byte, n)
						if c.Rank() == root {
							copy(buf, want)
						}
						if err := BcastAlg(c, alg, buf, root, tagBase); err != nil {
							return err
						}
						if !bytes.Equal(buf, want) {
							t.Errorf("n=%d rank %d: got %x", n, c.Rank(), buf)
						}
						return nil
					})
				}
			})
		})
	}
}

// TestBcastSegmented runs the pipelined broadcasts with segments far
// smaller than the default, so that lengths that are and are not
// multiples of the segment, a single short segment, many segments (more
// than the window of posted receives) and the empty buffer all occur.
func TestBcastSegmented(t *testing.T) {
	for _, fan := range []int{1, 2} {
		t.Run(fmt.Sprintf("fan=%d", fan), func(t *testing.T) {
			forRoots(t, func(t *testing.T, p, root int) {
				for _, tc := range []struct{ n, seg int }{{0, 4}, {1, 4}, {5, 5}, {7, 3}, {100, 1}, {1000, 7}, {1000, 4096}} {
					want := make([]byte, tc.n)
					for i := range want {
						want[i] = byte(root*31 + i*7)
					}
					run(t, p, func(c Comm) error {
						buf := make([]byte, tc.n)
						if c.Rank() == root {
							copy(buf, want)
						}
						if err := bcastSegmented(c, buf, c.Rank(), p, root, tagBase, fan, tc.seg); err != nil {
							return err
						}
						if !bytes.Equal(buf, want) {
							t.Errorf("n=%d seg=%d rank %d: wrong data", tc.n, tc.seg, c.Rank())
						}
						return nil
					})
				}
			})
		})
	}
}

// TestBcastSegmentedLength checks that a pipelined broadcast into a
// buffer of another length than root's is reported, not taken. Rank 2's
// error closes the fake network (runNet), so rank 0 or 1, if still
// sending to it, may fail with errClosed, as a rank does when its peer
// has gone; any other error on them is a failure.
func TestBcastSegmentedLength(t *testing.T) {
	for _, tc := range []struct{ mine, seg int }{{3, 4}, {8, 4}, {0, 4}, {9, 3}} {
		net := newFakeNet(3, false)
		errs := runNet(net, func(r int) Comm { return net.comm(r) }, func(c Comm) error {
			buf := make([]byte, 5)
			if c.Rank() == 2 {
				buf = make([]byte, tc.mine)
			}
			return bcastSegmented(c, buf, c.Rank(), 3, 0, 0, 1, tc.seg)
		})
		closedOrNil := func(err error) bool { return err == nil || errors.Is(err, errClosed) }
		if !closedOrNil(errs[0]) || !closedOrNil(errs[1]) || errs[2] == nil || errors.Is(errs[2], errClosed) {
			t.Errorf("length %d, segment %d: got errors %v", tc.mine, tc.seg, errs)
		}
	}
}

func TestBcastVarAlg(t *testing.T) {
	forRoots(t, func(t *testing.T, p, root int) {
		for _, tc := range []struct {
			alg string
			n   int
		}{{"", 0}, {"", 3}, {AlgBinomial, 1000}, {AlgBinomial, inlineBcast + 1}, {AlgScatterAllgather, 0}, {AlgScatterAllgather, 1001}, {AlgPipeline, 1001}, {"no_such_alg", 7}} {
			n := tc.n
			want := bytes.Repeat([]byte{byte(root + 1)}, n)
			run(t, p, func(c Comm) error {
				var buf []byte
				if c.Rank() == root {
					buf = want
				}
				got, err := BcastVarAlg(c, tc.alg, buf, root, tagBase)
				if err != nil {
					return err
				}
				if !bytes.Equal(got, want) {
					t.Errorf("%s n=%d rank %d: got %d bytes", tc.alg, n, c.Rank(), len(got))
				}
				return nil
			})
		}
	})
}

func TestAllgathervAlgorithms(t *testing.T) {
	for _, alg := range algorithms[CollAllgather] {
		t.Run(alg, func(t *testing.T) {
			forSizes(t, func(t *testing.T, p int) {
				for _, varied := range []bool{false, true} {
					size := func(i int) int {
						if varied {
							return len(payload(i, 1))
						}
						return 5
					}
					offs := make([]int, p+1)
					for i := range p {
						offs[i+1] = offs[i] + size(i)
					}
					want := make([]byte, 0, offs[p])
					for i := range p {
						want = append(want, bytes.Repeat([]byte{byte(i + 1)}, size(i))...)
					}
					sit := Situation{Ranks: p, Fixed: !varied}
					run(t, p, func(c Comm) error {
						r := c.Rank()
						buf := make([]byte, offs[p])
						copy(buf[offs[r]:], want[offs[r]:offs[r+1]])
						err := AllgathervBuf(c, alg, buf, offs, tagBase)
						if !Applicable(CollAllgather, alg, sit) {
							if !errors.Is(err, ErrArg) {
								t.Errorf("inapplicable: got %v, want ErrArg", err)
							}
							return nil
						}
						if err != nil {
							return err
						}
						if !bytes.Equal(buf, want) {
							t.Errorf("varied=%v rank %d: got %x want %x", varied, r, buf, want)
						}
						return nil
					})
				}
			})
		})
	}
}

func TestAllgatherSel(t *testing.T) {
	forSizes(t, func(t *testing.T, p int) {
		run(t, p, func(c Comm) error {
			got, err := AllgatherSel(c, payload(c.Rank(), 2), tagBase)
			if err != nil {
				return err
			}
			checkBlocks(t, c.Rank(), got, p, func(i int) []byte { return payload(i, 2) })
			return nil
		})
	})
}

func TestAlltoallAlgorithms(t *testing.T) {
	for _, alg := range algorithms[CollAlltoall] {
		t.Run(alg, func(t *testing.T) {
			forSizes(t, func(t *testing.T, p int) {
				for _, blk := range []int{0, 1, 3, 100} {
					block := func(from, to int) []byte {
						b := make([]byte, blk)
						for i := range b {
							b[i] = byte(from*37 + to*11 + i)
						}
						return b
					}
					run(t, p, func(c Comm) error {
						r := c.Rank()
						send := make([]byte, 0, p*blk)
						for j := range p {
							send = append(send, block(r, j)...)
						}
						recv := make([]byte, p*blk)
						if err := AlltoallBuf(c, alg, send, recv, blk, tagBase); err != nil {
							return err
						}
						for j := range p {
							if !bytes.Equal(recv[j*blk:(j+1)*blk], block(j, r)) {
								t.Errorf("blk=%d rank %d: block from %d wrong", blk, r, j)
							}
						}
						return nil
					})
				}
			})
		})
	}
}

func TestAlltoallScattered(t *testing.T) {
	forSizes(t, func(t *testing.T, p int) {
		run(t, p, func(c Comm) error {
			r := c.Rank()
			parts := make([][]byte, p)
			for j := range parts {
				parts[j] = payload(r, j)
			}
			// Odd ranks use the scattered exchange and even ones pairwise:
			// the two must interoperate.
			var got [][]byte
			var err error
			if r%2 == 1 {
				got, err = alltoallScattered(c, parts, nil, r, p, tagBase)
			} else {
				got, err = Alltoall(c, parts, tagBase)
			}
			if err != nil {
				return err
			}
			for i := range p {
				if !bytes.Equal(got[i], payload(i, r)) {
					t.Errorf("rank %d: block from %d = %v", r, i, got[i])
				}
			}
			return nil
		})
	})
}

// TestAlltoallInto: parts received straight into given buffers (some
// ranks giving them for some parts only, some ranks none, over both
// algorithms) interoperate with Alltoall, land in those buffers, and a
// part longer than its buffer is an error, not an overrun.
func TestAlltoallInto(t *testing.T) {
	forSizes(t, func(t *testing.T, p int) {
		run(t, p, func(c Comm) error {
			r := c.Rank()
			parts := make([][]byte, p)
			for j := range parts {
				parts[j] = payload(r, j)
			}
			var into [][]byte
			if r%3 != 2 {
				into = make([][]byte, p)
				for i := range into {
					if i%2 == r%2 {
						into[i] = make([]byte, len(payload(i, r))+1) // room to spare
					}
				}
			}
			var got [][]byte
			var err error
			switch {
			case into == nil:
				got, err = Alltoall(c, parts, tagBase)
			case r%2 == 1:
				got, err = alltoallScattered(c, parts, into, r, p, tagBase)
			default:
				got, err = AlltoallInto(c, parts, into, tagBase)
			}
			if err != nil {
				return err
			}
			for i := range p {
				if !bytes.Equal(got[i], payload(i, r)) {
					t.Errorf("rank %d: block from %d = %v", r, i, got[i])
				}
				if into != nil && into[i] != nil && len(got[i]) > 0 && &got[i][0] != &into[i][0] {
					t.Errorf("rank %d: block from %d not received into its buffer", r, i)
				}
			}
			return nil
		})
	})
	run(t, 2, func(c Comm) error {
		r := c.Rank()
		parts := [][]byte{make([]byte, 8), make([]byte, 8)}
		into := [][]byte{make([]byte, 8), make([]byte, 4)} // rank 1's 8 bytes do not fit
		_, err := AlltoallInto(c, parts, into, tagBase)
		if r == 0 && err == nil {
			t.Error("8 bytes received into a 4-byte buffer without an error")
		}
		return nil
	})
}

func TestSelect(t *testing.T) {
	rules, err := ParseRules(CollAllreduce, "recursive_doubling:100,rabenseifner:1000,ring")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		sit  Situation
		want string
	}{
		{Situation{Ranks: 4, Bytes: 8, Commutative: true, Elems: 1}, AlgRecursiveDoubling},
		{Situation{Ranks: 4, Bytes: 500, Commutative: true, Elems: 60}, AlgRabenseifner},
		{Situation{Ranks: 4, Bytes: 5000, Commutative: true, Elems: 600}, AlgRing},
		{Situation{Ranks: 4, Bytes: 5000, Commutative: false, Elems: 600}, AlgReduceBcast},
		// Too few elements for Rabenseifner's segments: ring does not fit either.
		{Situation{Ranks: 8, Bytes: 500, Commutative: true, Elems: 3}, AlgReduceBcast},
	}
	for _, tc := range cases {
		if got := SelectFrom(rules, CollAllreduce, tc.sit); got != tc.want {
			t.Errorf("%+v: got %s, want %s", tc.sit, got, tc.want)
		}
	}
	if got := FormatRules(rules); got != "recursive_doubling:100,rabenseifner:1000,ring" {
		t.Errorf("FormatRules: %s", got)
	}
	for _, bad := range []string{"", "nosuch", "ring:x", "ring:-1", "bruck"} {
		if _, err := ParseRules(CollAllreduce, bad); err == nil {
			t.Errorf("ParseRules(%q) accepted", bad)
		}
	}
	if _, err := ParseRules("nosuch", "ring"); err == nil {
		t.Error("unknown collective accepted")
	}
	if got := SelectFrom(nil, CollAlltoall, Situation{Ranks: 3, Bytes: 1, Fixed: true}); got != AlgPairwise {
		t.Errorf("empty rules: got %s", got)
	}
	// The default table parses and every collective has an entry.
	for _, e := range Table() {
		if len(e.Rules) == 0 {
			t.Errorf("%s: no rules", e.Coll)
		}
	}
	for coll, def := range DefaultRules {
		if _, err := ParseRules(coll, def); err != nil {
			t.Error(err)
		}
	}
}

// TestSelectPipelined checks when the pipelined broadcasts apply:
// processes talking through shared memory, more than two ranks, more than one segment, and for the chain at least one
// segment per hop.
func TestSelectPipelined(t *testing.T) {
	seg, _ := Segment()
	rules, err := ParseRules(CollBcast, "pipeline,binary_tree,binomial")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		ranks, bytes int
		want         string
	}{
		{2, 64 * seg, AlgBinomial},
		{3, seg, AlgBinomial},
		{3, seg + 1, AlgBinaryTree},
		{3, 2 * seg, AlgPipeline},
		{4, 2 * seg, AlgBinaryTree},
		{4, 3 * seg, AlgPipeline},
		{17, 8 * seg, AlgBinaryTree},
		{17, 16 * seg, AlgPipeline},
	} {
		if got := SelectFrom(rules, CollBcast, Situation{Ranks: tc.ranks, Bytes: tc.bytes, Fixed: true, SharedMemory: true}); got != tc.want {
			t.Errorf("%d ranks, %d bytes: got %s, want %s", tc.ranks, tc.bytes, got, tc.want)
		}
		// Goroutine ranks of one process, or sockets: never pipelined.
		if got := SelectFrom(rules, CollBcast, Situation{Ranks: tc.ranks, Bytes: tc.bytes, Fixed: true}); got != AlgBinomial {
			t.Errorf("%d ranks, %d bytes not over shared memory: got %s, want binomial", tc.ranks, tc.bytes, got)
		}
	}
}

func TestParseSegment(t *testing.T) {
	for _, tc := range []struct {
		v    string
		want int
		bad  bool
	}{
		{"", DefaultSegment, false},
		{"65536", 65536, false},
		{" 1024 ", 1024, false},
		{"1023", DefaultSegment, true},
		{"67108865", DefaultSegment, true},
		{"64k", DefaultSegment, true},
		{"-5", DefaultSegment, true},
	} {
		got, err := parseSegment(func(k string) (string, bool) {
			if k != SegmentEnv {
				t.Errorf("looked up %s", k)
			}
			return tc.v, true
		})
		if got != tc.want || (err != nil) != tc.bad {
			t.Errorf("%s=%q: got %d, %v; want %d, error %v", SegmentEnv, tc.v, got, err, tc.want, tc.bad)
		}
	}
}

func TestEnvOverride(t *testing.T) {
	env := map[string]string{
		"MPIGO_COLL_ALLREDUCE": "ring",
		"MPIGO_COLL_BCAST":     "binomial:x",
	}
	tab := buildTable(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	ar := tab[CollAllreduce]
	if ar.Source != "MPIGO_COLL_ALLREDUCE" || SelectFrom(ar.Rules, CollAllreduce, Situation{Ranks: 4, Bytes: 8, Commutative: true, Elems: 4}) != AlgRing {
		t.Errorf("allreduce override not in force: %+v", ar)
	}
	bc := tab[CollBcast]
	if bc.Err == nil || bc.Source != "default" || FormatRules(bc.Rules) != DefaultRules[CollBcast] {
		t.Errorf("a bad bcast override must leave the default and report: %+v", bc)
	}
	if tab[CollAlltoall].Source != "default" {
		t.Errorf("alltoall: %+v", tab[CollAlltoall])
	}
}

func TestReduceVec(t *testing.T) {
	for _, alg := range algorithms[CollReduce] {
		t.Run(alg, func(t *testing.T) {
			forRoots(t, func(t *testing.T, p, root int) {
				for _, n := range []int{0, 1, 7, 100, 20_000} {
					want := i64sum(p, n)
					run(t, p, func(c Comm) error {
						buf := i64vec(c.Rank(), n)
						err := ReduceVec(c, alg, buf, make([]byte, len(buf)), 8, addI64, root, tagBase)
						if !Applicable(CollReduce, alg, Situation{Ranks: p, Commutative: true, Elems: n}) {
							if !errors.Is(err, ErrArg) {
								t.Errorf("n=%d: inapplicable algorithm gave %v", n, err)
							}
							return nil
						}
						if err != nil {
							return err
						}
						if c.Rank() == root && !bytes.Equal(buf, want) {
							t.Errorf("n=%d: wrong sum at root", n)
						}
						return nil
					})
				}
			})
		})
	}
}

func TestScanVec(t *testing.T) {
	forSizes(t, func(t *testing.T, p int) {
		for _, inclusive := range []bool{true, false} {
			run(t, p, func(c Comm) error {
				r := c.Rank()
				buf := i64vec(r, 5)
				orig := bytes.Clone(buf)
				have, err := ScanVec(c, buf, make([]byte, 2*len(buf)), addI64, inclusive, tagBase)
				if err != nil {
					return err
				}
				hi := r
				if inclusive {
					hi = r + 1
				}
				switch {
				case have != (hi > 0):
					t.Errorf("inclusive=%v rank %d: have=%v", inclusive, r, have)
				case have && !bytes.Equal(buf, i64sum(hi, 5)):
					t.Errorf("inclusive=%v rank %d: wrong prefix", inclusive, r)
				case !have && !bytes.Equal(buf, orig):
					t.Errorf("rank 0's exclusive buffer changed")
				}
				return nil
			})
		}
	})
}

// TestScanTwoRanks: between two ranks every scan road (ScanVec, Scan,
// Exscan; inclusive and exclusive) is one message from rank 0 to rank 1,
// so the roads stay alike message for message, and a rank 0 whose peer
// never takes part is not held (eager sends). Results are checked by
// TestScan, TestExscan and TestScanVec.
func TestScanTwoRanks(t *testing.T) {
	roads := []struct {
		name string
		f    func(c Comm) error
	}{
		{"ScanVec inclusive", func(c Comm) error {
			buf := i64vec(c.Rank(), 3)
			_, err := ScanVec(c, buf, make([]byte, 2*len(buf)), addI64, true, tagBase)
			return err
		}},
		{"ScanVec exclusive", func(c Comm) error {
			buf := i64vec(c.Rank(), 3)
			_, err := ScanVec(c, buf, make([]byte, 2*len(buf)), addI64, false, tagBase)
			return err
		}},
		{"Scan", func(c Comm) error {
			_, err := Scan(c, []byte{byte(c.Rank())}, concat, false, tagBase)
			return err
		}},
		{"Exscan", func(c Comm) error {
			_, err := Exscan(c, []byte{byte(c.Rank())}, concat, false, tagBase)
			return err
		}},
	}
	for _, road := range roads {
		t.Run(road.name, func(t *testing.T) {
			net := newFakeNet(2, false)
			errs := runNet(net, func(r int) Comm { return net.comm(r) }, road.f)
			if err := errors.Join(errs...); err != nil {
				t.Fatal(err)
			}
			for k, q := range net.queues {
				if k.src != 0 || k.dst != 1 {
					t.Errorf("a message or receive from %d to %d (want only 0 to 1)", k.src, k.dst)
				}
				if len(q.msgs) > 0 || len(q.recv) > 0 {
					t.Errorf("%d to %d: %d messages left, %d receives", k.src, k.dst, len(q.msgs), len(q.recv))
				}
			}
			// Rank 0 alone: it sends and returns.
			net = newFakeNet(2, false)
			done := make(chan error, 1)
			go func() { done <- road.f(net.comm(0)) }()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("rank 0 alone: %v", err)
				}
			case <-time.After(runTimeout):
				net.close()
				t.Errorf("rank 0 alone: still waiting after %v (%v)", runTimeout, <-done)
			}
		})
	}
}

// The default allreduce and reduce rules send goroutine ranks of one
// process to their meeting in memory at every size (so that ranks passing
// different lengths still meet, and learn of it), and nobody else.
func TestSelectInProcess(t *testing.T) {
	for _, coll := range []string{CollAllreduce, CollReduce} {
		rules, err := ParseRules(coll, DefaultRules[coll])
		if err != nil {
			t.Fatal(err)
		}
		for _, bytes := range []int{8, 4096, 1 << 20, 1 << 30} {
			s := Situation{Ranks: 4, Bytes: bytes, Commutative: true, Fixed: true, Elems: bytes / 8, InProcess: true}
			if got := SelectFrom(rules, coll, s); got != AlgInProcess {
				t.Errorf("%s, %d bytes in one process: got %s", coll, bytes, got)
			}
			s.InProcess = false
			if got := SelectFrom(rules, coll, s); got == AlgInProcess {
				t.Errorf("%s, %d bytes between processes: got %s", coll, bytes, got)
			}
		}
	}
	for _, c := range []string{CollBcast, CollAllgather} {
		if Applicable(c, AlgInProcess, Situation{Ranks: 2, InProcess: true, Fixed: true, Commutative: true}) {
			t.Errorf("in_process applies to %s", c)
		}
	}
}
