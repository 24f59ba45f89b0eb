// Package ft is the fault-tolerance protocol of one rank (the MPI
// standard's ULFM interface: failure detection, Revoke, Agree, Shrink),
// written as a step machine.
//
// A Machine is plain logic, in the style of internal/engine: it takes
// inputs (a control message received, a timer tick, a failure reported by
// a transport, a local Revoke or Agree call) and answers with outputs
// collected in an Out (messages to send, ranks newly known failed,
// communicators to revoke, agreements decided). It starts no goroutines,
// performs no I/O, reads no clock (the time of each input is an argument)
// and keeps no globals, so tests drive many machines through a simulated
// network and replay any interleaving of deliveries, ticks and failures.
// The caller serializes the inputs (one lock) and carries out the outputs
// after the call, outside that lock: in mpigo that is the root package's
// ft.go, whose controller goroutine feeds the machine the control
// messages the engine received and the ticks of a ticker, and executes
// its outputs with engine sends, Engine.FailPeer and Engine.Revoke.
//
// # Messages
//
// Control messages travel between the machines of the ranks of one job as
// ordinary eager messages on a private context; their Kind is the message
// tag. All integers are little-endian.
//
//   - Heartbeat (empty): "I am alive", every Period, to every rank in
//     another process.
//   - Revoke (16 bytes): context (4), group hash (8), revoking rank (4).
//   - Propose, Decide (29 + len(value) + 4·failed bytes): context (4),
//     group hash (8), sequence number (8), flag (1: 0 a proposal, 1 a
//     decision, 2 a proposal answering a Collect), value length (4),
//     value, count of failed ranks (4), failed world ranks (4 each).
//   - Collect (20 bytes): context, group hash, sequence number.
//   - Failed (4 bytes): a world rank of the sender's process whose
//     function failed (goroutine ranks in launched processes: the process
//     lives on, so no transport would tell).
//
// Every decoder is bounded: a body of the wrong length, a count larger
// than the bytes that follow or than the job, or a rank outside the job
// is dropped, never trusted.
//
// # Failure detection
//
// Failures come from four places: the transports (a connection or a
// process ended: Fail), a Failed message, missing heartbeats, and
// agreement decisions. Ranks in another process (Config.Remote) are sent a
// heartbeat at every Tick and are suspected, hence failed, when nothing at
// all was heard from them for Timeout. A Tick that comes more than
// Timeout/2 after the previous one means this process did not run for a
// while (a loaded machine, or it was stopped): the silence may be its own,
// so the counts start again instead. The failed set is kept in the order
// learnt (GetFailed and AckFailed number failures in that order) and each
// new failure is output once (Out.Failures).
//
// # Revoke
//
// A communicator is named among the ranks by a Key: its context and a hash
// of its members (GroupHash). Revoking it here (Revoke) outputs a
// Revocation and sends a notice to every other member; the first notice a
// rank gets for a communicator it has revokes it there and is forwarded
// to every member but the sender and itself, so that the revocation
// reaches every live member even if the revoker dies while sending. Later
// notices for the same communicator are dropped: each rank floods a
// revocation at most once. A notice for a communicator this rank has not
// made yet (its agreement decided later here than there) is kept, up to
// a bound, and applied when the communicator is made (Adopt).
//
// # Agreement
//
// Every agreement call on a communicator is one instance, named by the
// communicator's key and a sequence number (the calls are collective, so
// every member numbers them alike: Enter). The coordinator of an instance
// is the first member, in group order, that a rank does not know to have
// failed. Each member sends its proposal (its value and the failures it
// knows of) to its coordinator; the coordinator, once it holds the
// proposal of every member it does not know failed, combines the values
// (the caller's Combine: a bitwise AND for Agree), takes the union of the
// failures, decides and sends the decision to each live member. When a
// member learns that its coordinator failed it proposes to the next one;
// a coordinator that takes over first asks every member for its state
// (Collect), and if any member already holds an earlier coordinator's
// decision it adopts that one, so no two live ranks decide differently.
// Two rules make that hold while the failed coordinator's last decisions
// are still on their way: a coordinator that took over counts only the
// answers to its Collect (a proposal sent before it may come from a member
// that has learnt the old decision since), and a member that answered a
// Collect takes no decision from a coordinator before that one in the
// group. A rank that is sent proposals while undecided (the members took
// it for their coordinator before it knew) tells them its decision once
// it has one; a Collect that comes before this rank entered the instance
// is answered when it does.
// Decisions are kept (the last Keep per communicator), so that a member
// that asks late is answered after the others have returned. The decided
// failures become known failures on every rank that decides.
//
// The protocol assumes reliable delivery between live ranks (what the
// transports give) and crash-stop failures: a rank declared failed is
// taken to send nothing more. A rank suspected wrongly (stopped longer than
// the timeout) that lives on is outside the survivors: Shrink tells it so.
// Only heartbeats may be lost, a few in a row, without effect; messages to
// or from a failed rank may be lost at any point.
//
// # What drives the machine
//
// The caller feeds it, under one lock: Handle for each control message
// received, Tick every Period (with the messages received before it
// handed in first), Fail for a failure learnt outside the protocol, Died
// when this rank's own function failed, Revoke and Adopt as communicators
// are revoked and made, Enter for each agreement call, and Stop when the
// rank goes down. It carries out the Out after each call: Failures first
// (fail the requests that depend on the rank), then Revokes, and the
// Sends before waking the callers of the Decisions, so that a rank that
// returns from its last agreement and exits has sent its decision on.
package ft
