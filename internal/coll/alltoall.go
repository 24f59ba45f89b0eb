package coll

import (
	"bytes"
	"fmt"
)

// Alltoall sends parts[j] to rank j and returns the p slices received, in
// rank order (the own entry is a copy of parts[Rank()]). parts must hold
// exactly p entries on every rank; sizes may differ.
//
// Algorithm: scattered (all sends posted at once, then the receives in
// order) when Select picks it for the longest part, else pairwise
// exchange; the two match message for message, so ranks whose part sizes
// differ may choose differently. Pairwise exchange: In step k = 1..p-1 rank r sends
// parts[(r+k) mod p] with Isend while receiving from (r-k) mod p with
// RecvAlloc, then waits for the send; the two ranks paired in a step do
// the same step, so it cannot deadlock. Cost: p-1 rounds; each rank sends
// and receives p-1 messages, Σ sizes of its parts minus its own. Uses tag
// only.
func Alltoall(c Comm, parts [][]byte, tag int) ([][]byte, error) {
	b, err := alltoall(c, parts, tag)
	return b, wrap("alltoall", err)
}

// AlltoallInto is Alltoall with the receive buffers given, sending the
// same messages in the same order (ranks may mix the two): rank i's part
// is received straight into into[i], which it must fit, and out[i] is
// into[i][:n]; a nil into[i] is allocated, as Alltoall does. This rank's
// own part is copied once, into into[r].
func AlltoallInto(c Comm, parts, into [][]byte, tag int) ([][]byte, error) {
	if len(into) != len(parts) {
		return nil, wrap("alltoall", fmt.Errorf("%w: %d receive buffers for %d parts", ErrArg, len(into), len(parts)))
	}
	b, err := alltoallInto(c, parts, into, tag)
	return b, wrap("alltoall", err)
}

func alltoall(c Comm, parts [][]byte, tag int) ([][]byte, error) {
	return alltoallInto(c, parts, nil, tag)
}

// recvInto receives from src on tag into dst, or allocates the buffer if
// dst is nil.
func recvInto(c Comm, dst []byte, src, tag int) ([]byte, error) {
	if dst == nil {
		return c.RecvAlloc(src, tag)
	}
	n, err := c.Recv(dst, src, tag)
	return dst[:n], err
}

// own is this rank's part, copied into its receive buffer if it has one.
func own(part []byte, into [][]byte, r int) []byte {
	if into == nil || into[r] == nil {
		return bytes.Clone(part)
	}
	return into[r][:copy(into[r], part)]
}

func alltoallInto(c Comm, parts, into [][]byte, tag int) ([][]byte, error) {
	p, r, err := setup(c)
	if err != nil {
		return nil, err
	}
	if err := checkParts(parts, p); err != nil {
		return nil, err
	}
	maxPart := 0
	for _, b := range parts {
		maxPart = max(maxPart, len(b))
	}
	if Select(CollAlltoall, Situation{Ranks: p, Bytes: maxPart}) == AlgScattered {
		return alltoallScattered(c, parts, into, r, p, tag)
	}
	out := make([][]byte, p)
	out[r] = own(parts[r], into, r)
	for k := 1; k < p; k++ {
		dst, src := (r+k)%p, (r-k+p)%p
		var rbuf []byte
		if into != nil {
			rbuf = into[src]
		}
		if out[src], err = sendrecvInto(c, parts[dst], dst, rbuf, src, tag); err != nil {
			return nil, err
		}
	}
	return out, nil
}
