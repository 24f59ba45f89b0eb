// Command spawnprog is the dynamic-process test program of the launcher
// tests (spawn_test.go): spawning itself, ports and the name service
// between processes, and the errors of launchers that cannot spawn.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/mpigo/mpi"
)

func main() {
	mode := ""
	if len(os.Args) > 1 {
		mode = os.Args[1]
	}
	mpi.Main(func(world *mpi.Comm) error {
		switch mode {
		case "parent":
			return parent(world)
		case "child":
			return child(world)
		case "missing":
			return missing(world)
		case "nospawn":
			return nospawn(world)
		case "names":
			return names(world)
		case "waitslow":
			return waitSlow(world)
		case "slowchild":
			return slowChild(world)
		case "nsserver", "nsclient":
			return apart(world, mode == "nsserver")
		case "spawntime":
			return spawnTime(world)
		case "sendrank":
			p := world.GetParent()
			if err := mpi.Send(p, world.Rank(), 0, 1); err != nil {
				return err
			}
			return p.Disconnect()
		case "pool":
			return pool(world)
		case "poolworker":
			return mpi.ServeExecutor(world, func(_ context.Context, v int) (int, error) { return v + 1, nil })
		}
		return fmt.Errorf("unknown mode %q", mode)
	})
}

// parent spawns 4 children, checks their arguments came (spawnargv),
// talks to them, merges (spawnintra) and disconnects.
func parent(world *mpi.Comm) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	start := time.Now()
	ic, codes, err := world.Spawn(self, []string{"child", "a b", "-x"}, 4, nil, 0)
	if err != nil {
		return err
	}
	if len(codes) != 4 || ic.RemoteSize() != 4 {
		return fmt.Errorf("codes %d, remote size %d", len(codes), ic.RemoteSize())
	}
	if world.Rank() == 0 {
		for r := 0; r < 4; r++ {
			v, _, err := mpi.Recv[int](ic, r, 1)
			if err != nil {
				return err
			}
			if v != r*r {
				return fmt.Errorf("child %d said %d", r, v)
			}
		}
		fmt.Printf("spawn of 4 to their first messages: %v\n", time.Since(start).Round(time.Microsecond))
	}
	m, err := ic.IntercommMerge(false)
	if err != nil {
		return err
	}
	sum, err := mpi.Allreduce(m, m.Rank(), mpi.Sum[int]())
	if err != nil {
		return err
	}
	n := m.Size()
	if sum != n*(n-1)/2 || m.Rank() != world.Rank() {
		return fmt.Errorf("merged: rank %d of %d, sum %d", m.Rank(), n, sum)
	}
	m.Free()
	if err := ic.Disconnect(); err != nil {
		return err
	}
	if world.Rank() == 0 {
		fmt.Println("parent ok")
	}
	return nil
}

func child(world *mpi.Comm) error {
	p := world.GetParent()
	if p == nil {
		return errors.New("no parent")
	}
	if len(os.Args) != 4 || os.Args[2] != "a b" || os.Args[3] != "-x" {
		return fmt.Errorf("arguments %q", os.Args[1:])
	}
	app, _, _ := world.GetAttr(mpi.AttrAppNum)
	if app.(int) != 0 {
		return fmt.Errorf("appnum %v", app)
	}
	if err := mpi.Send(p, world.Rank()*world.Rank(), 0, 1); err != nil {
		return err
	}
	m, err := p.IntercommMerge(true)
	if err != nil {
		return err
	}
	if _, err := mpi.Allreduce(m, m.Rank(), mpi.Sum[int]()); err != nil {
		return err
	}
	m.Free()
	return p.Disconnect()
}

// missing spawns a program that does not exist.
func missing(world *mpi.Comm) error {
	start := time.Now()
	_, _, err := world.Spawn("/no/such/program", nil, 2, nil, 0)
	if !errors.Is(err, mpi.ErrSpawn) {
		return fmt.Errorf("spawning a missing program: %v, want ErrSpawn", err)
	}
	if world.Rank() == 0 {
		fmt.Printf("missing program: %v (in %v)\n", err, time.Since(start).Round(time.Millisecond))
	}
	return nil
}

// nospawn is Spawn under a launcher that cannot: a prompt, clear error.
func nospawn(world *mpi.Comm) error {
	start := time.Now()
	self, _ := os.Executable()
	_, _, err := world.Spawn(self, []string{"child"}, 1, nil, 0)
	d := time.Since(start)
	if !errors.Is(err, mpi.ErrSpawn) {
		return fmt.Errorf("Spawn: %v, want ErrSpawn", err)
	}
	if d > time.Second {
		return fmt.Errorf("Spawn took %v to fail", d)
	}
	if world.Rank() == 0 {
		fmt.Printf("spawn refused: %v\n", err)
	}
	return nil
}

// names: the world's halves are a server and a client that find each
// other through the launcher's name service (namepub, selfconacc).
func names(world *mpi.Comm) error {
	server := world.Rank()%2 == 0
	color := 0
	if !server {
		color = 1
	}
	half, err := world.Split(color, world.Rank())
	if err != nil {
		return err
	}
	var ic *mpi.Comm
	var port string
	if server {
		if half.Rank() == 0 {
			if port, err = mpi.OpenPort(nil); err != nil {
				return err
			}
			if err := mpi.PublishName("spawnprog", nil, port); err != nil {
				return err
			}
		}
		if err := mpi.Barrier(world); err != nil { // published before anyone looks
			return err
		}
		if ic, err = half.CommAccept(port, nil, 0); err != nil {
			return err
		}
		if half.Rank() == 0 {
			if err := mpi.UnpublishName("spawnprog", nil, port); err != nil {
				return err
			}
			mpi.ClosePort(port)
		}
	} else {
		if err := mpi.Barrier(world); err != nil {
			return err
		}
		if half.Rank() == 0 {
			if port, err = mpi.LookupName("spawnprog", nil); err != nil {
				return err
			}
		}
		if ic, err = half.CommConnect(port, nil, 0); err != nil {
			return err
		}
	}
	if _, err := mpi.LookupName("spawnprog-missing", nil); !errors.Is(err, mpi.ErrName) {
		return fmt.Errorf("a missing name: %v, want ErrName", err)
	}
	sum, err := mpi.Allreduce(ic, 1, mpi.Sum[int]())
	if err != nil {
		return err
	}
	if sum != ic.RemoteSize() {
		return fmt.Errorf("sum %d from a remote group of %d", sum, ic.RemoteSize())
	}
	if err := ic.Disconnect(); err != nil {
		return err
	}
	if world.Rank() == 0 {
		fmt.Println("names ok")
	}
	return nil
}

// waitSlow spawns 2 children that compute (outside MPI) for longer than
// the job's hang threshold before they answer; the parents wait in Recv
// meanwhile, which is no hang.
func waitSlow(world *mpi.Comm) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	ic, _, err := world.Spawn(self, []string{"slowchild"}, 2, nil, 0)
	if err != nil {
		return err
	}
	v, _, err := mpi.Recv[int](ic, world.Rank(), 1)
	if err != nil {
		return err
	}
	if v != 100+world.Rank() {
		return fmt.Errorf("child %d said %d", world.Rank(), v)
	}
	if err := ic.Disconnect(); err != nil {
		return err
	}
	if world.Rank() == 0 {
		fmt.Println("waitslow ok")
	}
	return nil
}

// slowChild computes for 3 s, then answers the parent of its rank.
func slowChild(world *mpi.Comm) error {
	time.Sleep(3 * time.Second)
	p := world.GetParent()
	if err := mpi.Send(p, 100+world.Rank(), world.Rank(), 1); err != nil {
		return err
	}
	return p.Disconnect()
}

// pool spawns 3 workers running this program (SpawnExecutor), maps 500
// tasks over them and checks the results come in order.
func pool(world *mpi.Comm) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	x, err := mpi.SpawnExecutor[int, int](world, self, []string{"poolworker"}, 3, nil, mpi.ExecutorOptions{})
	if err != nil {
		return err
	}
	i := 0
	for v, err := range x.Map(context.Background(), func(yield func(int) bool) {
		for k := 0; k < 500 && yield(k); k++ {
		}
	}) {
		if err != nil || v != i+1 {
			return fmt.Errorf("task %d: %d, %v", i, v, err)
		}
		i++
	}
	if err := x.Shutdown(); err != nil {
		return err
	}
	fmt.Printf("pool ok: %d tasks over 3 spawned workers\n", i)
	return nil
}

// apart is one of two jobs started apart that find each other through a
// name server (mpigo nameserver, MPIGO_NAMESERVER): the server publishes
// a port and accepts, the client looks it up (until it is published) and
// connects; they add up their ranks over the intercommunicator.
func apart(world *mpi.Comm, server bool) error {
	var ic *mpi.Comm
	var port string
	var err error
	if server {
		if world.Rank() == 0 {
			if port, err = mpi.OpenPort(nil); err != nil {
				return err
			}
			if err := mpi.PublishName("apart", nil, port); err != nil {
				return err
			}
		}
		if ic, err = world.CommAccept(port, nil, 0); err != nil {
			return err
		}
		if world.Rank() == 0 {
			if err := mpi.UnpublishName("apart", nil, port); err != nil {
				return err
			}
			mpi.ClosePort(port)
		}
	} else {
		if world.Rank() == 0 {
			for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
				port, err = mpi.LookupName("apart", nil)
				if err == nil || !errors.Is(err, mpi.ErrName) || time.Now().After(deadline) {
					break
				}
			}
			if err != nil {
				return err
			}
		}
		if ic, err = world.CommConnect(port, nil, 0); err != nil {
			return err
		}
	}
	sum, err := mpi.Allreduce(ic, world.Rank()+1, mpi.Sum[int]())
	if err != nil {
		return err
	}
	if err := ic.Disconnect(); err != nil {
		return err
	}
	if world.Rank() == 0 {
		fmt.Printf("apart ok: the other job's ranks sum to %d\n", sum)
	}
	return nil
}

// spawnTime is the mpigo side of bench/spawn.sh: it times Spawn of 4
// children until the first message of each has arrived, as
// bench/ref/spawn.c does for Open MPI, and prints "spawn 4 MILLISECONDS".
func spawnTime(world *mpi.Comm) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	start := time.Now()
	ic, _, err := world.Self().Spawn(self, []string{"sendrank"}, 4, nil, 0)
	if err != nil {
		return err
	}
	for i := 0; i < 4; i++ {
		if _, _, err := mpi.Recv[int](ic, mpi.AnySource, 1); err != nil {
			return err
		}
	}
	fmt.Printf("spawn 4 %.1f\n", float64(time.Since(start).Microseconds())/1e3)
	return ic.Disconnect()
}
