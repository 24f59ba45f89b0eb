package coll

import (
	"encoding/binary"
	"fmt"
)

// Variable-size blocks travel packed: each block is its length as a uvarint
// followed by its bytes, and blocks are concatenated in relative-rank order.
// A contiguous run of blocks is therefore a contiguous byte range, which lets
// Scatter forward a subtree's blocks without repacking them.

// appendBlock appends b to dst as one packed block.
func appendBlock(dst, b []byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(b)))
	return append(dst, b...)
}

// parseBlocks checks that buf holds exactly n packed blocks. It returns the
// n+1 offsets where blocks start (offs[n] == len(buf)) and the n payloads,
// which alias buf with their capacity limited to their length.
func parseBlocks(buf []byte, n int) (offs []int, blocks [][]byte, err error) {
	offs = make([]int, n+1)
	blocks = make([][]byte, n)
	off := 0
	for i := range n {
		offs[i] = off
		size, k := binary.Uvarint(buf[off:])
		if k <= 0 || size > uint64(len(buf)-off-k) {
			return nil, nil, fmt.Errorf("%w: bad header of block %d of %d", ErrMessage, i, n)
		}
		start, end := off+k, off+k+int(size)
		blocks[i] = buf[start:end:end]
		off = end
	}
	if off != len(buf) {
		return nil, nil, fmt.Errorf("%w: %d bytes after %d blocks", ErrMessage, len(buf)-off, n)
	}
	offs[n] = off
	return offs, blocks, nil
}
