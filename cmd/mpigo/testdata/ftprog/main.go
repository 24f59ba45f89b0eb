// ftprog is an MPI program for the fault-tolerance tests of mpigo run
// --ft: one rank dies for real and the others recover.
//
//	ftprog MODE [KILLS]
//
// MODE kill9: the last rank sends its clock to the others and kills
// itself with SIGKILL; stop: it stops itself with SIGSTOP (rank 0 kills it
// once the others have declared it failed); agree: rank 0, the first
// coordinator of the agreement, kills itself while the others agree;
// fnfail: the last rank's function returns an error (with
// --ranks-per-proc, its process lives on for the other ranks it hosts);
// pcoll: the ranks loop on Start and Wait of a persistent 8-byte
// Allreduce (by publication in shared memory between processes of one
// node) and the last rank kills itself with SIGKILL between two Starts;
// rdv: the ranks loop on an AllreduceSlice of 512 KiB (a rendezvous
// between every pair) while the last rank kills itself with SIGKILL at a
// moment KILLS chooses (microseconds after the barrier, or rN: as it
// enters round N; a comma-separated list kills the ranks before the last
// too), mid-Allreduce; the survivors agree on each round's success and on
// failure revoke, shrink and go on, the usual ULFM loop, and must all
// finish.
// Every survivor that sees ErrProcFailed before another's revocation
// prints how long that took ("detect"), then revokes WORLD, shrinks it and prints the sum of an Allreduce over
// the survivors.
package main

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/mpigo/mpi"
)

func main() {
	mode := "kill9"
	if len(os.Args) > 1 {
		mode = os.Args[1]
	}
	mpi.Main(func(c *mpi.Comm) error {
		if mode == "fnfail" {
			// No barrier first: the failing rank may leave it before
			// the others are out, and they would see the failure there.
			return fnfail(c)
		}
		if err := mpi.Barrier(c); err != nil {
			return err
		}
		switch mode {
		case "kill9", "stop":
			return victim(c, mode)
		case "agree":
			return agree(c)
		case "rdv":
			return rdv(c)
		case "pcoll":
			return pcoll(c)
		}
		return fmt.Errorf("unknown mode %q", mode)
	})
}

func victim(c *mpi.Comm, mode string) error {
	last := c.Size() - 1
	if c.Rank() == last {
		var b [12]byte
		binary.LittleEndian.PutUint32(b[:], uint32(os.Getpid()))
		at := time.Now().Add(10 * time.Millisecond) // when it dies
		binary.LittleEndian.PutUint64(b[4:], uint64(at.UnixNano()))
		for r := 0; r < last; r++ {
			if err := c.Send(b[:], 12, mpi.Byte, r, 1); err != nil {
				return err
			}
		}
		time.Sleep(time.Until(at)) // let the messages leave
		sig := syscall.SIGKILL
		if mode == "stop" {
			sig = syscall.SIGSTOP
		}
		syscall.Kill(os.Getpid(), sig)
		select {}
	}
	b := make([]byte, 12)
	if _, err := c.Recv(b, 12, mpi.Byte, last, 1); err != nil {
		if !errors.Is(err, mpi.ErrRevoked) {
			return err
		}
		// A survivor that saw the failure revoked WORLD before this
		// rank took the message (it was there, but a revoked
		// communicator fails every receive): recover with the others.
		return recover(c)
	}
	pid := int(binary.LittleEndian.Uint32(b))
	start := time.Unix(0, int64(binary.LittleEndian.Uint64(b[4:])))
	_, _, err := mpi.Recv[int](c, last, 2)
	switch {
	case errors.Is(err, mpi.ErrProcFailed):
		fmt.Printf("rank %d: detect %s %d us\n", c.Rank(), mode, time.Since(start).Microseconds())
	case errors.Is(err, mpi.ErrRevoked):
		// Another survivor saw the failure first and revoked WORLD.
	default:
		return fmt.Errorf("Recv from the dead rank: %v, want ErrProcFailed or ErrRevoked", err)
	}
	if mode == "stop" {
		syscall.Kill(pid, syscall.SIGKILL) // it is failed for the job: end it
	}
	return recover(c)
}

func agree(c *mpi.Comm) error {
	if c.Rank() == 0 {
		// Die while the others wait in the agreement for their
		// coordinator. (It used to call Agree with a kill 2 ms later
		// on the way, which on a fast machine came after the whole job
		// had finished: the survivors then had nothing to recover from.)
		time.Sleep(20 * time.Millisecond)
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {}
	}
	v, err := c.Agree(0b110 | c.Rank()&1)
	if err != nil && !errors.Is(err, mpi.ErrProcFailed) {
		return err
	}
	// rank 0 (flag 0b110) may or may not have counted: the odd ranks
	// contribute 0b111, the even ones 0b110.
	fmt.Printf("rank %d: agreed %#b\n", c.Rank(), v)
	return recover(c)
}

// recover revokes c, shrinks it and sums over the survivors. A rank can
// die after a Shrink counted it alive (the agree mode's victim kills
// itself at a moment the others do not know): then the sum fails with
// ErrProcFailed, and the survivors recover again, the usual ULFM loop.
func recover(c *mpi.Comm) error {
	for try := 0; ; try++ {
		c.Revoke()
		s, err := c.Shrink()
		if err != nil {
			return err
		}
		sum, err := mpi.Allreduce(s, 1, mpi.Sum[int]())
		if err == nil {
			fmt.Printf("rank %d: survivors %d sum %d\n", c.Rank(), s.Size(), sum)
			return nil
		}
		if try == 3 || (!errors.Is(err, mpi.ErrProcFailed) && !errors.Is(err, mpi.ErrRevoked)) {
			return err
		}
		c = s
	}
}

func fnfail(c *mpi.Comm) error {
	last := c.Size() - 1
	if c.Rank() == last {
		return errors.New("the last rank gives up")
	}
	_, _, err := mpi.Recv[int](c, last, 2)
	if !errors.Is(err, mpi.ErrProcFailed) && !errors.Is(err, mpi.ErrRevoked) {
		return fmt.Errorf("Recv from the failed rank: %v, want ErrProcFailed or ErrRevoked", err)
	}
	return recover(c)
}

// rdv is the rdv mode: the victim dies in the middle of a loop of large
// Allreduces, so that the survivors abandon rendezvous transfers between
// live ranks when they revoke (issue 40).
func rdv(c *mpi.Comm) error {
	const n = 64 << 10 // float64s: 512 KiB, above every eager limit
	const rounds = 40
	// The argument after the mode lists the victims' delays, for the
	// last rank, the one before it, and so on: each death revokes
	// again. A delay "rN" kills the victim as it enters round N instead.
	kills := ""
	if len(os.Args) > 2 {
		kills = os.Args[2]
	}
	dieAt := -1
	for i, ds := range strings.Split(kills, ",") {
		if c.Rank() != c.Size()-1-i {
			continue
		}
		if r, ok := strings.CutPrefix(ds, "r"); ok {
			dieAt, _ = strconv.Atoi(r)
			continue
		}
		d, _ := time.ParseDuration(ds + "us")
		go func() {
			time.Sleep(d)
			syscall.Kill(os.Getpid(), syscall.SIGKILL)
		}()
	}
	v := make([]float64, n)
	for i := range v {
		v[i] = 1
	}
	for done := 0; done < rounds; {
		if done == dieAt {
			syscall.Kill(os.Getpid(), syscall.SIGKILL)
		}
		sum, err := mpi.AllreduceSlice(c, v, mpi.Sum[float64]())
		if err != nil && !errors.Is(err, mpi.ErrProcFailed) && !errors.Is(err, mpi.ErrRevoked) {
			return err
		}
		// A collective may complete on some ranks and fail on others,
		// and those still in it wait until it is revoked; then the
		// survivors agree on whether the round counts.
		ok := 0
		if err == nil {
			ok = 1
		} else {
			c.Revoke()
		}
		flag, aerr := c.Agree(ok)
		if aerr != nil && !errors.Is(aerr, mpi.ErrProcFailed) {
			return aerr
		}
		if aerr == nil && flag == 1 {
			if sum[0] != float64(c.Size()) || sum[n-1] != float64(c.Size()) {
				return fmt.Errorf("round %d: sum %v, want %d", done, sum[0], c.Size())
			}
			done++
			continue
		}
		c.Revoke()
		s, err := c.Shrink()
		if err != nil {
			return err
		}
		c = s
	}
	fmt.Printf("rank %d: rdv survivors %d\n", c.Rank(), c.Size())
	return nil
}

// pcoll is the pcoll mode: every survivor's Wait must end with
// ErrProcFailed (or ErrRevoked, if another survivor revoked WORLD
// first), never hang.
func pcoll(c *mpi.Comm) error {
	last := c.Size() - 1
	out := []int64{0}
	req, err := mpi.AllreduceInit(c, []int64{1}, out, mpi.Sum[int64]())
	if err != nil {
		return err
	}
	at := time.Now().Add(20 * time.Millisecond) // when the last rank dies
	at, err = mpi.Bcast(c, at, last)
	if err != nil {
		return err
	}
	for i := 0; ; i++ {
		if c.Rank() == last && time.Now().After(at) {
			syscall.Kill(os.Getpid(), syscall.SIGKILL)
			select {}
		}
		if err = req.Start(); err == nil {
			_, err = req.Wait()
		}
		if err != nil {
			break
		}
		if out[0] != int64(c.Size()) {
			return fmt.Errorf("round %d: sum %d, want %d", i, out[0], c.Size())
		}
	}
	switch {
	case errors.Is(err, mpi.ErrProcFailed):
		fmt.Printf("rank %d: detect pcoll %d us\n", c.Rank(), time.Since(at).Microseconds())
	case errors.Is(err, mpi.ErrRevoked):
	default:
		return fmt.Errorf("persistent Allreduce with the last rank dead: %v, want ErrProcFailed or ErrRevoked", err)
	}
	if err := req.Free(); err != nil {
		return err
	}
	return recover(c)
}
