package coll

import "fmt"

// Bcast copies root's buf into buf on every other rank. All ranks pass
// buffers of the same length; a message of another length is an error
// (wrapping ErrMessage, or the Comm's error if it is longer).
//
// Algorithm: binomial tree rooted at root. Cost: lg p rounds; root sends lg p
// messages of n bytes, every other rank receives one and sends at most
// lg p; p-1 messages and (p-1)·n bytes in total. Uses tag only.
func Bcast(c Comm, buf []byte, root, tag int) error {
	return wrap("bcast", bcast(c, buf, root, tag))
}

func bcast(c Comm, buf []byte, root, tag int) error {
	p, r, err := setupRoot(c, root)
	if err != nil {
		return err
	}
	_, err = bcastTree(c, buf, r, p, root, tag, func(src int) ([]byte, error) {
		n, err := c.Recv(buf, src, tag)
		if err != nil {
			return nil, fmt.Errorf("recv from %d: %w", src, err)
		}
		if n != len(buf) {
			return nil, fmt.Errorf("%w: %d bytes from %d, want %d", ErrMessage, n, src, len(buf))
		}
		return buf, nil
	})
	return err
}

// BcastVar broadcasts root's buf when only root knows its length. Non-roots
// pass nil (their buf is ignored) and receive a new slice; root gets its own
// buf back, not a copy.
//
// Algorithm: binomial tree rooted at root, receiving with RecvAlloc. Cost as
// Bcast: lg p rounds, p-1 messages of n bytes. Uses tag only.
func BcastVar(c Comm, buf []byte, root, tag int) ([]byte, error) {
	b, err := bcastVar(c, buf, root, tag)
	return b, wrap("bcastvar", err)
}

func bcastVar(c Comm, buf []byte, root, tag int) ([]byte, error) {
	p, r, err := setupRoot(c, root)
	if err != nil {
		return nil, err
	}
	return bcastTree(c, buf, r, p, root, tag, func(src int) ([]byte, error) {
		b, err := c.RecvAlloc(src, tag)
		if err != nil {
			return nil, fmt.Errorf("recv from %d: %w", src, err)
		}
		return b, nil
	})
}
