// Package coll implements the MPI collective operations on top of a small
// point-to-point service, the Comm interface. The algorithms know nothing
// about transports, datatypes or communicators: they move and combine byte
// slices between ranks 0..p-1.
//
// # Conventions
//
// Every function is collective: all ranks of a Comm call it, in the same
// order relative to the other collectives on that Comm, with matching
// arguments (same root, same tag base, same commutativity). Each function
// takes a tag base and uses only the tags tag..tag+7, so a caller can run
// collectives concurrently on the same Comm by giving them disjoint tag
// ranges. Collectives that run one after another may share a tag base: the
// algorithms rely only on messages between one pair of ranks on one tag
// being received in the order they were sent.
//
// Buffers passed in are never modified. Results are new slices owned by the
// caller, except where a function documents that it returns its input. Slices
// returned together (by Gather, Allgather) may share one backing array; each
// has its capacity limited to its length, so appending to one never touches
// another.
//
// Reductions take a Combine function and a commutative flag. When the flag
// is false the result is x0 ⊕ x1 ⊕ ... ⊕ x(p-1) with operands combined in
// rank order; when it is true the algorithm may combine in any order but is
// still deterministic. Partial results may grow or shrink as they travel,
// so partials are always received with RecvAlloc.
//
// # Costs
//
// Costs are given for p ranks and n-byte buffers. A round is one step in
// which a rank sends and/or receives one message per peer; the latency of a
// collective is roughly rounds × per-message latency. lg p means ⌈log2 p⌉.
//
// # Errors
//
// Invalid arguments are reported with errors wrapping ErrRoot or ErrArg,
// found locally before any communication. A failing Comm method, a failing
// Combine, or a message that does not fit the algorithm (ErrMessage) makes
// the collective return at once with the error wrapped with context. In that
// case requests already started are abandoned (no goroutine is left behind,
// the package starts none), the other ranks may be left waiting, and the
// Comm should be considered broken, as MPI does by default.
package coll
