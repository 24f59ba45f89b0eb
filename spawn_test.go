package mpi_test

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mpigo/mpi"
	"github.com/mpigo/mpi/internal/boot"
)

func init() {
	// spawn1/spawn2: the children greet their parents and answer.
	mpi.RegisterSpawnable("spawntest.echo", func(world *mpi.Comm) error {
		parent := world.GetParent()
		if parent == nil {
			return errors.New("no parent")
		}
		if parent.RemoteSize() < 1 {
			return fmt.Errorf("parent remote size %d", parent.RemoteSize())
		}
		if world.Rank() == 0 {
			v, _, err := mpi.Recv[int](parent, 0, 1)
			if err != nil {
				return err
			}
			if err := mpi.Send(parent, v*10+world.Size(), 0, 2); err != nil {
				return err
			}
		}
		// spawnintra: the merged communicator spans both jobs.
		m, err := parent.IntercommMerge(true)
		if err != nil {
			return err
		}
		sum, err := mpi.Allreduce(m, 1, mpi.Sum[int]())
		if err != nil {
			return err
		}
		if sum != m.Size() {
			return fmt.Errorf("child: merged sum %d, size %d", sum, m.Size())
		}
		m.Free()
		return parent.Disconnect()
	})
	mpi.RegisterSpawnable("spawntest.app", func(world *mpi.Comm) error {
		v, _, _ := world.GetAttr(mpi.AttrAppNum)
		_, err := mpi.Gather(world.GetParent(), v.(int), 0) // to the parents' root
		if err != nil {
			return err
		}
		return world.GetParent().Disconnect()
	})
	mpi.RegisterSpawnable("spawntest.fail", func(world *mpi.Comm) error {
		return errors.New("this child fails")
	})
}

func TestSpawnGoroutines(t *testing.T) {
	err := mpi.Run(2, func(world *mpi.Comm) error {
		ic, codes, err := world.Spawn("spawntest.echo", nil, 3, nil, 0)
		if err != nil {
			return err
		}
		if !ic.IsInter() || ic.RemoteSize() != 3 || len(codes) != 3 {
			return fmt.Errorf("intercomm: inter %v remote %d codes %d", ic.IsInter(), ic.RemoteSize(), len(codes))
		}
		if world.GetParent() != nil {
			return errors.New("the parents have a parent")
		}
		if world.Rank() == 0 {
			if err := mpi.Send(ic, 4, 0, 1); err != nil {
				return err
			}
			v, _, err := mpi.Recv[int](ic, 0, 2)
			if err != nil {
				return err
			}
			if v != 43 {
				return fmt.Errorf("child answered %d, want 43", v)
			}
		}
		m, err := ic.IntercommMerge(false)
		if err != nil {
			return err
		}
		if m.Size() != 5 || m.Rank() != world.Rank() {
			return fmt.Errorf("merged: size %d rank %d", m.Size(), m.Rank())
		}
		sum, err := mpi.Allreduce(m, 1, mpi.Sum[int]())
		if err != nil {
			return err
		}
		if sum != 5 {
			return fmt.Errorf("merged sum %d", sum)
		}
		m.Free()
		return ic.Disconnect()
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestSpawnMultipleGoroutines(t *testing.T) {
	err := mpi.Run(1, func(world *mpi.Comm) error {
		ic, _, err := world.SpawnMultiple([]mpi.SpawnCmd{
			{Command: "spawntest.app", MaxProcs: 2},
			{Command: "spawntest.app", MaxProcs: 1},
		}, 0)
		if err != nil {
			return err
		}
		apps, err := mpi.Gather(ic, 0, mpi.Root)
		if err != nil {
			return err
		}
		if fmt.Sprint(apps) != "[0 0 1]" {
			return fmt.Errorf("appnums %v, want [0 0 1]", apps)
		}
		return ic.Disconnect()
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestSpawnBadInput(t *testing.T) {
	err := mpi.Run(2, func(world *mpi.Comm) error {
		start := time.Now()
		_, _, err := world.Spawn("spawntest.nosuch", nil, 2, nil, 0)
		if !errors.Is(err, mpi.ErrSpawn) || !strings.Contains(err.Error(), "RegisterSpawnable") {
			return fmt.Errorf("spawning an unknown name: %v, want ErrSpawn naming RegisterSpawnable", err)
		}
		// Children that fail once connected: a wait on them ends.
		ic, _, err := world.Spawn("spawntest.fail", nil, 2, nil, 0)
		if err != nil {
			return err
		}
		if _, _, err := mpi.Recv[int](ic, 0, 0); !errors.Is(err, mpi.ErrProcFailed) {
			return fmt.Errorf("a receive from a failed child: %v, want ErrProcFailed", err)
		}
		_, _, err = world.Spawn("spawntest.echo", nil, 0, nil, 0)
		if !errors.Is(err, mpi.ErrSpawn) {
			return fmt.Errorf("spawning 0: %v", err)
		}
		if d := time.Since(start); d > 5*time.Second {
			return fmt.Errorf("the errors took %v", d)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// selfconacc and namepub: two jobs started apart join through a port
// found by name.
func TestAcceptConnectJobs(t *testing.T) {
	var wg sync.WaitGroup
	errs := make([]error, 2)
	wg.Add(2)
	go func() {
		defer wg.Done()
		errs[0] = mpi.Run(2, func(world *mpi.Comm) error {
			var port string
			if world.Rank() == 0 {
				var err error
				if port, err = mpi.OpenPort(nil); err != nil {
					return err
				}
				if err := mpi.PublishName("spawntest-svc", nil, port); err != nil {
					return err
				}
			}
			ic, err := world.CommAccept(port, nil, 0)
			if err != nil {
				return err
			}
			if world.Rank() == 0 {
				if err := mpi.UnpublishName("spawntest-svc", nil, port); err != nil {
					return err
				}
				if err := mpi.ClosePort(port); err != nil {
					return err
				}
			}
			got, err := mpi.Bcast(ic, 0, 0) // from the client's rank 0
			if err != nil {
				return err
			}
			if got != 77 || ic.RemoteSize() != 3 {
				return fmt.Errorf("server: got %d from a group of %d", got, ic.RemoteSize())
			}
			return ic.Disconnect()
		})
	}()
	go func() {
		defer wg.Done()
		errs[1] = mpi.Run(3, func(world *mpi.Comm) error {
			var port string
			if world.Rank() == 0 {
				deadline := time.Now().Add(5 * time.Second)
				for {
					p, err := mpi.LookupName("spawntest-svc", nil)
					if err == nil {
						port = p
						break
					}
					if !errors.Is(err, mpi.ErrName) || time.Now().After(deadline) {
						return err
					}
					time.Sleep(5 * time.Millisecond)
				}
			}
			ic, err := world.CommConnect(port, nil, 0)
			if err != nil {
				return err
			}
			root := mpi.ProcNull
			if world.Rank() == 0 {
				root = mpi.Root
			}
			if _, err := mpi.Bcast(ic, 77, root); err != nil {
				return err
			}
			return ic.Disconnect()
		})
	}()
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
}

func TestConnectBadPorts(t *testing.T) {
	err := mpi.Run(2, func(world *mpi.Comm) error {
		start := time.Now()
		if _, err := world.CommConnect("garbage", nil, 0); !errors.Is(err, mpi.ErrPort) {
			return fmt.Errorf("garbage port: %v", err)
		}
		var port string
		if world.Rank() == 0 {
			p, err := mpi.OpenPort(nil)
			if err != nil {
				return err
			}
			mpi.ClosePort(p) // a port whose owner is gone
			port = p
		}
		if _, err := world.CommConnect(port, nil, 0); !errors.Is(err, mpi.ErrPort) {
			return fmt.Errorf("closed port: %v", err)
		}
		// A stranger who guesses the address but not the secret.
		if world.Rank() == 0 {
			p, err := mpi.OpenPort(nil)
			if err != nil {
				return err
			}
			defer mpi.ClosePort(p)
			i := strings.Index(p, "@")
			port = "mpigo-port:" + strings.Repeat("00", 16) + p[i:]
		}
		if _, err := world.CommConnect(port, nil, 0); !errors.Is(err, mpi.ErrPort) || !strings.Contains(err.Error(), "secret") {
			return fmt.Errorf("wrong secret: %v", err)
		}
		if _, err := mpi.LookupName("spawntest-missing", nil); !errors.Is(err, mpi.ErrName) {
			return fmt.Errorf("missing name: %v", err)
		}
		if d := time.Since(start); d > 5*time.Second {
			return fmt.Errorf("the errors took %v", d)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestCommJoin(t *testing.T) {
	a, b := net.Pipe()
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, conn := range []net.Conn{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = mpi.Run(1, func(world *mpi.Comm) error {
				ic, err := mpi.CommJoin(world, conn)
				if err != nil {
					return err
				}
				v, err := mpi.Allreduce(ic, i+1, mpi.Sum[int]())
				if err != nil {
					return err
				}
				if v != 2-i { // an intercommunicator's allreduce gives the other group's sum

					return fmt.Errorf("side %d: got %d from the other", i, v)
				}
				return ic.Disconnect()
			})
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
}

func init() {
	mpi.RegisterSpawnable("spawntest.ping", func(world *mpi.Comm) error {
		p := world.GetParent()
		v, _, err := mpi.Recv[int](p, 0, 0)
		if err != nil {
			return err
		}
		if err := mpi.Send(p, v+world.Rank(), 0, 0); err != nil {
			return err
		}
		return p.Disconnect()
	})
	// spaiccreate: the children build an intercommunicator with their
	// parents through IntercommCreate over the merged communicator.
	mpi.RegisterSpawnable("spawntest.iccreate", func(world *mpi.Comm) error {
		p := world.GetParent()
		m, err := p.IntercommMerge(true)
		if err != nil {
			return err
		}
		ic, err := mpi.IntercommCreate(world, 0, m, 0, 9)
		if err != nil {
			return err
		}
		v, err := mpi.Allreduce(ic, world.Rank()+1, mpi.Sum[int]())
		if err != nil {
			return err
		}
		if v != 3 { // the parents: 1+2
			return fmt.Errorf("child: %d from the parents", v)
		}
		ic.Free()
		m.Free()
		return p.Disconnect()
	})
}

// concurrent_spawns: ranks spawn at the same time on their own Self, and
// one spawns over and over.
func TestSpawnConcurrent(t *testing.T) {
	err := mpi.Run(3, func(world *mpi.Comm) error {
		rounds := 1
		if world.Rank() == 0 {
			rounds = 4
		}
		for i := 0; i < rounds; i++ {
			ic, _, err := world.Self().Spawn("spawntest.ping", nil, 2, nil, 0)
			if err != nil {
				return err
			}
			for r := 0; r < 2; r++ {
				if err := mpi.Send(ic, 100*world.Rank()+i, r, 0); err != nil {
					return err
				}
			}
			for r := 0; r < 2; r++ {
				v, _, err := mpi.Recv[int](ic, r, 0)
				if err != nil {
					return err
				}
				if v != 100*world.Rank()+i+r {
					return fmt.Errorf("round %d: child %d said %d", i, r, v)
				}
			}
			if err := ic.Disconnect(); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestSpawnIntercommCreate(t *testing.T) {
	err := mpi.Run(2, func(world *mpi.Comm) error {
		p, _, err := world.Spawn("spawntest.iccreate", nil, 3, nil, 0)
		if err != nil {
			return err
		}
		m, err := p.IntercommMerge(false)
		if err != nil {
			return err
		}
		ic, err := mpi.IntercommCreate(world, 0, m, 2, 9) // the children's leader is merged rank 2
		if err != nil {
			return err
		}
		v, err := mpi.Allreduce(ic, world.Rank()+1, mpi.Sum[int]())
		if err != nil {
			return err
		}
		if v != 6 { // the children: 1+2+3
			return fmt.Errorf("parent: %d from the children", v)
		}
		ic.Free()
		m.Free()
		return p.Disconnect()
	})
	if err != nil {
		t.Fatal(err)
	}
}

// disconnect: Disconnect with the other job gone ends, with an error.
func TestDisconnectPeerGone(t *testing.T) {
	err := mpi.Run(1, func(world *mpi.Comm) error {
		ic, _, err := world.Spawn("spawntest.fail", nil, 1, nil, 0)
		if err != nil {
			return err
		}
		done := make(chan error, 1)
		go func() { done <- ic.Disconnect() }()
		select {
		case err := <-done:
			if !errors.Is(err, mpi.ErrProcFailed) {
				return fmt.Errorf("Disconnect from a failed job: %v, want ErrProcFailed", err)
			}
		case <-time.After(8 * time.Second):
			return errors.New("Disconnect from a failed job hangs")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func init() {
	// spawntest.slow computes (outside MPI) for longer than the hang
	// threshold before it answers its parents; spawntest.waiter waits for
	// its parents, who compute first; spawntest.stuck waits for a message
	// its parents never send.
	mpi.RegisterSpawnable("spawntest.slow", func(world *mpi.Comm) error {
		time.Sleep(time.Second)
		if world.Rank() == 0 {
			if err := mpi.Send(world.GetParent(), 7, 0, 1); err != nil {
				return err
			}
		}
		return world.GetParent().Disconnect()
	})
	mpi.RegisterSpawnable("spawntest.waiter", func(world *mpi.Comm) error {
		if world.Rank() == 0 {
			if _, _, err := mpi.Recv[int](world.GetParent(), 0, 1); err != nil {
				return err
			}
		}
		return world.GetParent().Disconnect()
	})
	mpi.RegisterSpawnable("spawntest.stuck", func(world *mpi.Comm) error {
		_, _, err := mpi.Recv[int](world.GetParent(), 0, 1)
		return err
	})
}

// TestSpawnHangFamily: goroutine ranks that wait for the goroutine ranks
// they spawned (or that spawned them) while those compute are not hung,
// however long the computation; a job and its children that all wait for
// each other are.
func TestSpawnHangFamily(t *testing.T) {
	cfg := mpi.DefaultConfig()
	cfg.HangReport = 200 * time.Millisecond
	cases := []struct {
		name, child string
		parent      func(ic *mpi.Comm) error
		hang        bool
	}{
		{"parents wait for busy children", "spawntest.slow", func(ic *mpi.Comm) error {
			if ic.Rank() == 0 {
				v, _, err := mpi.Recv[int](ic, 0, 1)
				if err == nil && v != 7 {
					err = fmt.Errorf("child sent %d, want 7", v)
				}
				if err != nil {
					return err
				}
			}
			return ic.Disconnect()
		}, false},
		{"children wait for busy parents", "spawntest.waiter", func(ic *mpi.Comm) error {
			time.Sleep(time.Second)
			if ic.Rank() == 0 {
				if err := mpi.Send(ic, 1, 0, 1); err != nil {
					return err
				}
			}
			return ic.Disconnect()
		}, false},
		{"parents and children wait for each other", "spawntest.stuck", func(ic *mpi.Comm) error {
			_, _, err := mpi.Recv[int](ic, 0, 2)
			return err
		}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			done := make(chan error, 1)
			go func() {
				done <- mpi.RunConfig(2, cfg, func(world *mpi.Comm) error {
					ic, _, err := world.Spawn(tc.child, nil, 2, nil, 0)
					if err != nil {
						return err
					}
					return tc.parent(ic)
				})
			}()
			select {
			case err := <-done:
				// In a true hang, whichever job is reported first ends,
				// and the other learns it from the lost connection.
				ended := err != nil && (strings.Contains(err.Error(), "blocked in MPI") || errors.Is(err, mpi.ErrProcFailed))
				if tc.hang && !ended {
					t.Fatalf("want a hang report or the end of the hung children, got %v", err)
				}
				if !tc.hang && err != nil {
					t.Fatal(err)
				}
			case <-time.After(30 * time.Second):
				t.Fatal("the job neither ended nor was reported hung in 30s")
			}
		})
	}
}

// TestNameServer: with MPIGO_NAMESERVER set, the name calls ask that
// server (mpigo nameserver) and not the process's own table; a wrong
// secret or a value that is not a name server's is a clear error.
func TestNameServer(t *testing.T) {
	secret := make([]byte, 32)
	for i := range secret {
		secret[i] = byte(i + 1)
	}
	srv, err := boot.ServeNames("127.0.0.1:0", secret)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	good := boot.FormatNameServer(srv.Addr(), secret)
	wrong := make([]byte, 32)
	err = mpi.Run(1, func(world *mpi.Comm) error {
		port, err := mpi.OpenPort(nil)
		if err != nil {
			return err
		}
		defer mpi.ClosePort(port)
		t.Setenv("MPIGO_NAMESERVER", good)
		if err := mpi.PublishName("ns-test", nil, port); err != nil {
			return err
		}
		if got, err := mpi.LookupName("ns-test", nil); err != nil || got != port {
			return fmt.Errorf("lookup through the server: %q, %v; want %q", got, err, port)
		}
		t.Setenv("MPIGO_NAMESERVER", "")
		if _, err := mpi.LookupName("ns-test", nil); !errors.Is(err, mpi.ErrName) {
			return fmt.Errorf("the process's own table has the name: %v", err)
		}
		t.Setenv("MPIGO_NAMESERVER", boot.FormatNameServer(srv.Addr(), wrong))
		if _, err := mpi.LookupName("ns-test", nil); !errors.Is(err, mpi.ErrName) {
			return fmt.Errorf("lookup with a wrong secret: %v, want ErrName", err)
		}
		if err := mpi.PublishName("ns-other", nil, port); !errors.Is(err, mpi.ErrService) {
			return fmt.Errorf("publish with a wrong secret: %v, want ErrService", err)
		}
		t.Setenv("MPIGO_NAMESERVER", "not-a-server")
		if err := mpi.PublishName("ns-other", nil, port); !errors.Is(err, mpi.ErrService) || !strings.Contains(err.Error(), "MPIGO_NAMESERVER") {
			return fmt.Errorf("a garbage MPIGO_NAMESERVER: %v, want ErrService naming it", err)
		}
		t.Setenv("MPIGO_NAMESERVER", good)
		if err := mpi.UnpublishName("ns-test", nil, port); err != nil {
			return err
		}
		// A port name of another origin is published as it is (MPICH's
		// spawn/namepub); one that is not one word is ErrPort.
		for _, useServer := range []bool{true, false} {
			if !useServer {
				t.Setenv("MPIGO_NAMESERVER", "")
			}
			if err := mpi.PublishName("foreign", nil, "otherhost:122"); err != nil {
				return fmt.Errorf("publish a foreign port name (server %v): %v", useServer, err)
			}
			if got, err := mpi.LookupName("foreign", nil); err != nil || got != "otherhost:122" {
				return fmt.Errorf("lookup of a foreign port name (server %v): %q, %v", useServer, got, err)
			}
			if err := mpi.UnpublishName("foreign", nil, "otherhost:122"); err != nil {
				return err
			}
			if err := mpi.PublishName("foreign", nil, "two words"); !errors.Is(err, mpi.ErrPort) {
				return fmt.Errorf("publish of %q: %v, want ErrPort", "two words", err)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
