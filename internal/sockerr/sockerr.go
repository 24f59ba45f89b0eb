// Package sockerr classifies the errors of network connections the same
// way on every platform. The standard library reports a reset connection
// as syscall.ECONNRESET on Unix but as WSAECONNRESET (or
// ERROR_NETNAME_DELETED, or WSAECONNABORTED after a local abort) on
// Windows, where syscall.ECONNRESET is a number no socket call returns;
// code that asked errors.Is(err, syscall.ECONNRESET) took a peer that
// went away on Windows for a real failure.
package sockerr

import (
	"errors"
	"io"
)

// Cut reports whether err says the other end closed or reset the
// connection (not a timeout): end of stream, a reset, or a write to a
// connection the peer has closed.
func Cut(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || Reset(err) || Broken(err)
}

// Reset reports whether err is a connection reset by the peer.
func Reset(err error) bool { return isAny(err, resetErrnos) }

// Broken reports whether err is a write to a connection the other end
// has closed (EPIPE on Unix; on Windows such a write reports a reset or
// an abort).
func Broken(err error) bool { return isAny(err, brokenErrnos) }

// Unreachable reports whether err says there is no route to the network
// or host dialed.
func Unreachable(err error) bool { return isAny(err, unreachableErrnos) }

func isAny(err error, targets []error) bool {
	if err == nil {
		return false
	}
	for _, t := range targets {
		if errors.Is(err, t) {
			return true
		}
	}
	return false
}
