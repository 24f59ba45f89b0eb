package coll

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
)

var sizes = []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17} // every size up to 17, as the issue asks: powers of two and all the others

// roots returns the roots to test for p ranks: 0, p-1 and the middle.
func roots(p int) []int {
	rs := []int{0}
	for _, r := range []int{p - 1, p / 2} {
		if !slices.Contains(rs, r) {
			rs = append(rs, r)
		}
	}
	return rs
}

// forSizes runs fn as a subtest for every p in sizes.
func forSizes(t *testing.T, fn func(t *testing.T, p int)) {
	for _, p := range sizes {
		t.Run(fmt.Sprintf("p=%d", p), func(t *testing.T) { fn(t, p) })
	}
}

// forRoots runs fn as a subtest for every p in sizes and every root.
func forRoots(t *testing.T, fn func(t *testing.T, p, root int)) {
	forSizes(t, func(t *testing.T, p int) {
		for _, root := range roots(p) {
			t.Run(fmt.Sprintf("root=%d", root), func(t *testing.T) { fn(t, p, root) })
		}
	})
}

// guarded returns a copy of b with spare capacity filled with a pattern, so
// that writes past len(b) (e.g. an in-place append) can be detected.
func guarded(b []byte) []byte {
	g := make([]byte, len(b), len(b)+16)
	copy(g, b)
	full := g[:cap(g)]
	for i := len(b); i < len(full); i++ {
		full[i] = 0xEE
	}
	return g
}

// checkUnchanged fails if buf, including its spare capacity, differs from
// a snapshot taken with snapshot.
func checkUnchanged(t *testing.T, what string, buf, snap []byte) {
	t.Helper()
	if !bytes.Equal(buf[:cap(buf)], snap) {
		t.Errorf("%s: caller's buffer modified: %q, want %q", what, buf[:cap(buf)], snap)
	}
}

func snapshot(buf []byte) []byte { return bytes.Clone(buf[:cap(buf)]) }

// label is rank r's operand for the concatenation tests.
func label(r int) []byte { return []byte(strconv.Itoa(r)) }

// concat is a non-commutative, growing Combine: a ⊕ b = a + "|" + b. It
// works in acc's memory both ways, to catch collectives that pass memory
// they do not own as acc.
func concat(acc, in []byte, accFirst bool) ([]byte, error) {
	if accFirst {
		return append(append(acc, '|'), in...), nil
	}
	old := len(acc)
	acc = append(acc, make([]byte, len(in)+1)...)
	copy(acc[len(in)+1:], acc[:old])
	copy(acc, in)
	acc[len(in)] = '|'
	return acc, nil
}

// labels returns "lo|lo+1|...|hi-1".
func labels(lo, hi int) string {
	var s []string
	for r := lo; r < hi; r++ {
		s = append(s, string(label(r)))
	}
	return strings.Join(s, "|")
}

// sumVec is a commutative Combine on little-endian int64 vectors, in place.
func sumVec(acc, in []byte, _ bool) ([]byte, error) {
	if len(acc) != len(in) {
		return nil, fmt.Errorf("sum: lengths %d and %d", len(acc), len(in))
	}
	for i := 0; i < len(acc); i += 8 {
		v := binary.LittleEndian.Uint64(acc[i:]) + binary.LittleEndian.Uint64(in[i:])
		binary.LittleEndian.PutUint64(acc[i:], v)
	}
	return acc, nil
}

const vecLen = 3

// vec is rank r's operand for the sum tests.
func vec(r int) []byte {
	b := make([]byte, 8*vecLen)
	for i := range vecLen {
		binary.LittleEndian.PutUint64(b[8*i:], uint64(1000*r+i+1))
	}
	return b
}

// vecSum returns the sum of vec(r) for r in lo..hi-1.
func vecSum(lo, hi int) []byte {
	b := make([]byte, 8*vecLen)
	for r := lo; r < hi; r++ {
		b, _ = sumVec(b, vec(r), true)
	}
	return b
}

// merge is a commutative, associative, growing Combine: the sorted
// concatenation of its operands (a multiset union).
func merge(acc, in []byte, _ bool) ([]byte, error) {
	acc = append(acc, in...)
	slices.Sort(acc)
	return acc, nil
}

// bag is rank r's operand for the merge tests: r%3+1 copies of byte r.
func bag(r int) []byte { return bytes.Repeat([]byte{byte(r)}, r%3+1) }

// bagUnion returns the merge of bag(r) for r in lo..hi-1.
func bagUnion(lo, hi int) []byte {
	var b []byte
	for r := lo; r < hi; r++ {
		b, _ = merge(b, bag(r), true)
	}
	return b
}

// fsum is a commutative Combine on one float64, which is not associative,
// so different combining orders give different bits.
func fsum(acc, in []byte, _ bool) ([]byte, error) {
	v := math.Float64frombits(binary.LittleEndian.Uint64(acc)) + math.Float64frombits(binary.LittleEndian.Uint64(in))
	binary.LittleEndian.PutUint64(acc, math.Float64bits(v))
	return acc, nil
}

func fval(r int) []byte {
	v := []float64{1e16, 1, -1e16, 0.1, 3.3, -7e-3, 1e-8}[r%7] * float64(r+1)
	return binary.LittleEndian.AppendUint64(nil, math.Float64bits(v))
}

// payload is a variable-size block identified by (a, b); some are empty.
func payload(a, b int) []byte {
	n := (a*7 + b*3) % 6
	out := make([]byte, n)
	for i := range out {
		out[i] = byte(a*31 + b*17 + i)
	}
	return out
}

// reduction is one Combine with its operands and expected results.
type reduction struct {
	name        string
	f           Combine
	commutative bool
	in          func(r int) []byte
	want        func(lo, hi int) []byte // reduction of ranks lo..hi-1
}

var reductions = []reduction{
	{"concat", concat, false, label, func(lo, hi int) []byte { return []byte(labels(lo, hi)) }},
	{"sum", sumVec, true, vec, vecSum},
	{"merge", merge, true, bag, bagUnion},
	// A non-commutative operation declared commutative must still give a
	// consistent (if unordered) result; checked separately. Declaring a
	// commutative one non-commutative must work exactly:
	{"sum-as-noncommutative", sumVec, false, vec, vecSum},
	{"merge-as-noncommutative", merge, false, bag, bagUnion},
}
