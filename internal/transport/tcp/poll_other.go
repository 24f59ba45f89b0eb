//go:build !unix

package tcp

import (
	"io"
	"net"
)

// newPollReader returns c itself: without poll(2) a reader parks in Go's
// network poller at once.
func newPollReader(c net.Conn) io.Reader { return c }
