package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// The flags of mpigo run that people bring from mpiexec (MPICH's Hydra)
// and mpirun (Open MPI): environment (-x, -genv, -env), placement (-ppn,
// -npernode, --map-by), CPU binding (--bind-to) and per-rank output files
// (--output-filename).

// envList collects VAR=VALUE settings from -x, -genv and -env.
type envList struct {
	flag string    // the flag's name, for messages
	vals *[]string // VAR=VALUE
	warn *[]string // -x VAR with VAR unset here: said once the job starts
}

func (e envList) String() string { return "" }

// Set takes VAR=VALUE, or (for -x) VAR alone, which passes on mpigo
// run's own value.
func (e envList) Set(s string) error {
	name, val, ok := strings.Cut(s, "=")
	if !validEnvName(name) {
		if e.flag == "x" {
			return fmt.Errorf("-x %q: want VAR or VAR=VALUE, VAR a name of letters, digits and _", s)
		}
		return fmt.Errorf("-%s %q: want VAR=VALUE (or -%s VAR VALUE), VAR a name of letters, digits and _", e.flag, s, e.flag)
	}
	if !ok {
		if e.flag != "x" {
			return fmt.Errorf("-%s %s: no value (want -%s %s=VALUE or -%s %s VALUE)", e.flag, name, e.flag, name, e.flag, name)
		}
		v, set := os.LookupEnv(name)
		if !set {
			*e.warn = append(*e.warn, fmt.Sprintf("-x %s: %s is not set in mpigo run's environment, so the ranks do not get it", name, name))
			return nil
		}
		val = v
	}
	*e.vals = append(*e.vals, name+"="+val)
	return nil
}

// validEnvName reports whether s can be the name of an environment
// variable passed through a shell (letters, digits, _; no digit first).
func validEnvName(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		switch {
		case c == '_', c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
		case c >= '0' && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

// pairFlags take their value as two words (Hydra: -genv VAR VALUE) as well
// as one (VAR=VALUE).
var pairFlags = map[string]bool{"genv": true, "env": true}

// joinPairs rewrites "-genv VAR VALUE" (and -env) among the flags before
// the program into "-genv=VAR=VALUE", which package flag can read. It
// stops at the program (the first word that is not a flag or a flag's
// value), so the program's own arguments are never touched.
func joinPairs(args []string, fs *flag.FlagSet) []string {
	out := make([]string, 0, len(args))
	i := 0
	for i < len(args) {
		a := args[i]
		if a == "--" || a == ":" || !strings.HasPrefix(a, "-") || a == "-" {
			break
		}
		name, _, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		out = append(out, a)
		i++
		if hasVal {
			continue
		}
		if pairFlags[name] {
			if i+1 < len(args) && !strings.Contains(args[i], "=") && args[i+1] != ":" {
				out[len(out)-1] = "-" + name + "=" + args[i] + "=" + args[i+1]
				i += 2
			}
			continue
		}
		f := fs.Lookup(name)
		if f == nil {
			continue // unknown: the parse says so
		}
		if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
			continue
		}
		if i < len(args) {
			out = append(out, args[i])
			i++
		}
	}
	return append(out, args[i:]...)
}

// placement reads -ppn, -npernode and --map-by into a number of ranks per
// host (0: fill each host's slots in order) and whether ranks go round
// the hosts one at a time (--map-by node).
type placement struct {
	perHost int  // ranks on each host; 0: the host's slots
	strict  bool // ppr/npernode: more ranks than perHost*hosts is an error (Open MPI)
	byNode  bool // round robin over the hosts, one process at a time
	// note, if set, tells the user how a flag was taken where mpigo run
	// reads it differently from Open MPI (printed once before the job).
	note string
}

// parsePlacement checks the placement flags against each other.
func parsePlacement(ppn, npernode int, mapBy string) (placement, error) {
	var p placement
	set := 0
	if ppn != 0 {
		if ppn < 1 {
			return p, fmt.Errorf("-ppn %d: need at least 1 rank per host", ppn)
		}
		p.perHost = ppn
		set++
	}
	if npernode != 0 {
		if npernode < 1 {
			return p, fmt.Errorf("-npernode %d: need at least 1 rank per host", npernode)
		}
		p.perHost, p.strict = npernode, true
		set++
	}
	if mapBy != "" {
		spec := mapBy
		// Open MPI's modifiers: oversubscribing is always allowed here;
		// the others ask for something mpigo does not do.
		if base, mods, ok := strings.Cut(spec, ":"); ok && !strings.HasPrefix(strings.ToLower(spec), "ppr:") {
			for _, m := range strings.Split(mods, ",") {
				if !strings.EqualFold(m, "oversubscribe") && !strings.EqualFold(m, "nooversubscribe") {
					return p, fmt.Errorf("--map-by %s: the modifier %q is not supported (mpigo run supports --map-by slot, node or ppr:N:node)", mapBy, m)
				}
			}
			spec = base
		}
		switch s := strings.ToLower(spec); {
		case s == "slot":
			// Fill each host's slots in order: the default.
		case s == "core" || s == "hwthread":
			// Open MPI counts cores or hardware threads as the slots to
			// fill; here a host's slots are what --host/--hostfile say
			// (or its processors). Accepted, so that scripts written for
			// mpirun run, but said out loud: the user asked for something
			// this launcher reads differently.
			p.note = fmt.Sprintf("--map-by %s is taken as --map-by slot: each host's slots are filled in turn; pin the processes with --bind-to core", spec)
		case s == "node":
			p.byNode = true
		case strings.HasPrefix(s, "ppr:"):
			f := strings.Split(s, ":")
			n, err := strconv.Atoi(f[1])
			if len(f) < 3 || err != nil || n < 1 {
				return p, fmt.Errorf("--map-by %s: want ppr:N:node, N ranks on each host", mapBy)
			}
			if f[2] != "node" {
				return p, fmt.Errorf("--map-by %s: only ppr:N:node (N ranks per host) is supported; mpigo run does not place ranks by %s", mapBy, f[2])
			}
			for _, m := range f[3:] {
				if !strings.EqualFold(m, "oversubscribe") && !strings.EqualFold(m, "nooversubscribe") {
					return p, fmt.Errorf("--map-by %s: the modifier %q is not supported", mapBy, m)
				}
			}
			p.perHost, p.strict = n, true
			set++
		default:
			return p, fmt.Errorf("--map-by %s is not supported: mpigo run places ranks by slot (the default: fill each host in turn), node (round robin over the hosts) or ppr:N:node (N ranks per host)", mapBy)
		}
	}
	if set > 1 {
		return p, errors.New("-ppn, -npernode and --map-by ppr:N:node say the same thing: give one of them")
	}
	return p, nil
}

// applyPlacement fixes the hosts' slots and the number of ranks from the
// placement flags. nGiven says whether -n was on the command line: if not,
// and ranks per host are given, the job fills every host (N per host, as
// mpirun --map-by ppr:N:node does).
func (cfg *runConfig) applyPlacement(p placement, nGiven bool) error {
	cfg.byNode = p.byNode
	if p.perHost == 0 {
		return nil
	}
	if cfg.ranksPerProc > 1 && p.perHost%cfg.ranksPerProc != 0 {
		return fmt.Errorf("%d ranks per host with --ranks-per-proc %d: the ranks per host must be a multiple of the ranks per process", p.perHost, cfg.ranksPerProc)
	}
	nhosts := max(len(cfg.hosts), 1)
	if !nGiven && len(cfg.groups) == 1 {
		cfg.groups[0].n = p.perHost * nhosts
	}
	size := 0
	for _, g := range cfg.groups {
		size += g.n
	}
	if p.strict && size > p.perHost*nhosts {
		where := "this host"
		if len(cfg.hosts) > 0 {
			where = fmt.Sprintf("%d host(s)", nhosts)
		}
		return fmt.Errorf("%d ranks per host on %s make %d ranks, but the job has %d (use -ppn %d to wrap round the hosts, or give more hosts)", p.perHost, where, p.perHost*nhosts, size, p.perHost)
	}
	for i := range cfg.hosts {
		cfg.hosts[i].slots = p.perHost
	}
	return nil
}

// parseBind checks --bind-to.
func parseBind(s string) (bool, error) {
	switch strings.ToLower(s) {
	case "", "none":
		return false, nil
	case "core", "hwthread", "cpu":
		return true, nil
	}
	return false, fmt.Errorf("--bind-to %s is not supported: use core (each process on cores of its own) or none", s)
}

// parseOutput reads --output-filename DIR[:nocopy].
func parseOutput(s string) (dir string, copyOut bool, err error) {
	if s == "" {
		return "", true, nil
	}
	dir, mods, _ := strings.Cut(s, ":")
	copyOut = true
	if mods != "" {
		for _, m := range strings.Split(mods, ",") {
			if !strings.EqualFold(m, "nocopy") {
				return "", false, fmt.Errorf("--output-filename %s: the only option is :nocopy (do not also print the output here)", s)
			}
			copyOut = false
		}
	}
	if dir == "" {
		return "", false, fmt.Errorf("--output-filename %q: no directory", s)
	}
	return dir, copyOut, nil
}

// wrapUsage breaks a flag's help text into lines of at most width
// characters (a longer word stays whole).
func wrapUsage(s string, width int) string {
	var b strings.Builder
	n := 0
	for _, w := range strings.Fields(s) {
		if n > 0 && n+1+len(w) > width {
			b.WriteString("\n")
			n = 0
		} else if n > 0 {
			b.WriteString(" ")
			n++
		}
		b.WriteString(w)
		n += len(w)
	}
	return b.String()
}
