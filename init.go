package mpi

// Init and Finalize: MPI_Init/MPI_Finalize for programs that cannot hand a
// function to Main (C programs through libmpi_abi.so.1, Go programs that
// link a C library using MPI).

import (
	"fmt"
	"sync"

	"github.com/mpigo/mpi/internal/boot"
)

// initState is the rank Init or SessionInit started, while it runs.
var initState initRank

// initRank is the state of a rank that Init or SessionInit started.
type initRank struct {
	sync.Mutex
	phase    int           // the world model: 0 before Init, 1 between Init and Finalize, 2 after Finalize
	started  bool          // the rank runs (Init or SessionInit started it)
	ended    bool          // the rank has ended: MPI cannot start again here
	sessions int           // the rank's live sessions started by SessionInit
	world    *Comm         // the rank's world
	finish   chan struct{} // closed to end the rank: its function returns
	result   chan error    // the job's end: Run's or the launched job's error
	kv       boot.KV       // the launcher's store, closed after the job (nil for a singleton)
}

// Init makes this process a rank of the job it was started in and returns
// its world communicator (MPI_Init). It is for programs that cannot hand a
// function to Main: C programs, whose MPI_Init the ABI library
// (docs/abi.md) maps onto it, and Go programs linking C code that uses
// MPI. Under a launcher (mpigo run, mpiexec, srun, mpirun:
// docs/launchers.md) the process joins the job as Main's would; started
// without one it is a singleton job of one rank (MPIGO_NP does not apply:
// one process is one rank here). The rank lives until Finalize, which
// every rank must call. Init may be called once per process; a second
// call, or a call after Finalize, returns an error of class ErrOther, as
// does a launcher that gave this process more than one rank. A rank that
// SessionInit started already is the one Init's world belongs to (MPI-4:
// the world model and sessions live side by side).
//
// Main remains the entry point for Go programs: it reports failures and
// sets the exit code, which a program using Init must do itself.
func Init() (_ *Comm, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Init", nil, Undefined, Undefined), &err)
	}
	s := &initState
	s.Lock()
	defer s.Unlock()
	if s.phase != 0 || s.ended {
		return nil, (*Comm)(nil).errorf("Init", ErrOther, loc{}, "Init may be called only once per process (phase %d)", s.phase)
	}
	if !s.started {
		if err := s.start("Init"); err != nil {
			return nil, err
		}
	}
	s.phase = 1
	return s.world, nil
}

// start starts this process's rank for call op. s is locked.
func (s *initRank) start(op string) error {
	info, err := boot.Detect(lookupEnv)
	if err != nil {
		return (*Comm)(nil).errorf(op, ErrOther, loc{}, "%v", err)
	}
	if info.Launcher != boot.LauncherSingleton && info.RanksHere != 1 {
		return (*Comm)(nil).errorf(op, ErrOther, loc{}, "the launcher gave this process %d ranks; a program using %s is one rank", info.RanksHere, op)
	}
	worldc := make(chan *Comm, 1)
	finish := make(chan struct{})
	result := make(chan error, 1)
	// The rank's function hands its world to the caller and waits for
	// the end; the job machinery (start-up, hang diagnosis, finalize)
	// is the one Main uses.
	f := func(w *Comm) error {
		worldc <- w
		<-finish
		return nil
	}
	go func() {
		if info.Launcher == boot.LauncherSingleton {
			result <- Run(1, f)
			return
		}
		result <- runLaunched(info, DefaultConfig(), f)
	}()
	select {
	case w := <-worldc:
		s.started, s.world, s.finish, s.result = true, w, finish, result
		if info.Launcher != boot.LauncherSingleton {
			s.kv = info.KV
		}
		return nil
	case err := <-result:
		// The job did not start: MPI may not be tried again.
		s.ended = true
		if err == nil {
			err = fmt.Errorf("the job ended before the rank started")
		}
		return (*Comm)(nil).errorf(op, ErrOther, loc{}, "%v", err)
	}
}

// end ends this process's rank: it waits, as a rank function returning
// under Main does, until no peer may still talk to it, and returns the
// job's error. s is locked.
func (s *initRank) end() error {
	s.ended = true
	close(s.finish)
	err := <-s.result
	if s.kv != nil {
		if cerr := s.kv.Close(); err == nil && cerr != nil {
			err = cerr
		}
	}
	if err != nil {
		return primaryErrors(err)
	}
	return nil
}

// Finalize ends the world model Init started (MPI_Finalize): it waits, as
// a rank function returning under Main does, until no peer may still talk
// to this rank, and returns the job's error if the job failed. While
// sessions that SessionInit started are live, the rank goes on until the
// last is finalized. It returns an error of class ErrOther if Init has
// not succeeded or Finalize was called already.
func Finalize() (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Finalize", nil, Undefined, Undefined), &err)
	}
	s := &initState
	s.Lock()
	defer s.Unlock()
	if s.phase != 1 {
		return (*Comm)(nil).errorf("Finalize", ErrOther, loc{}, "Finalize without a successful Init, or called twice")
	}
	// Self's attributes go first, on the caller's thread (a C library's
	// delete callback may expect its own thread), while MPI still works.
	ferr := s.world.p.finalizeSelf()
	s.phase = 2
	if s.sessions > 0 {
		return ferr
	}
	if err := s.end(); err != nil {
		return err
	}
	return ferr
}

// FinalizeSessions ends the rank that SessionInit started in this process
// for a program of the Sessions model, one that never called Init: it
// waits, as Finalize does, until no peer may still talk to this rank,
// tells the launcher that the rank left in order, and returns the job's
// error if the job failed. Without it such a rank lives until the process
// exits, and the launcher (mpigo run) reports a process that exits while
// its rank is part of the job as one that left before its part of the
// work was done.
//
// It is for the moment the program is done with MPI, before it exits: the
// C ABI (libmpi_abi.so.1) calls it when a C program exits after its last
// MPI_Session_finalize; a Go program that uses SessionInit without Main
// or Init calls it itself. MPI cannot start again in the process
// afterwards. Sessions may be started and finalized again and again
// before it, on the same rank.
//
// It does nothing when SessionInit started no rank in this process, or
// the rank has ended already (Finalize after Init ends it). While Init's
// world is live (Init without Finalize) or a session is not finalized, it
// returns an error of class ErrOther and ends nothing.
func FinalizeSessions() (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("FinalizeSessions", nil, Undefined, Undefined), &err)
	}
	const op = "FinalizeSessions"
	s := &initState
	s.Lock()
	defer s.Unlock()
	switch {
	case !s.started || s.ended:
		return nil
	case s.phase == 1:
		return (*Comm)(nil).errorf(op, ErrOther, loc{}, "Init's world is live: Finalize ends the rank")
	case s.sessions > 0:
		return (*Comm)(nil).errorf(op, ErrOther, loc{}, "%d session(s) of the rank are not finalized", s.sessions)
	}
	return s.end()
}
