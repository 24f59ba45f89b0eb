package mpi

// Config: the tunables of a job, and their defaults from MPIGO_* variables.

import (
	"os"
	"time"

	"github.com/mpigo/mpi/internal/engine"
)

// Config holds the tunables of the runtime. The zero value is not useful;
// start from DefaultConfig.
type Config struct {
	// EagerLimit is the largest message, in bytes, sent eagerly; larger
	// ones use the rendezvous protocol. Environment: MPIGO_EAGER_LIMIT.
	EagerLimit int
	// ShmEagerLimit is the eager limit towards processes reached through
	// shared memory, for jobs started by a launcher. 0 chooses: half a
	// ring (at most 512 KiB) on a node with a core per rank, unless
	// EagerLimit was changed from its default; EagerLimit otherwise. Over
	// the rings a rendezvous copies as much as an eager message does and
	// adds a round trip (measured: 1 MiB allreduce between 2 processes
	// 402 -> 256 us, median of 5); with more ranks than cores, eager
	// senders stall on receivers that are not running (4 on 2 cores: 976
	// -> 1055 us), so it stays off there. Environment:
	// MPIGO_SHM_EAGER_LIMIT.
	ShmEagerLimit int
	// NoDirectRead makes goroutine ranks use the streamed rendezvous
	// protocol (CTS, then Data frames) that byte-stream transports use,
	// instead of copying straight out of the sender's buffer. It exists to
	// test and measure that protocol.
	NoDirectRead bool
	// TCPSockBuf, if positive, sets the kernel socket buffer sizes of tcp
	// connections, in bytes (0: the kernel's default, which autotunes).
	// Environment: MPIGO_TCP_SOCKBUF.
	TCPSockBuf int
	// TCPProtect says how tcp connections protect their frames once the
	// handshake has proved both ends: "auto" (the default) encrypts every
	// connection except one between two loopback addresses, whose bytes
	// never leave the kernel and where encryption halves the bandwidth;
	// "on" encrypts every connection (AES-128-GCM with keys agreed per
	// connection: nobody between the ranks can read, alter, replay,
	// reorder or drop frames unnoticed); "off" encrypts none, for trusted
	// fabrics (the handshake still proves the job's secret). Every rank of
	// a job must use the same; docs/security.md has the design and its
	// cost. Environment: MPIGO_TCP_PROTECT (mpigo run --insecure-fabric
	// sets "off").
	TCPProtect string
	// Transport connects the goroutine ranks of Run: "inproc" (the
	// default), "tcp", which sends every message over loopback TCP as
	// separate processes would, or "shm", which sends it through shared
	// memory rings as processes on one node would; the last two exist to
	// test and measure those transports with the same programs. In a job
	// started by mpigo run it forces the transport between processes of
	// one node: "tcp" or "shm" (the default). Environment: MPIGO_TRANSPORT.
	Transport string
	// RanksPerNode, if positive, makes Run treat each run of RanksPerNode
	// consecutive goroutine ranks as one node, as processes on several
	// machines would be: node-aware collectives (docs/collectives.md) then
	// apply. It exists to test and measure them on one machine; it has no
	// effect on a job started by a launcher, which knows its nodes.
	// Environment: MPIGO_RANKS_PER_NODE.
	RanksPerNode int
	// HangReport is how long every live rank must have been blocked in
	// MPI calls, with no wait completing anywhere, before the job prints
	// a hang report and fails (docs/troubleshooting.md); 0 or less
	// disables it. Default 10s; environment: MPIGO_HANG_REPORT (a
	// duration, 0 to disable).
	HangReport time.Duration
	// Check makes every collective compare its name and root with the
	// other ranks' (one small message per rank and call): a mismatch
	// fails the job with both calls named instead of hanging or
	// returning garbage. Environment: MPIGO_CHECK=1 (mpigo run --check).
	Check bool
	// Trace, if set, records every MPI call and message of the job and
	// writes the timeline to this file when Run returns, in the
	// Chrome/Perfetto trace format (docs/trace.md). Environment:
	// MPIGO_TRACE=FILE (mpigo run --trace FILE).
	Trace string
	// FT keeps the job running when a rank fails (a process exits or is
	// killed, a connection is lost, a goroutine rank returns an error or
	// panics): operations that need the failed rank fail with
	// ErrProcFailed, and Revoke, Shrink, Agree, GetFailed and AckFailed
	// let the survivors recover (docs/fault-tolerance.md). Environment:
	// MPIGO_FT=1 (mpigo run --ft).
	FT bool
	// FTHeartbeat is how often, under FT, each process tells the others
	// it is alive (default 250ms), and FTTimeout how long a silent
	// process (stopped, hung in the kernel, cut off) may stay silent
	// before the others treat it as failed (default 3s). Environment:
	// MPIGO_FT_HEARTBEAT, MPIGO_FT_TIMEOUT (durations).
	FTHeartbeat, FTTimeout time.Duration
}

// DefaultConfig returns the built-in tunables, overridden by the
// environment (MPIGO_EAGER_LIMIT).
func DefaultConfig() Config {
	c := Config{EagerLimit: engine.DefaultConfig().EagerLimit}
	c.diagDefaults()
	c.ftDefaults() // ft.go
	if v, ok := envInt("MPIGO_EAGER_LIMIT"); ok && v >= 0 {
		c.EagerLimit = v
	}
	if v, ok := envInt("MPIGO_SHM_EAGER_LIMIT"); ok && v >= 0 {
		c.ShmEagerLimit = v
	}
	if v, ok := envInt("MPIGO_TCP_SOCKBUF"); ok && v >= 0 {
		c.TCPSockBuf = v
	}
	c.Transport = os.Getenv("MPIGO_TRANSPORT")
	c.TCPProtect = os.Getenv("MPIGO_TCP_PROTECT")
	if v, ok := envInt("MPIGO_RANKS_PER_NODE"); ok && v >= 0 {
		c.RanksPerNode = v
	}
	return c
}
