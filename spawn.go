package mpi

// Spawning processes (MPI-4.1 section 11.3). The root opens a port of its
// own, has the children started with the port's name (MPIGO_PARENT_PORT,
// or directly for goroutine children), and accepts on it while the
// children's world connects to it before their program runs: the
// intercommunicator of Spawn is that of CommAccept and CommConnect
// (port.go). Who starts the children depends on how the job was started:
// `mpigo run` starts them as a new job of processes (the root asks it on
// a connection of its own to the launcher's store); a job of goroutine
// ranks (Run) starts functions registered with RegisterSpawnable as a new
// job of goroutine ranks in the same process; other launchers cannot
// start processes for mpigo, and Spawn says so at once (ErrSpawn).

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/mpigo/mpi/internal/boot"
)

// SpawnCmd is one program of SpawnMultiple: its command (a program to run
// under `mpigo run`, or a name given to RegisterSpawnable for goroutine
// ranks), its arguments (without the command), the number of processes,
// and the info keys the launcher reads: "host" (the host to start them
// on), "wdir" (their working directory), "path" (folders, separated by
// ':', to look for the command in), "soft" (accepted: mpigo starts
// MaxProcs processes, which soft always allows).
type SpawnCmd struct {
	Command  string
	Args     []string
	MaxProcs int
	Info     *Info
}

var spawnables struct {
	sync.RWMutex
	m map[string]func(world *Comm) error
}

// RegisterSpawnable makes f a program that ranks of Run may spawn by name
// (Spawn's command): a spawned job of goroutine ranks runs f on each of
// its ranks, whose world's GetParent is the intercommunicator to the
// spawning job. Goroutines cannot exec a program, so a job of goroutine
// ranks can spawn only what is registered. Register before Run, typically
// in an init function; registering a name again replaces it.
func RegisterSpawnable(name string, f func(world *Comm) error) {
	spawnables.Lock()
	defer spawnables.Unlock()
	if spawnables.m == nil {
		spawnables.m = map[string]func(*Comm) error{}
	}
	spawnables.m[name] = f
}

func spawnable(name string) func(*Comm) error {
	spawnables.RLock()
	defer spawnables.RUnlock()
	return spawnables.m[name]
}

// GetParent returns the intercommunicator to the job that spawned the
// caller's job (MPI_Comm_get_parent): its local group is the caller's
// world, its remote group the ranks that called Spawn. It is nil in a job
// that was not spawned, or after Disconnect of the parent.
func (c *Comm) GetParent() *Comm {
	if c == nil || c.p == nil {
		return nil
	}
	c.p.linkMu.Lock()
	defer c.p.linkMu.Unlock()
	if c.p.parent != nil && c.p.parent.freed.Load() {
		c.p.parent = nil
	}
	return c.p.parent
}

// Spawn starts maxprocs processes of command with args and returns an
// intercommunicator between c's group and theirs (MPI_Comm_spawn); the
// children's world reaches it through GetParent. It is collective over
// c; only root's arguments count (the others may pass anything). codes
// has an entry per child, nil where it started. Under `mpigo run` the
// children are a new job of processes (info keys host, wdir, path, soft:
// see SpawnCmd); in a job of Run, command must be a name given to
// RegisterSpawnable; under other launchers Spawn fails at once with
// ErrSpawn, saying why.
func (c *Comm) Spawn(command string, args []string, maxprocs int, info *Info, root int) (_ *Comm, codes []error, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.Spawn", c, root, Undefined), &err)
	}
	return c.spawn("Spawn", []SpawnCmd{{Command: command, Args: args, MaxProcs: maxprocs, Info: info}}, root)
}

// SpawnMultiple is Spawn of several programs at once, which form one job
// (MPI_Comm_spawn_multiple): the children of cmds[0] are its first ranks,
// and each child's AttrAppNum is the index of its command.
func (c *Comm) SpawnMultiple(cmds []SpawnCmd, root int) (_ *Comm, codes []error, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.SpawnMultiple", c, root, Undefined), &err)
	}
	return c.spawn("SpawnMultiple", cmds, root)
}

// spawnReq is what the root asks `mpigo run` for, as JSON.
type spawnReq struct {
	Port string       `json:"port"`
	Cmds []spawnReqCm `json:"cmds"`
}

type spawnReqCm struct {
	Cmd  string   `json:"cmd"`
	Args []string `json:"args"`
	N    int      `json:"n"`
	Host string   `json:"host,omitempty"`
	Wdir string   `json:"wdir,omitempty"`
	Path string   `json:"path,omitempty"`
}

func (c *Comm) spawn(op string, cmds []SpawnCmd, root int) (*Comm, []error, error) {
	if err := c.rootCheck(op, root); err != nil {
		return nil, nil, err
	}
	total := 0
	var port string
	var stop chan error
	if c.rank == root {
		stop = make(chan error, 1)
		err := func() error {
			if len(cmds) == 0 {
				return errors.New("no command to spawn")
			}
			for i, sc := range cmds {
				if sc.MaxProcs < 1 {
					return fmt.Errorf("command %d (%q): maxprocs %d: spawn at least one process", i, sc.Command, sc.MaxProcs)
				}
				total += sc.MaxProcs
			}
			var err error
			if port, err = OpenPort(nil); err != nil {
				return err
			}
			if err = c.p.startChildren(cmds, port, stop); err != nil {
				ClosePort(port)
			}
			return err
		}()
		if err != nil {
			stop <- fmt.Errorf("%w: %v", ErrSpawn, err)
			port = "" // acceptOn reports stop's error
		}
	}
	ic, err := c.acceptOn(port, root, stop)
	if port != "" {
		ClosePort(port)
	}
	if err != nil {
		if errors.Is(err, ErrPort) {
			// The port is the spawn's own: a failure on it is the spawn's.
			err = c.errorf(op, ErrSpawn, loc{}, "%v", err)
		} else if e, ok := err.(*Error); ok {
			e.Op = op
		}
		return nil, nil, err
	}
	return ic, make([]error, ic.RemoteSize()), nil
}

// spawnNotSupported explains why a job started by launcher cannot spawn.
func spawnNotSupported(launcher string) error {
	return fmt.Errorf("the job was started by %s, which cannot start processes for mpigo: start the job with `mpigo run` to spawn processes, or start every process at once (mpiexec -n N, srun -n N) and split the world instead", launcher)
}

// startChildren starts the children of a spawn: stop receives an error if
// they end before they connect.
func (p *proc) startChildren(cmds []SpawnCmd, port string, stop chan error) error {
	j := p.job
	switch {
	case j.boot == nil:
		return startGoroutineChildren(j, cmds, port, stop)
	case j.boot.Launcher != boot.LauncherMpigo:
		return spawnNotSupported(j.boot.Launcher)
	}
	req := spawnReq{Port: port}
	for _, sc := range cmds {
		rc := spawnReqCm{Cmd: sc.Command, Args: sc.Args, N: sc.MaxProcs}
		if sc.Info != nil {
			rc.Host, _ = sc.Info.Get("host")
			rc.Wdir, _ = sc.Info.Get("wdir")
			rc.Path, _ = sc.Info.Get("path")
		}
		req.Cmds = append(req.Cmds, rc)
	}
	b, _ := json.Marshal(req)
	conn, r, err := boot.DialControl(j.boot)
	if err != nil {
		return fmt.Errorf("asking mpigo run to spawn: %v", err)
	}
	conn.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := fmt.Fprintf(conn, "spawn %s\n", b); err != nil {
		conn.Close()
		return fmt.Errorf("asking mpigo run to spawn: %v", err)
	}
	line, err := r.ReadString('\n')
	if err != nil {
		conn.Close()
		return fmt.Errorf("asking mpigo run to spawn: %v", err)
	}
	line = strings.TrimSpace(line)
	if msg, ok := strings.CutPrefix(line, "err "); ok {
		conn.Close()
		return errors.New(msg)
	}
	if line != "ok" {
		conn.Close()
		return fmt.Errorf("mpigo run answered %.80q to spawn", line)
	}
	conn.SetDeadline(time.Time{})
	go watchChildren(conn, r, stop)
	return nil
}

// watchChildren reads the launcher's word that the children's job ended
// ("done STATUS"), and tells the accept if they failed.
func watchChildren(conn net.Conn, r *bufio.Reader, stop chan error) {
	defer conn.Close()
	line, err := r.ReadString('\n')
	if err != nil {
		return
	}
	line = strings.TrimSpace(line)
	if msg, ok := strings.CutPrefix(line, "done "); ok && msg != "0" {
		select {
		case stop <- fmt.Errorf("%w: the spawned job ended before it connected: %s", ErrSpawn, msg):
		default:
		}
	}
}

// startGoroutineChildren runs the registered functions cmds name as a new
// job of goroutine ranks.
func startGoroutineChildren(parent *job, cmds []SpawnCmd, port string, stop chan error) error {
	var fs []func(*Comm) error
	var apps []int
	for i, sc := range cmds {
		f := spawnable(sc.Command)
		if f == nil {
			return fmt.Errorf("%q is not a registered function: a job of goroutine ranks (mpi.Run) can spawn only functions registered with mpi.RegisterSpawnable (to spawn programs, start the job with mpigo run)", sc.Command)
		}
		for k := 0; k < sc.MaxProcs; k++ {
			fs = append(fs, f)
			apps = append(apps, i)
		}
	}
	cfg := DefaultConfig()
	cfg.parentPort = port
	// The parent waits for its children and they for it: one family for
	// hang diagnosis, with one threshold.
	cfg.family, cfg.HangReport = parent.family, parent.hangAfter
	go func() {
		err := runLocal(len(fs), cfg, func(world *Comm) error {
			world.p.appNum = apps[world.Rank()]
			return fs[world.Rank()](world)
		})
		if err != nil {
			select {
			case stop <- fmt.Errorf("%w: the spawned job failed: %v", ErrSpawn, err):
			default:
			}
		}
	}()
	return nil
}

// withParent is f, run after connecting to the parent's port if the job
// was spawned (port not empty).
func withParent(port string, f func(*Comm) error) func(*Comm) error {
	if port == "" {
		return f
	}
	return func(w *Comm) error {
		if err := w.p.connectParent(port); err != nil {
			return err
		}
		return f(w)
	}
}

// connectParent connects the world of a spawned job to its parent, before
// the program runs.
func (p *proc) connectParent(port string) error {
	ic, err := p.world.CommConnect(port, nil, 0)
	if err != nil {
		return fmt.Errorf("connecting to the job that spawned this one: %w", err)
	}
	ic.name = "PARENT"
	p.linkMu.Lock()
	p.parent = ic
	p.linkMu.Unlock()
	return nil
}

// AttrAppNum gives, as an int, the index of the caller's program among
// those started together (MPI_APPNUM): the command of SpawnMultiple, or
// the `:`-separated program of `mpigo run`; 0 otherwise.
var AttrAppNum = &Keyval{name: "AttrAppNum", predefined: func(c *Comm) any { return c.p.appNum }}
