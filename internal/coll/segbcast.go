package coll

import "fmt"

// Segmented, pipelined broadcast.
//
// A long broadcast down a tree moves the whole buffer one edge at a time:
// a rank forwards nothing until all of it has arrived, so the tree's depth
// multiplies the time of one whole-buffer copy. Cutting the buffer into
// segments lets a rank forward segment i while segment i+1 is still on its
// way: with S segments and depth d the broadcast takes about (d + S - 1)
// segment times instead of d whole-buffer times. This is what Open MPI's
// tuned component (pipeline, binary and split-binary trees with a segment
// size) and MPICH's large-message broadcasts do; the code here is our own.
//
// Every rank knows the tree and the segment size, so nothing is
// negotiated: each non-root pre-posts the receives of the next window of
// segments from its parent (a receive is therefore always waiting when a
// segment arrives, and an eager segment is copied once, straight into
// place), and forwards each segment to its children as soon as it has it.

// DefaultSegment is the segment size of the pipelined algorithms when
// MPIGO_COLL_SEGMENT does not set one (bytes).
const DefaultSegment = 128 << 10

// segWindow is how many segment receives a rank keeps posted ahead.
const segWindow = 8

// treeShape is a tree over relative ranks (root is 0) in heap order: the
// parent of vr is (vr-1)/fan and its children are fan·vr+1 ... fan·vr+fan.
// fan 1 is a chain (pipeline), fan 2 a binary tree.
type treeShape struct{ fan int }

func (t treeShape) parent(vr int) int { return (vr - 1) / t.fan }

// children returns the range [lo, hi) of vr's children among p ranks.
func (t treeShape) children(vr, p int) (lo, hi int) {
	lo = t.fan*vr + 1
	return min(lo, p), min(lo+t.fan, p)
}

// bcastSegmented broadcasts buf from root down the tree of the given
// fan-out in segments of seg bytes (the last one shorter). All ranks pass
// buffers of the same length and the same seg. Uses tag only: segments
// between one pair of ranks are matched in order.
func bcastSegmented(c Comm, buf []byte, r, p, root, tag, fan, seg int) error {
	if p == 1 {
		return nil
	}
	if seg <= 0 {
		return fmt.Errorf("%w: segment size %d", ErrArg, seg)
	}
	t := treeShape{fan: fan}
	vr := toRel(r, root, p)
	clo, chi := t.children(vr, p)
	// An empty buffer still travels as one empty segment, so that a rank
	// whose buffer has another length learns of it (ErrMessage) instead of
	// waiting for segments that never come.
	nseg := max((len(buf)+seg-1)/seg, 1)
	part := func(i int) []byte { return buf[min(i*seg, len(buf)):min((i+1)*seg, len(buf))] }

	var recvs []Request
	parent := -1
	if vr != 0 {
		parent = toRank(t.parent(vr), root, p)
		recvs = make([]Request, min(nseg, segWindow))
		for i := range recvs {
			q, err := c.Irecv(part(i), parent, tag)
			if err != nil {
				return fmt.Errorf("recv from %d: %w", parent, err)
			}
			recvs[i] = q
		}
	}
	sends := make([]Request, 0, nseg*(chi-clo))
	fail := func(err error) error {
		// Complete what was started before reporting: the sends read buf
		// and the receives write it.
		for _, q := range sends {
			q.Wait() //nolint:errcheck // the first error is the one reported
		}
		return err
	}
	for i := range nseg {
		b := part(i)
		if vr != 0 {
			q := recvs[i%segWindow]
			n, err := q.Wait()
			if err != nil {
				return fail(fmt.Errorf("recv from %d: %w", parent, err))
			}
			if n != len(b) {
				return fail(fmt.Errorf("%w: segment %d of %d bytes from %d, want %d", ErrMessage, i, n, parent, len(b)))
			}
			if j := i + segWindow; j < nseg {
				if recvs[i%segWindow], err = c.Irecv(part(j), parent, tag); err != nil {
					return fail(fmt.Errorf("recv from %d: %w", parent, err))
				}
			}
		}
		for ch := clo; ch < chi; ch++ {
			dst := toRank(ch, root, p)
			q, err := c.Isend(b, dst, tag)
			if err != nil {
				return fail(fmt.Errorf("send to %d: %w", dst, err))
			}
			sends = append(sends, q)
		}
	}
	return waitAll(sends)
}
