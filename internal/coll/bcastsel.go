package coll

import (
	"encoding/binary"
	"fmt"
)

// BcastAlg is Bcast with a choice of algorithm; "" selects one by size with
// Select. All ranks must pass the same alg and buffers of the same length.
//
//   - binomial: lg p rounds of whole-buffer messages (Bcast);
//   - scatter_allgather (van de Geijn): a binomial scatter gives relative
//     rank i the i-th of p segments, then a ring allgather (without the
//     link into root, whose buffer is never written) assembles them:
//     lg p + p-1 rounds, but root sends only n bytes in total and every
//     rank about 2n, against n·lg p for root in the binomial tree;
//   - pipeline: the buffer travels in segments (Segment bytes each) down a
//     chain root → root+1 → ...; every rank forwards a segment as soon as
//     it has it, so p-1 hops cost about (p-2+S) segment times for S
//     segments, and every rank sends and receives n bytes once;
//   - binary_tree: the same segments down a binary tree (depth lg p, each
//     inner rank sends 2n).
//
// Uses tag..tag+1.
func BcastAlg(c Comm, alg string, buf []byte, root, tag int) error {
	return wrap("bcast", bcastAlg(c, alg, buf, root, tag))
}

func bcastAlg(c Comm, alg string, buf []byte, root, tag int) error {
	p, r, err := setupRoot(c, root)
	if err != nil {
		return err
	}
	if alg == "" {
		alg = Select(CollBcast, Situation{Ranks: p, Bytes: len(buf), Fixed: true})
	}
	switch alg {
	case AlgBinomial:
		return bcast(c, buf, root, tag)
	case AlgScatterAllgather:
		return bcastScatterAllgather(c, buf, r, p, root, tag)
	case AlgPipeline, AlgBinaryTree:
		seg, _ := Segment()
		return bcastSegmented(c, buf, r, p, root, tag, fanOut(alg), seg)
	}
	return fmt.Errorf("%w: unknown bcast algorithm %q", ErrArg, alg)
}

func bcastScatterAllgather(c Comm, buf []byte, r, p, root, tag int) error {
	if p == 1 {
		return nil
	}
	sg := segs{n: len(buf), esz: 1, k: p}
	seg := func(lo, hi int) []byte { return buf[sg.off(lo):sg.off(hi)] }
	vr := toRel(r, root, p)
	m := subtree(vr, p)
	if vr != 0 {
		if err := recvExact(c, seg(vr, min(vr+m, p)), toRank(vr-m, root, p), tag); err != nil {
			return err
		}
	}
	var reqs []Request
	for k := m / 2; k > 0; k /= 2 {
		if vr+k >= p {
			continue
		}
		dst := toRank(vr+k, root, p)
		q, err := c.Isend(seg(vr+k, min(vr+2*k, p)), dst, tag)
		if err != nil {
			return fmt.Errorf("send to %d: %w", dst, err)
		}
		reqs = append(reqs, q)
	}
	if err := waitAll(reqs); err != nil {
		return err
	}
	// Ring allgather without the link into root, which has every segment
	// and whose buffer must not be written.
	right, left := toRank(vr+1, root, p), toRank(vr-1+p, root, p)
	for s := 0; s < p-1; s++ {
		si, ri := (vr-s+p)%p, (vr-s-1+2*p)%p
		var err error
		switch {
		case vr == 0:
			err = c.Send(seg(si, si+1), right, tag+1)
			if err != nil {
				err = fmt.Errorf("send to %d: %w", right, err)
			}
		case vr == p-1:
			err = recvExact(c, seg(ri, ri+1), left, tag+1)
		default:
			err = exchange2(c, seg(si, si+1), right, seg(ri, ri+1), left, tag+1)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// BcastVarAlg is BcastVar with algorithm selection at root. Root uses alg,
// or if alg is "" picks one by the buffer's length, which only it knows
// (other ranks' alg is ignored). A buffer of at most 64 KiB going by
// binomial tree travels with one trailing flag byte; otherwise the tree
// first carries its length and the algorithm (9 bytes), and the buffer
// follows with BcastAlg. Uses tag..tag+2.
func BcastVarAlg(c Comm, alg string, buf []byte, root, tag int) ([]byte, error) {
	b, err := bcastVarAlg(c, alg, buf, root, tag)
	return b, wrap("bcast", err)
}

func bcastVarAlg(c Comm, alg string, buf []byte, root, tag int) ([]byte, error) {
	p, r, err := setupRoot(c, root)
	if err != nil {
		return nil, err
	}
	if p == 1 {
		return buf, nil
	}
	var msg []byte
	if r == root {
		if alg == "" {
			alg = Select(CollBcast, Situation{Ranks: p, Bytes: len(buf), Fixed: true})
		}
		code := bcastCode(alg)
		if code == 0 {
			// Only root sees alg: failing here would leave the others
			// waiting for the header, so an unknown name broadcasts by
			// binomial tree, as it always has.
			alg, code = AlgBinomial, bcastCode(AlgBinomial)
		}
		if alg == AlgBinomial && len(buf) <= inlineBcast {
			msg = make([]byte, len(buf)+1)
			copy(msg, buf)
		} else {
			msg = binary.LittleEndian.AppendUint64(nil, uint64(len(buf)))
			msg = append(msg, code)
		}
	}
	msg, err = bcastVar(c, msg, root, tag)
	if err != nil {
		return nil, err
	}
	if len(msg) == 0 {
		return nil, fmt.Errorf("%w: empty broadcast header", ErrMessage)
	}
	if msg[len(msg)-1] == 0 {
		if r == root {
			return buf, nil
		}
		return msg[: len(msg)-1 : len(msg)-1], nil
	}
	if len(msg) != 9 || int(msg[8]) > len(algorithms[CollBcast]) {
		return nil, fmt.Errorf("%w: bad broadcast header", ErrMessage)
	}
	n := binary.LittleEndian.Uint64(msg)
	if r != root {
		if n > 1<<46 {
			return nil, fmt.Errorf("%w: broadcast of %d bytes", ErrMessage, n)
		}
		buf = make([]byte, n)
	}
	return buf, bcastAlg(c, algorithms[CollBcast][msg[8]-1], buf, root, tag+1)
}

// bcastCode is the byte that names alg in BcastVarAlg's header: its
// position in algorithms[CollBcast] plus one (0: unknown).
func bcastCode(alg string) byte {
	for i, a := range algorithms[CollBcast] {
		if a == alg {
			return byte(i + 1)
		}
	}
	return 0
}

// fanOut is the fan-out of a segmented broadcast's tree.
func fanOut(alg string) int {
	if alg == AlgBinaryTree {
		return 2
	}
	return 1
}

// inlineBcast is the longest buffer BcastVarAlg sends inline, in one
// binomial broadcast with its flag byte; a longer one is announced first so
// that every rank receives it straight into a buffer of the right size,
// and root need not copy it.
const inlineBcast = 64 << 10
