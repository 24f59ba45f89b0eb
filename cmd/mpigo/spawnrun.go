package main

// Spawning for ranks (MPI_Comm_spawn under mpigo run): a rank's root asks
// the job's store for processes (internal/boot/control.go); the launcher
// starts them as a new job, with the flags of the first (transport,
// hosts, -x variables), whose ranks connect to the parent's port
// (MPIGO_PARENT_PORT) before their program runs. The same spawner serves
// every job of the launcher, so spawned jobs may spawn too, and they all
// share one name service (MPI_Publish_name). The launcher waits for every
// spawned job before it exits, so that none is left behind.

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/mpigo/mpi/internal/boot"
)

// spawner starts the jobs that ranks spawn.
type spawner struct {
	base           *runConfig
	runDir         func() (string, error)
	stdout, stderr io.Writer
	names          *boot.Names
	universe       int

	// fam: the hang watches of the jobs of this mpigo run (diagrun.go).
	fam hangFamily

	mu   sync.Mutex
	jobs int // spawned so far, for the build folder's names
	wg   sync.WaitGroup
}

// maxSpawn bounds the processes of one spawn request.
const maxSpawn = 4096

func newSpawner(cfg *runConfig, runDir func() (string, error), stdout, stderr io.Writer) *spawner {
	s := &spawner{base: cfg, runDir: runDir, stdout: stdout, stderr: stderr, names: boot.NewNames()}
	for _, h := range cfg.hosts {
		s.universe += h.slots
	}
	if s.universe > 0 {
		cfg.env = append(cfg.env, "MPIGO_UNIVERSE_SIZE="+strconv.Itoa(s.universe))
	}
	return s
}

// serve has kvs, a job's store, take spawn and name requests.
func (s *spawner) serve(kvs *boot.Server) {
	kvs.SetSpawn(s.spawn)
	kvs.SetNames(s.names)
}

// wait waits for every spawned job to end.
func (s *spawner) wait() { s.wg.Wait() }

// spawnRequest is package mpi's spawnReq.
type spawnRequest struct {
	Port string `json:"port"`
	Cmds []struct {
		Cmd  string   `json:"cmd"`
		Args []string `json:"args"`
		N    int      `json:"n"`
		Host string   `json:"host"`
		Wdir string   `json:"wdir"`
		Path string   `json:"path"`
	} `json:"cmds"`
}

// spawn starts the job req asks for, or says why it cannot; done learns
// how it ended.
func (s *spawner) spawn(req string, done func(status string)) error {
	var r spawnRequest
	if err := json.Unmarshal([]byte(req), &r); err != nil {
		return fmt.Errorf("a spawn request mpigo run cannot read: %v", err)
	}
	if r.Port == "" || len(r.Cmds) == 0 {
		return errors.New("a spawn request without a port or a command")
	}
	base := s.base
	cfg := &runConfig{tagOutput: base.tagOutput, ranksPerProc: 1, agent: base.agent, transport: base.transport,
		insecure: base.insecure, hosts: base.hosts, env: base.env, bindTo: "none", spawner: s, spawned: true,
		diag: diagFlags{hang: base.diag.hang}} // one hang threshold for the family
	total := 0
	for i, c := range r.Cmds {
		if c.N < 1 || c.N > maxSpawn || total+c.N > maxSpawn {
			return fmt.Errorf("command %d: %d processes (want 1 to %d in all)", i, c.N, maxSpawn)
		}
		total += c.N
		// wdir is the command's own: each command is a group of the
		// job, with a folder of its own.
		if c.Wdir != "" {
			if st, err := os.Stat(c.Wdir); err != nil || !st.IsDir() {
				return fmt.Errorf("info wdir %q: not a folder here", c.Wdir)
			}
		}
		if c.Host != "" {
			cfg.hosts = []hostSlots{{name: c.Host, slots: c.N}}
		}
		prog, err := s.resolve(c.Cmd, c.Path, c.Wdir)
		if err != nil {
			return err
		}
		cfg.groups = append(cfg.groups, runGroup{n: c.N, prog: prog, args: c.Args, dir: c.Wdir,
			env: []string{"MPIGO_PARENT_PORT=" + r.Port, "MPIGO_APPNUM=" + strconv.Itoa(i)}})
	}
	if s.universe == 0 {
		cfg.env = append(cfg.env[:len(cfg.env):len(cfg.env)], "MPIGO_UNIVERSE_SIZE="+strconv.Itoa(total))
	}
	s.mu.Lock()
	s.jobs++
	s.mu.Unlock()
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		dir, _ := s.runDir()
		code := launch(cfg, dir, s.stdout, s.stderr)
		if code == 0 {
			done("0")
		} else {
			done(fmt.Sprintf("exit status %d (see the spawned ranks' messages above)", code))
		}
	}()
	return nil
}

// resolve finds the program cmd of a spawn: in the folders of path (the
// info key, ':'-separated) if given, else as mpigo run finds its own
// (relative to dir, the job's working folder, if any).
func (s *spawner) resolve(cmd, path, dir string) (string, error) {
	if cmd == "" {
		return "", errors.New("an empty command")
	}
	if path != "" && !strings.ContainsRune(cmd, '/') {
		for _, d := range filepath.SplitList(path) {
			p := filepath.Join(d, cmd)
			if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
				return filepath.Abs(p)
			}
		}
		return "", fmt.Errorf("%s: not found in the info key path %q", cmd, path)
	}
	if dir != "" && !filepath.IsAbs(cmd) && strings.ContainsRune(cmd, '/') {
		cmd = filepath.Join(dir, cmd)
	}
	if _, err := exec.LookPath(cmd); err != nil && !strings.ContainsRune(cmd, '/') {
		return "", fmt.Errorf("%s: not found in PATH", cmd)
	}
	s.mu.Lock()
	i := 1000 + s.jobs
	s.mu.Unlock()
	return resolveProgram(cmd, s.runDir, i, s.stderr)
}
