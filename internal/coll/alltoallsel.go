package coll

import (
	"fmt"
)

// scatteredBatch is how many exchanges the scattered alltoall keeps in
// flight at once.
const scatteredBatch = 32

// AlltoallBuf sends block j of sendbuf to rank j and receives rank j's
// block into block j of recvbuf; every block is blk bytes on every rank
// (MPI_Alltoall). sendbuf and recvbuf are p·blk bytes and must not overlap.
// alg "" selects by blk:
//
//   - bruck: lg p rounds; in round k each rank sends the blocks whose
//     rotated index has bit k set (about half of them) to rank r+k; best
//     for tiny blocks, where rounds cost more than bytes;
//   - scattered: every receive and send posted at once (in batches of 32),
//     so all pairs move concurrently;
//   - pairwise: p-1 rounds, in round k exchanging with r+k and r-k; one
//     peer at a time, for long blocks.
//
// Uses tag only.
func AlltoallBuf(c Comm, alg string, sendbuf, recvbuf []byte, blk, tag int) error {
	return wrap("alltoall", alltoallBuf(c, alg, sendbuf, recvbuf, blk, tag))
}

func alltoallBuf(c Comm, alg string, sendbuf, recvbuf []byte, blk, tag int) error {
	p, r, err := setup(c)
	if err != nil {
		return err
	}
	if blk < 0 || len(sendbuf) != p*blk || len(recvbuf) != p*blk {
		return fmt.Errorf("%w: buffers of %d and %d bytes for %d blocks of %d", ErrArg, len(sendbuf), len(recvbuf), p, blk)
	}
	if alg == "" {
		alg = Select(CollAlltoall, Situation{Ranks: p, Bytes: blk, Fixed: true})
	}
	blockOf := func(b []byte, i int) []byte { return b[i*blk : (i+1)*blk] }
	copy(blockOf(recvbuf, r), blockOf(sendbuf, r))
	if p == 1 {
		return nil
	}
	if alg == AlgBruck && p <= 3 {
		// With 2 or 3 ranks, Bruck's rounds are the pairwise exchange's,
		// message for message (round k sends one block to r+k and takes
		// one from r-k, on one tag), without its copies and its three
		// buffers to allocate.
		alg = AlgPairwise
	}
	switch alg {
	case AlgPairwise:
		for k := 1; k < p; k++ {
			dst, src := (r+k)%p, (r-k+p)%p
			if err := exchange2(c, blockOf(sendbuf, dst), dst, blockOf(recvbuf, src), src, tag); err != nil {
				return err
			}
		}
		return nil
	case AlgScattered:
		for lo := 1; lo < p; lo += scatteredBatch {
			hi := min(lo+scatteredBatch, p)
			reqs := make([]Request, 0, 2*(hi-lo))
			for k := lo; k < hi; k++ {
				src := (r - k + p) % p
				q, err := c.Irecv(blockOf(recvbuf, src), src, tag)
				if err != nil {
					return fmt.Errorf("recv from %d: %w", src, err)
				}
				reqs = append(reqs, q)
			}
			for k := lo; k < hi; k++ {
				dst := (r + k) % p
				q, err := c.Isend(blockOf(sendbuf, dst), dst, tag)
				if err != nil {
					return fmt.Errorf("send to %d: %w", dst, err)
				}
				reqs = append(reqs, q)
			}
			for i, q := range reqs {
				n, err := q.Wait()
				if err != nil {
					return fmt.Errorf("alltoall exchange: %w", err)
				}
				if i < hi-lo && n != blk {
					return fmt.Errorf("%w: %d bytes, expected %d", ErrMessage, n, blk)
				}
			}
		}
		return nil
	case AlgBruck:
		return alltoallBruck(c, sendbuf, recvbuf, blk, r, p, tag)
	}
	return fmt.Errorf("%w: unknown alltoall algorithm %q", ErrArg, alg)
}

func alltoallBruck(c Comm, sendbuf, recvbuf []byte, blk, r, p, tag int) error {
	// tmp position i holds the block bound for rank (r+i) mod p; after the
	// rounds it holds the block that came from rank (r-i) mod p.
	tmp := make([]byte, p*blk)
	for i := range p {
		copy(tmp[i*blk:], sendbuf[((r+i)%p)*blk:((r+i)%p+1)*blk])
	}
	pack := make([]byte, 0, (p/2+1)*blk)
	in := make([]byte, (p/2+1)*blk)
	for k := 1; k < p; k <<= 1 {
		pack = pack[:0]
		n := 0
		for i := k; i < p; i++ {
			if i&k != 0 {
				pack = append(pack, tmp[i*blk:(i+1)*blk]...)
				n++
			}
		}
		dst, src := (r+k)%p, (r-k+p)%p
		if err := exchange2(c, pack, dst, in[:n*blk], src, tag); err != nil {
			return err
		}
		j := 0
		for i := k; i < p; i++ {
			if i&k != 0 {
				copy(tmp[i*blk:(i+1)*blk], in[j*blk:(j+1)*blk])
				j++
			}
		}
	}
	for i := 1; i < p; i++ {
		src := (r - i + p) % p
		copy(recvbuf[src*blk:(src+1)*blk], tmp[i*blk:(i+1)*blk])
	}
	return nil
}

// alltoallScattered is the scattered exchange for blocks of any size:
// every send is posted at once, then the blocks are received in order.
// It matches the pairwise exchange message for message (one message per
// pair on one tag), so ranks may choose between the two by their own sizes.
func alltoallScattered(c Comm, parts, into [][]byte, r, p, tag int) ([][]byte, error) {
	out := make([][]byte, p)
	out[r] = own(parts[r], into, r)
	reqs := make([]Request, 0, p-1)
	for k := 1; k < p; k++ {
		dst := (r + k) % p
		q, err := c.Isend(parts[dst], dst, tag)
		if err != nil {
			return nil, fmt.Errorf("send to %d: %w", dst, err)
		}
		reqs = append(reqs, q)
	}
	for k := 1; k < p; k++ {
		src := (r - k + p) % p
		var dst []byte
		if into != nil {
			dst = into[src]
		}
		b, err := recvInto(c, dst, src, tag)
		if err != nil {
			return nil, fmt.Errorf("recv from %d: %w", src, err)
		}
		out[src] = b
	}
	return out, waitAll(reqs)
}
