package ucx

import "encoding/binary"

// The pull request of the single copy (region.go), in every build so that
// its decoder is tested and fuzzed without UCX: a reader asks the exporter
// of a region for n bytes at offset off of the region named token, to be
// sent tagged with the reader's read id.

// ctlBit and dataBit are the tag bits MG_CTL (a pull request, from the
// rank in the low bits) and MG_DATA (a pulled region's bytes, tagged with
// the read id in the low bits); a read id is under dataBit.
const (
	ctlBit  = uint64(1) << 62
	dataBit = uint64(1) << 61
)

// pullSize is the length of a pull request: token, offset, length, read
// id, each 8 bytes little-endian.
const pullSize = 32

type pullRequest struct {
	token, off, n, id uint64
}

// parsePull decodes a pull request from b, the bytes of a message a peer
// sent; false if it is too short or its read id cannot be a tag's.
func parsePull(b []byte) (pullRequest, bool) {
	if len(b) < pullSize {
		return pullRequest{}, false
	}
	p := pullRequest{
		token: binary.LittleEndian.Uint64(b),
		off:   binary.LittleEndian.Uint64(b[8:]),
		n:     binary.LittleEndian.Uint64(b[16:]),
		id:    binary.LittleEndian.Uint64(b[24:]),
	}
	return p, p.id < dataBit
}

// put encodes p into b, which holds pullSize bytes.
func (p pullRequest) put(b []byte) {
	binary.LittleEndian.PutUint64(b, p.token)
	binary.LittleEndian.PutUint64(b[8:], p.off)
	binary.LittleEndian.PutUint64(b[16:], p.n)
	binary.LittleEndian.PutUint64(b[24:], p.id)
}

// within reports whether p asks for bytes inside a region of size bytes,
// without overflow whatever the peer sent.
func (p pullRequest) within(size int) bool {
	return size >= 0 && p.off <= uint64(size) && p.n <= uint64(size)-p.off
}
