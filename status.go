package mpi

import "github.com/mpigo/mpi/internal/engine"

// Status describes a completed receive: who sent the message, with which
// tag, and how much of it arrived (MPI_Status).
type Status struct {
	// Source is the rank of the sender in the communicator (ProcNull for a
	// receive from ProcNull).
	Source int
	// Tag is the message's tag (AnyTag for a receive from ProcNull).
	Tag int

	bytes     int // bytes stored in the buffer
	size      int // bytes the sender sent
	elem      int // size of one element of the receive's type (0: bytes)
	cancelled bool
	err       error // the request's error in a call that completes several
}

// Bytes returns the number of bytes received.
func (s Status) Bytes() int { return s.bytes }

// Count returns the number of elements received, in elements of the
// receive's type: the T of a typed receive (the element type for a slice),
// the datatype of a low-level one. It returns Undefined if the bytes are not
// a whole number of elements (MPI_Get_count).
func (s Status) Count() int {
	if s.elem <= 1 {
		return s.bytes
	}
	if s.bytes%s.elem != 0 {
		return Undefined
	}
	return s.bytes / s.elem
}

// CountOf returns the number of whole elements of dt received, or
// Undefined if the bytes are not a whole number of them (MPI_Get_count).
func (s Status) CountOf(dt *Datatype) int {
	if dt == nil || dt.size == 0 {
		return Undefined
	}
	if s.bytes%dt.size != 0 {
		return Undefined
	}
	return s.bytes / dt.size
}

// GetCount returns the number of whole elements of dt received, or
// Undefined if the bytes are not a whole number of them (MPI_Get_count);
// the same as CountOf.
func (s Status) GetCount(dt *Datatype) int { return s.CountOf(dt) }

// GetElements returns the number of basic elements (Float64, Int32, ...)
// of dt received, counting those of a last, partly received element of a
// derived datatype, or Undefined if the bytes end inside a basic element
// (MPI_Get_elements).
func (s Status) GetElements(dt *Datatype) int {
	if dt == nil || dt.t == nil {
		return Undefined
	}
	n := dt.t.Elements(int64(s.bytes))
	if n < 0 {
		return Undefined
	}
	return int(n)
}

// Cancelled reports whether the operation was cancelled (MPI_Test_cancelled).
func (s Status) Cancelled() bool { return s.cancelled }

// Err returns the error of the request this status describes, as a call
// that completes several requests (WaitAllStatus, TestAll, WaitSome,
// TestSome) reports it beside its own error, or what SetErr stored
// (MPI_Status_get_error; nil is MPI_SUCCESS). A call that completes one
// request returns its error instead and leaves this nil. The Go forms of
// MPI_Status_get_source and _tag, and of their setters, are the Source
// and Tag fields.
func (s Status) Err() error { return s.err }

// SetErr stores err as the request's error (MPI_Status_set_error), for
// the query function of a generalized request or a layer that builds
// statuses of its own.
func (s *Status) SetErr(err error) { s.err = err }

// procNullStatus is the status of a receive from ProcNull.
var procNullStatus = Status{Source: ProcNull, Tag: AnyTag}

func statusOf(st engine.Status, elem int) Status {
	return Status{Source: st.Source, Tag: st.Tag, bytes: st.Count, size: st.Size, elem: elem, cancelled: st.Cancelled}
}
