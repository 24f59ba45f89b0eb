package coll

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Algorithm selection.
//
// Every collective that has more than one algorithm picks one with Select,
// from ONE table of rules: for each collective, an ordered list of
// (algorithm, largest message size) pairs. Select takes the first rule whose
// size bound holds and whose algorithm can run (Applicable: a power of two
// for some, a commutative operation for others, equal block sizes for
// Bruck). The last rule of each list has no bound and an algorithm that
// always applies, so selection never fails.
//
// The table is written in the same text form the environment overrides use:
// "alg:maxbytes,alg:maxbytes,...,alg", where maxbytes is the per-rank message
// size in bytes (Sizes documents what it means for each collective). The
// variable MPIGO_COLL_<NAME> (NAME in upper case: ALLREDUCE, BCAST, ...)
// replaces a collective's list, e.g. MPIGO_COLL_ALLREDUCE=ring forces ring
// allreduce, MPIGO_COLL_ALLREDUCE=recursive_doubling:65536,ring moves the
// threshold. A variable that does not parse is reported by Table and ignored.

// The collectives that have a choice of algorithm.
const (
	CollAllreduce     = "allreduce"
	CollBcast         = "bcast"
	CollAllgather     = "allgather"
	CollAlltoall      = "alltoall"
	CollReduceScatter = "reduce_scatter"
	CollReduce        = "reduce"
)

// The algorithms.
const (
	AlgRecursiveDoubling = "recursive_doubling" // allreduce, allgather (power-of-two ranks for allgather)
	AlgRabenseifner      = "rabenseifner"       // allreduce, reduce: recursive-halving reduce-scatter + recursive-doubling allgather (or binomial gather)
	AlgRing              = "ring"               // allreduce, allgather
	AlgReduceBcast       = "reduce_bcast"       // allreduce: binomial reduce in rank order + broadcast
	AlgBinomial          = "binomial"           // bcast, reduce
	AlgScatterAllgather  = "scatter_allgather"  // bcast: binomial scatter + ring allgather (van de Geijn)
	AlgPipeline          = "pipeline"           // bcast: segments down a chain
	AlgBinaryTree        = "binary_tree"        // bcast: segments down a binary tree
	AlgBruck             = "bruck"              // allgather, alltoall (equal block sizes)
	AlgPairwise          = "pairwise"           // alltoall
	AlgScattered         = "scattered"          // alltoall: every exchange posted at once
	AlgRecursiveHalving  = "recursive_halving"  // reduce_scatter (commutative)
	AlgReduceScatterv    = "reduce_scatterv"    // reduce_scatter: reduce to rank 0 in rank order + scatter
	// AlgHierarchical is node-aware: the ranks of each node combine (or
	// receive) through one leader per node, and only leaders talk across
	// nodes. It applies to communicators that span several nodes with
	// several ranks on some node (Situation.Hier), and is run by the
	// caller (package mpi), which owns the per-node communicators, from
	// this package's algorithms.
	AlgHierarchical = "hierarchical" // allreduce, bcast, reduce
	// AlgInProcess applies where the ranks are goroutines of one process
	// (Situation.InProcess): each rank leaves where its contribution
	// is in memory shared by all, and the last to come combines them in
	// rank order, once, for everyone (for the root, in a reduce); no
	// message is sent. The caller (package mpi) runs it.
	AlgInProcess = "in_process" // allreduce, reduce
)

// DefaultRules is the built-in table, chosen by measurement with goroutine
// ranks and tcp on a 2-core machine (docs/collectives.md has the numbers).
var DefaultRules = map[string]string{
	CollAllreduce:     "hierarchical,in_process,recursive_doubling:32768,rabenseifner,ring",
	CollBcast:         "hierarchical,binomial:524287,pipeline,binomial:4194304,scatter_allgather",
	CollAllgather:     "recursive_doubling,ring",
	CollAlltoall:      "bruck:64,scattered:131072,pairwise",
	CollReduceScatter: "recursive_halving",
	CollReduce:        "hierarchical,in_process,binomial",
}

// composed lists the algorithms that the caller runs from this package's
// pieces (they need communicators this package cannot make).
var composed = map[string][]string{
	CollAllreduce: {AlgHierarchical, AlgInProcess},
	CollBcast:     {AlgHierarchical},
	CollReduce:    {AlgHierarchical, AlgInProcess},
}

// fallback is each collective's algorithm that always applies.
var fallback = map[string]string{
	CollAllreduce:     AlgReduceBcast,
	CollBcast:         AlgBinomial,
	CollAllgather:     AlgRing,
	CollAlltoall:      AlgPairwise,
	CollReduceScatter: AlgReduceScatterv,
	CollReduce:        AlgBinomial,
}

// algorithms lists each collective's algorithms.
var algorithms = map[string][]string{
	CollAllreduce:     {AlgRecursiveDoubling, AlgRabenseifner, AlgRing, AlgReduceBcast},
	CollBcast:         {AlgBinomial, AlgScatterAllgather, AlgPipeline, AlgBinaryTree},
	CollAllgather:     {AlgBruck, AlgRecursiveDoubling, AlgRing},
	CollAlltoall:      {AlgBruck, AlgScattered, AlgPairwise},
	CollReduceScatter: {AlgRecursiveHalving, AlgReduceScatterv},
	CollReduce:        {AlgBinomial, AlgRabenseifner},
}

// Rule is one entry of a collective's list: use Alg when the message is at
// most MaxBytes bytes (MaxBytes < 0: any size).
type Rule struct {
	Alg      string
	MaxBytes int
}

// Situation is what selection depends on.
type Situation struct {
	Ranks       int  // communicator size
	Bytes       int  // per-rank message size (see Sizes)
	Commutative bool // the reduction's operation is commutative
	Fixed       bool // every rank's blocks have the same size (needed by Bruck)
	Elems       int  // elements in the vector (reductions; segments split on element boundaries)
	Hier        bool // the communicator spans several nodes and some node holds several of its ranks
	// SharedMemory: the ranks are processes of one node (at least two
	// of them) that reach each other through node shared memory, where
	// every hop of a message is copied into and out of the rings. The
	// pipelined broadcasts apply only then: between goroutine ranks of
	// one process and over sockets they are no faster (docs/performance.md,
	// "Why the code is as it is").
	SharedMemory bool
	// InProcess: the ranks are goroutines of one process that reach each
	// other in memory (Run's ranks over the inproc transport).
	InProcess bool
}

// Sizes documents, per collective, which size Select compares with MaxBytes.
var Sizes = map[string]string{
	CollAllreduce:     "bytes of the vector",
	CollBcast:         "bytes broadcast",
	CollAllgather:     "bytes each rank contributes",
	CollAlltoall:      "bytes each rank sends to one peer",
	CollReduceScatter: "bytes of the whole input vector",
	CollReduce:        "bytes of the vector (commutative operations on equal-length vectors)",
}

func isPof2(p int) bool { return p > 0 && p&(p-1) == 0 }

// Applicable reports whether alg can run collective coll in situation s.
// For the pipelined broadcasts it also asks whether they pay: processes
// on one node talking through shared memory (between goroutine ranks a
// hop is one copy made at once, and waking the next rank for every
// segment cost more than the pipeline gained), more than two ranks, and a buffer of more than one
// segment (pipeline: at least one segment per hop). BcastAlg runs them
// in any situation when named explicitly.
func Applicable(coll, alg string, s Situation) bool {
	switch alg {
	case AlgRecursiveDoubling:
		if coll == CollAllgather {
			return isPof2(s.Ranks)
		}
		return coll == CollAllreduce && s.Commutative
	case AlgRabenseifner:
		pof2 := 1
		for pof2*2 <= s.Ranks {
			pof2 *= 2
		}
		return s.Commutative && s.Elems >= pof2
	case AlgRing:
		if coll == CollAllreduce {
			return s.Commutative && s.Elems >= s.Ranks
		}
		return true
	case AlgBruck:
		return coll == CollAllgather || s.Fixed
	case AlgRecursiveHalving:
		return s.Commutative
	case AlgPipeline:
		// A chain pays only when it is kept full: with fewer segments
		// than hops, most ranks wait most of the time (a binomial tree
		// takes lg p whole-buffer steps; the chain p-2+S segment steps).
		seg, _ := Segment()
		return coll == CollBcast && s.SharedMemory && s.Ranks >= 3 && s.Bytes >= (s.Ranks-1)*seg
	case AlgBinaryTree:
		seg, _ := Segment()
		return coll == CollBcast && s.SharedMemory && s.Ranks >= 3 && s.Bytes > seg
	case AlgInProcess:
		return (coll == CollAllreduce || coll == CollReduce) && s.InProcess && s.Fixed
	case AlgHierarchical:
		if !s.Hier || !s.Fixed {
			return false
		}
		return coll == CollBcast || s.Commutative
	}
	for _, a := range algorithms[coll] {
		if a == alg {
			return true
		}
	}
	return false
}

// ParseRules parses "alg:maxbytes,...,alg" for collective coll.
func ParseRules(coll, s string) ([]Rule, error) {
	known := append(slices.Clip(algorithms[coll]), composed[coll]...)
	if algorithms[coll] == nil {
		return nil, fmt.Errorf("unknown collective %q", coll)
	}
	var rules []Rule
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		alg, lim, hasLim := strings.Cut(f, ":")
		r := Rule{Alg: alg, MaxBytes: -1}
		ok := false
		for _, k := range known {
			ok = ok || k == alg
		}
		if !ok {
			return nil, fmt.Errorf("%s: unknown algorithm %q (known: %s)", coll, alg, strings.Join(known, ", "))
		}
		if hasLim {
			n, err := strconv.Atoi(lim)
			if err != nil || n < 0 {
				return nil, fmt.Errorf("%s: bad size %q in %q", coll, lim, f)
			}
			r.MaxBytes = n
		}
		rules = append(rules, r)
	}
	if len(rules) == 0 {
		return nil, fmt.Errorf("%s: empty rule list", coll)
	}
	return rules, nil
}

// EnvName returns the environment variable that overrides coll's rules.
func EnvName(coll string) string { return "MPIGO_COLL_" + strings.ToUpper(coll) }

// Entry is one collective's row of the table in force.
type Entry struct {
	Coll   string
	Rules  []Rule
	Source string // "default" or the environment variable that set it
	Err    error  // a variable that did not parse (the default is in force)
}

var (
	tableOnce sync.Once
	table     map[string]Entry
	// The rules of the collectives Select is called for on every call,
	// resolved once: a map lookup by name costs a measurable part of an
	// 8-byte allreduce (docs/performance.md, "Why the code is as it is").
	allreduceRules, bcastRules, reduceRules []Rule
	// segment is the segment size of the pipelined algorithms in force,
	// segmentErr a MPIGO_COLL_SEGMENT that did not parse.
	segment    int
	segmentErr error
)

// env reads the variables of the table (MPIGO_COLL_*); nil until UseEnv.
var env func(string) (string, bool)

// UseEnv makes the table read its variables (MPIGO_COLL_*) with lookup
// when it is first used; before any UseEnv, no variable is set. Package
// mpi installs its environment reader (config.go) at start-up: the
// table is read once, for the whole process.
func UseEnv(lookup func(string) (string, bool)) { env = lookup }

func loadTable() {
	lookup := env
	if lookup == nil {
		lookup = func(string) (string, bool) { return "", false }
	}
	table = buildTable(lookup)
	segment, segmentErr = parseSegment(lookup)
	allreduceRules = table[CollAllreduce].Rules
	bcastRules = table[CollBcast].Rules
	reduceRules = table[CollReduce].Rules
}

// buildTable makes the table in force from the defaults and the variables
// lookup finds.
func buildTable(lookup func(string) (string, bool)) map[string]Entry {
	t := map[string]Entry{}
	for coll, def := range DefaultRules {
		rules, err := ParseRules(coll, def)
		if err != nil {
			panic("coll: bad default rules: " + err.Error())
		}
		e := Entry{Coll: coll, Rules: rules, Source: "default"}
		if v, ok := lookup(EnvName(coll)); ok && v != "" {
			if r, err := ParseRules(coll, v); err != nil {
				e.Err = err
			} else {
				e.Rules, e.Source = r, EnvName(coll)
			}
		}
		t[coll] = e
	}
	return t
}

// SegmentEnv names the variable that sets the segment size, in bytes, of
// the pipelined broadcasts (pipeline and binary_tree); DefaultSegment
// when it is unset.
const SegmentEnv = "MPIGO_COLL_SEGMENT"

// parseSegment reads SegmentEnv through lookup. A value that is not a
// whole number of bytes between 1 KiB and 64 MiB is reported and the
// default stays in force.
func parseSegment(lookup func(string) (string, bool)) (int, error) {
	v, ok := lookup(SegmentEnv)
	if !ok || v == "" {
		return DefaultSegment, nil
	}
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n < 1<<10 || n > 64<<20 {
		return DefaultSegment, fmt.Errorf("%s=%q: want a size in bytes from 1024 to 67108864; using %d", SegmentEnv, v, DefaultSegment)
	}
	return n, nil
}

// Segment returns the segment size of the pipelined algorithms in force
// and the error of a SegmentEnv that did not parse (the default is then
// in force).
func Segment() (int, error) {
	tableOnce.Do(loadTable)
	return segment, segmentErr
}

// Table returns the rules in force for every collective, in a fixed order.
func Table() []Entry {
	tableOnce.Do(loadTable)
	var out []Entry
	for _, coll := range []string{CollAllreduce, CollReduce, CollBcast, CollAllgather, CollAlltoall, CollReduceScatter} {
		out = append(out, table[coll])
	}
	return out
}

// Select returns the algorithm for coll in situation s under the table in
// force (defaults plus environment overrides).
func Select(coll string, s Situation) string {
	tableOnce.Do(loadTable)
	var rules []Rule
	switch coll {
	case CollAllreduce:
		rules = allreduceRules
	case CollBcast:
		rules = bcastRules
	case CollReduce:
		rules = reduceRules
	default:
		rules = table[coll].Rules
	}
	return SelectFrom(rules, coll, s)
}

// SelectFrom is Select over an explicit rule list. It is pure: the same
// arguments give the same answer on every rank, which the algorithms need,
// since all ranks must run the same one.
func SelectFrom(rules []Rule, coll string, s Situation) string {
	for _, r := range rules {
		if (r.MaxBytes < 0 || s.Bytes <= r.MaxBytes) && Applicable(coll, r.Alg, s) {
			return r.Alg
		}
	}
	return fallback[coll]
}

// FormatRules writes rules back in the text form ParseRules reads.
func FormatRules(rules []Rule) string {
	var b strings.Builder
	for i, r := range rules {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(r.Alg)
		if r.MaxBytes >= 0 {
			b.WriteString(":" + strconv.Itoa(r.MaxBytes))
		}
	}
	return b.String()
}
