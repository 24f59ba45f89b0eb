package coll

import "bytes"

// Allgather collects every rank's buf on every rank: each gets p slices in
// rank order. Sizes may differ between ranks. The returned slices share one
// backing array, each capped to its length.
//
// Algorithm: binomial Gather of the packed (length-prefixed) blocks to rank
// 0, then BcastVar of the packed buffer from rank 0, which every rank
// unpacks. Cost: 2·lg p rounds; with N = Σ sizes, rank 0 receives N bytes and
// sends at most lg p messages of N bytes; every rank receives N bytes in the
// broadcast. Uses tag and tag+1.
func Allgather(c Comm, buf []byte, tag int) ([][]byte, error) {
	b, err := allgather(c, buf, tag)
	return b, wrap("allgather", err)
}

func allgather(c Comm, buf []byte, tag int) ([][]byte, error) {
	p, r, err := setup(c)
	if err != nil {
		return nil, err
	}
	if p == 1 {
		return [][]byte{bytes.Clone(buf)}, nil
	}
	packed, err := gatherPacked(c, buf, r, p, 0, tag)
	if err != nil {
		return nil, err
	}
	if packed, err = bcastVar(c, packed, 0, tag+1); err != nil {
		return nil, err
	}
	_, blocks, err := parseBlocks(packed, p)
	return blocks, err
}
