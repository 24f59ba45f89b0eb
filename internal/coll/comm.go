package coll

import "errors"

// Comm is the point-to-point service a collective runs on. Ranks are 0..Size()-1.
// Tags used by collectives are private to the collective context, so any non-negative tag may be used.
// All methods are safe for concurrent use.
type Comm interface {
	// Rank returns the calling rank, in 0..Size()-1.
	Rank() int
	// Size returns the number of ranks.
	Size() int
	// Send sends buf to dst and returns when buf may be reused.
	Send(buf []byte, dst, tag int) error
	// Recv receives a message from src into buf and returns its length.
	// A message longer than buf is an error (the caller sized buf).
	Recv(buf []byte, src, tag int) (int, error)
	// RecvAlloc receives a message of unknown length from src and returns it in a new buffer.
	RecvAlloc(src, tag int) ([]byte, error)
	// Isend starts a send; buf must not be modified until the request completes.
	Isend(buf []byte, dst, tag int) (Request, error)
	// Irecv starts a receive into buf.
	Irecv(buf []byte, src, tag int) (Request, error)
}

// Request is an in-flight Isend or Irecv.
type Request interface {
	// Wait blocks until the operation completes and returns the number of bytes received (0 for sends).
	Wait() (int, error)
}

// Combine folds in into acc and returns the result: result = acc ⊕ in when accFirst,
// in ⊕ acc otherwise (⊕ applied in rank order: the operand from the lower ranks goes on the left).
// It may reuse acc's memory and may return a slice of a different length (results may grow,
// e.g. string concatenation); it must not keep in.
//
// The collectives never pass the caller's own buffer as acc: they copy it
// first. They treat in as read-only input and expect Combine to do the same.
type Combine func(acc, in []byte, accFirst bool) ([]byte, error)

// Errors reported by the collectives, always wrapped with context.
var (
	// ErrRoot reports a root rank outside 0..Size()-1.
	ErrRoot = errors.New("root out of range")
	// ErrArg reports another invalid argument: a Comm with an invalid size
	// or rank, a nil Combine, or a parts slice whose length is not Size().
	ErrArg = errors.New("invalid argument")
	// ErrMessage reports a received message that does not fit the
	// algorithm: a fixed-size broadcast of the wrong length, or a malformed
	// packed block list.
	ErrMessage = errors.New("unexpected message")
)
