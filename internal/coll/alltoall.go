package coll

import "bytes"

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

func alltoall(c Comm, parts [][]byte, tag int) ([][]byte, error) {
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
		return alltoallScattered(c, parts, r, p, tag)
	}
	out := make([][]byte, p)
	out[r] = bytes.Clone(parts[r])
	for k := 1; k < p; k++ {
		dst, src := (r+k)%p, (r-k+p)%p
		if out[src], err = sendrecv(c, parts[dst], dst, src, tag); err != nil {
			return nil, err
		}
	}
	return out, nil
}
