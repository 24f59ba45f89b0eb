package coll

import (
	"encoding/binary"
	"fmt"
)

// AllgathervBuf assembles the blocks of all ranks in buf: rank i's block is
// buf[offs[i]:offs[i+1]], and each rank has already put its own block in
// place. offs (p+1 entries, offs[p] == len(buf)) is the same on every rank.
// alg "" selects by the average block size:
//
//   - bruck: lg p rounds for any p; in round k a rank sends the min(k, p-k)
//     blocks it has gathered so far (kept rotated so they are contiguous)
//     to rank r-k and receives as many from r+k; one final local rotation;
//   - recursive_doubling (p a power of two): lg p rounds exchanging the
//     aligned block ranges gathered so far, in place;
//   - ring: p-1 rounds, each passing one block to the right neighbour; the
//     fewest bytes per round, for long blocks.
//
// Uses tag only.
func AllgathervBuf(c Comm, alg string, buf []byte, offs []int, tag int) error {
	return wrap("allgather", allgathervBuf(c, alg, buf, offs, tag))
}

func allgathervBuf(c Comm, alg string, buf []byte, offs []int, tag int) error {
	p, r, err := setup(c)
	if err != nil {
		return err
	}
	if len(offs) != p+1 || offs[0] != 0 || offs[p] != len(buf) {
		return fmt.Errorf("%w: %d offsets for %d ranks and %d bytes", ErrArg, len(offs), p, len(buf))
	}
	fixed := true
	for i := range p {
		if offs[i] > offs[i+1] {
			return fmt.Errorf("%w: offsets decrease at %d", ErrArg, i)
		}
		fixed = fixed && offs[i+1]-offs[i] == offs[1]
	}
	sit := Situation{Ranks: p, Bytes: len(buf) / p, Fixed: fixed}
	if alg == "" {
		alg = Select(CollAllgather, sit)
	} else if !Applicable(CollAllgather, alg, sit) {
		return fmt.Errorf("%w: algorithm %q cannot run allgather on %d ranks", ErrArg, alg, p)
	}
	if p == 1 {
		return nil
	}
	switch alg {
	case AlgRing:
		right, left := (r+1)%p, (r-1+p)%p
		for s := 0; s < p-1; s++ {
			si, ri := (r-s+p)%p, (r-s-1+2*p)%p
			if err := exchange2(c, buf[offs[si]:offs[si+1]], right, buf[offs[ri]:offs[ri+1]], left, tag); err != nil {
				return err
			}
		}
		return nil
	case AlgRecursiveDoubling:
		for mask := 1; mask < p; mask <<= 1 {
			peer := r ^ mask
			mylo, plo := r&^(mask-1), peer&^(mask-1)
			if err := exchange(c, buf[offs[mylo]:offs[mylo+mask]], buf[offs[plo]:offs[plo+mask]], peer, tag); err != nil {
				return err
			}
		}
		return nil
	case AlgBruck:
		return allgatherBruck(c, buf, offs, r, p, tag)
	}
	return fmt.Errorf("%w: unknown allgather algorithm %q", ErrArg, alg)
}

func allgatherBruck(c Comm, buf []byte, offs []int, r, p, tag int) error {
	// tmp position i holds the block of rank (r+i) mod p.
	roff := make([]int, p+1)
	for i := range p {
		b := (r + i) % p
		roff[i+1] = roff[i] + offs[b+1] - offs[b]
	}
	tmp := make([]byte, len(buf))
	copy(tmp, buf[offs[r]:offs[r+1]])
	for k := 1; k < p; k <<= 1 {
		cnt := min(k, p-k)
		dst, src := (r-k+p)%p, (r+k)%p
		if err := exchange2(c, tmp[:roff[cnt]], dst, tmp[roff[k]:roff[k+cnt]], src, tag); err != nil {
			return err
		}
	}
	for i := 1; i < p; i++ {
		b := (r + i) % p
		copy(buf[offs[b]:offs[b+1]], tmp[roff[i]:roff[i+1]])
	}
	return nil
}

// AllgatherSel collects every rank's buf on every rank, as Allgather, with
// the algorithm chosen by Select: the block lengths are first exchanged
// (an 8-byte Bruck allgather), then the blocks move with AllgathervBuf
// straight into one result buffer. The returned slices share that buffer,
// each capped to its length. Uses tag..tag+1.
func AllgatherSel(c Comm, buf []byte, tag int) ([][]byte, error) {
	b, err := allgatherSel(c, buf, tag)
	return b, wrap("allgather", err)
}

func allgatherSel(c Comm, buf []byte, tag int) ([][]byte, error) {
	p, r, err := setup(c)
	if err != nil {
		return nil, err
	}
	lens := make([]byte, 8*p)
	binary.LittleEndian.PutUint64(lens[8*r:], uint64(len(buf)))
	loffs := make([]int, p+1)
	for i := range loffs {
		loffs[i] = 8 * i
	}
	if err := allgathervBuf(c, AlgBruck, lens, loffs, tag); err != nil {
		return nil, err
	}
	offs := make([]int, p+1)
	for i := range p {
		n := binary.LittleEndian.Uint64(lens[8*i:])
		if n > 1<<46 {
			return nil, fmt.Errorf("%w: block of %d bytes from rank %d", ErrMessage, n, i)
		}
		offs[i+1] = offs[i] + int(n)
	}
	out := make([]byte, offs[p])
	copy(out[offs[r]:], buf)
	if err := allgathervBuf(c, "", out, offs, tag+1); err != nil {
		return nil, err
	}
	blocks := make([][]byte, p)
	for i := range p {
		blocks[i] = out[offs[i]:offs[i+1]:offs[i+1]]
	}
	return blocks, nil
}
