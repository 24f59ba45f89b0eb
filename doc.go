// Package mpi is the Message Passing Interface for Go, written in Go.
//
// A program is a function run on every rank of a job. Each rank gets the
// world communicator and talks to the others by sending Go values:
//
//	func main() {
//		mpi.Main(func(world *mpi.Comm) error {
//			if world.Rank() == 0 {
//				return mpi.Send(world, []float64{1, 2, 3}, 1, 0)
//			}
//			v, status, err := mpi.Recv[[]float64](world, 0, 0)
//			...
//		})
//	}
//
// # Starting a job
//
// [Main] is the entry point of a program: it learns how the process was
// started, runs the function on every rank the process hosts, and exits
// with a useful status. A program started without a launcher is a single
// rank; MPIGO_NP=n runs it as n goroutine ranks. [Run] runs n ranks as
// goroutines of the calling process and returns their errors: the way to
// use mpi from tests and from programs that want to stay on one machine.
// Goroutine ranks deliver each message with one copy, straight from the
// sender's memory into the receiver's buffer.
//
// # Two layers
//
// The typed layer takes Go values: [Send], [Recv], [Isend], [Irecv],
// [Bcast], [Allreduce], ... with a type parameter. Plain values (numbers,
// bool, arrays and structs of those) and slices of them travel as their raw
// memory; strings as their bytes; anything else is encoded. Every message
// carries a signature of its type, and a receive of another type fails with
// [ErrType] instead of decoding garbage. [RecvInto] and
// [AllreduceSliceInto] reuse the caller's memory, so hot loops allocate
// nothing.
//
// The low-level layer follows the MPI standard: methods on [*Comm] take a
// byte buffer, a count and a [*Datatype] ([Comm.Send], [Comm.Irecv],
// [Comm.SendInit], ...), and return [*Request] values with [Request.Wait],
// [Request.Test], [Request.Cancel], [Request.Start] and [Request.Free]. Use
// [AsBytes] to view a slice of plain values as bytes. The two layers
// interoperate: a message sent with [Float64] can be received as
// []float64 (or, for one element, as float64), and a typed float64 or
// []float64 by a receive of [Float64]. Within the typed layer a float64
// and a []float64 are different types, even a slice of one element. The MPI name of every call is in docs/mapping.md.
//
// # Matching
//
// A receive matches a message by communicator, source ([AnySource]
// matches any) and tag ([AnyTag] matches any). Messages from one sender on
// one communicator are received in the order they were sent. Sends and
// receives with [ProcNull] complete at once. [Mprobe] takes a message out
// of matching so that one goroutine alone receives it: the safe way to
// receive data of unknown size when several goroutines share a
// communicator.
//
// # Collectives and operations
//
// Collectives ([Barrier], [Bcast], [Reduce], [Allreduce], [Gather],
// [Allgather], [Scatter], [Alltoall], [Scan], [Exscan]) work on any type and
// run on a context of their own, so they never match point-to-point
// messages. Reductions take an [Op]: a predefined one ([Sum], [Max], ...),
// which runs as a tight loop over slices, or any Go function made into one
// with [NewOp]; closures may carry state, and non-commutative operations
// are applied in rank order.
//
// # Concurrency
//
// Every function and method may be called from any goroutine at any time
// (MPI_THREAD_MULTIPLE). A blocked call waits without burning a core, so a
// job may have many more ranks than the machine has cores.
//
// # Errors
//
// Calls return errors; they never panic on bad input. Every error is an
// [*Error] that names the call, the rank, the communicator, the peer and
// the tag, and wraps one class that [errors.Is] recognises ([ErrTruncate],
// [ErrRank], [ErrTag], [ErrType], [ErrProcFailed], ...). Setting a
// communicator's handler to [ErrorsAreFatal] aborts the job on the first
// error instead. When a rank fails, the job is taken down: the other ranks'
// calls return [ErrProcFailed] rather than waiting forever.
//
// # Index by task
//
// go doc lists a function under the type it returns, so [Recv], [Probe]
// and [WaitAny] appear under [Status], [Isend] under [Request] and
// [Irecv] under [Pending]. By task:
//
//   - Start a job: [Main], [Run], [RunConfig], [Abort].
//   - Send: [Send], [Ssend], [Bsend], [Rsend], [Isend], [Issend],
//     [SendView] (parts of a slice: [Strided], [Subarray]).
//   - Receive: [Recv], [RecvInto], [Irecv], [IrecvInto], [RecvView],
//     [Probe], [Comm.Iprobe], [Mprobe] with [Mrecv], and [Sendrecv],
//     [SendrecvInto], [SendrecvView] for exchanges.
//   - Wait: [Request.Wait], [Pending.Wait], [WaitAll], [WaitAny],
//     [WaitSome], [TestAll], [TestAny]; many small messages: [Requests]
//     with [PostIsend] and [PostIrecvInto].
//   - Collectives: [Barrier], [Bcast], [Reduce], [Allreduce],
//     [AllreduceSlice], [Gather], [Allgather], [Scatter], [Alltoall],
//     [Scan], [Exscan], and the I- forms ([Iallreduce], ...); ops: [Sum],
//     [Max], [NewOp], ...
//   - Communicators and groups: [Comm.Dup], [Comm.Split], [Comm.Create],
//     [Comm.Group], [IntercommCreate]; topologies: [DimsCreate],
//     [Comm.CartCreate], [Comm.DistGraphCreateAdjacent].
//   - One-sided: [NewWindow], [WindowOf].
//   - Fault tolerance: [Comm.Revoke], [Comm.Shrink], [Comm.Agree].
//   - The low-level layer: methods of [Comm] with a []byte, a count and a
//     [*Datatype] ([Comm.Send], [Comm.Irecv], [Comm.Allreduce], ...),
//     derived datatypes ([NewVector], [NewStruct], [DatatypeOf]) and
//     [Pack].
//
// docs/mapping.md gives the Go name of every MPI call.
package mpi
