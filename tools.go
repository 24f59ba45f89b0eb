package mpi

import (
	"errors"
	"fmt"
	"os"
	"reflect"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/mpigo/mpi/internal/coll"
	"github.com/mpigo/mpi/internal/engine"
	"github.com/mpigo/mpi/internal/progress"
)

// This file is the tools information interface of MPI-3.1 chapter 14 in a
// Go shape: control variables (the MPIGO_* tunables), categories, and the
// errors of the interface. Performance variables are in pvar.go, the
// profiling hook in profile.go.
//
// Nothing needs initializing (MPI_T_init_thread and MPI_T_finalize have
// no counterpart): every function may be called at any time, from any
// goroutine, before, during or after a job.

// Error classes of the tools interface (MPI_T_ERR_*).
var (
	ErrToolIndex       = errors.New("invalid tools index")                             // MPI_T_ERR_INVALID_INDEX
	ErrToolName        = errors.New("invalid tools variable name")                     // MPI_T_ERR_INVALID_NAME
	ErrToolHandle      = errors.New("invalid tools handle")                            // MPI_T_ERR_INVALID_HANDLE, MPI_T_ERR_INVALID_SESSION
	ErrCvarSetNotNow   = errors.New("control variable cannot be set now")              // MPI_T_ERR_CVAR_SET_NOT_NOW
	ErrCvarSetNever    = errors.New("control variable cannot be set")                  // MPI_T_ERR_CVAR_SET_NEVER
	ErrPvarNoStartStop = errors.New("performance variable cannot be started")          // MPI_T_ERR_PVAR_NO_STARTSTOP
	ErrPvarNoWrite     = errors.New("performance variable cannot be written or reset") // MPI_T_ERR_PVAR_NO_WRITE
)

// toolErr builds the *Error of a tools call, which has no communicator.
func toolErr(op string, class error, format string, args ...any) error {
	return (*Comm)(nil).errorf(op, class, loc{}, format, args...)
}

// liveJobs counts the jobs running in this process (Run, RunConfig, and
// the job of a process started by a launcher): control variables read at
// a job's start cannot be written while one runs.
var liveJobs atomic.Int32

// Scope tells how far a control variable's setting reaches
// (MPI_T_SCOPE_*).
type Scope int

// Scopes (MPI-3.1 section 14.3.6).
const (
	ScopeConstant Scope = iota // read-only, never changes
	ScopeReadonly              // read-only, may change
	ScopeLocal                 // writable, may differ between processes
	ScopeGroup                 // writable, must agree within a group of processes
	ScopeGroupEq               // writable, must be equal within a group
	ScopeAll                   // writable, must agree across the job
	ScopeAllEq                 // writable, must be equal across the job
)

var scopeNames = [...]string{"constant", "readonly", "local", "group", "group-eq", "all", "all-eq"}

// String returns the scope's name, e.g. "all-eq".
func (s Scope) String() string {
	if s >= 0 && int(s) < len(scopeNames) {
		return scopeNames[s]
	}
	return "Scope(" + strconv.Itoa(int(s)) + ")"
}

// CvarInfo describes a control variable (MPI_T_cvar_get_info).
type CvarInfo struct {
	Index int
	// Name is the environment variable that sets it, e.g.
	// "MPIGO_EAGER_LIMIT".
	Name      string
	Desc      string
	Verbosity Verbosity
	// Type is the Go type of the value Read returns and Write takes: int,
	// string, bool or time.Duration.
	Type reflect.Type
	// Values lists the permitted values of an enumeration (MPI_T_enum),
	// nil for other variables.
	Values []string
	Bind   Bind // always BindNoObject: control variables are per process
	Scope  Scope
	// When says when the value is read, so when a Write takes effect.
	When string
}

// cvarDef is a control variable: its description and how to read it. Its
// value lives in the environment variable Name, where the code that uses
// it reads it, so Write sets that variable.
type cvarDef struct {
	CvarInfo
	def func() any // the value when the variable is unset or invalid
	// parse turns the variable's text into a value; ok false means the
	// reader ignores it (the default applies).
	parse func(s string) (any, bool)
	// notNow, if set, reports why the variable cannot be written now;
	// never, why it cannot be written at all.
	notNow func() string
	never  func() string
}

var (
	intType      = reflect.TypeFor[int]()
	stringType   = reflect.TypeFor[string]()
	boolType     = reflect.TypeFor[bool]()
	durationType = reflect.TypeFor[time.Duration]()
)

func parseNonNeg(s string) (any, bool) {
	v, err := strconv.Atoi(s)
	return v, err == nil && v >= 0
}

func parsePositive(s string) (any, bool) {
	v, err := strconv.Atoi(s)
	return v, err == nil && v > 0
}

func parseDuration(s string) (any, bool) {
	d, err := time.ParseDuration(s)
	return d, err == nil
}

func parsePositiveDuration(s string) (any, bool) {
	d, err := time.ParseDuration(s)
	return d, err == nil && d > 0
}

// whileNoJob refuses writes while a job runs in the process.
func whileNoJob() string {
	if liveJobs.Load() > 0 {
		return "it is read when a job starts, and a job is running in this process"
	}
	return ""
}

const atJobStart = "at the start of each job (Run, RunConfig with DefaultConfig, Main)"

var cvarDefs = buildCvars()

func buildCvars() []cvarDef {
	l := []cvarDef{
		{CvarInfo: CvarInfo{Name: "MPIGO_EAGER_LIMIT", Desc: "largest message, in bytes, sent eagerly; larger ones use the rendezvous protocol",
			Verbosity: TunerBasic, Type: intType, Scope: ScopeAllEq, When: atJobStart},
			def: func() any { return engine.DefaultConfig().EagerLimit }, parse: parseNonNeg, notNow: whileNoJob},
		{CvarInfo: CvarInfo{Name: "MPIGO_SHM_EAGER_LIMIT", Desc: "eager limit towards processes reached through shared memory (0: chosen from the ring size, the cores and whether large messages are copied once)",
			Verbosity: TunerBasic, Type: intType, Scope: ScopeAllEq, When: atJobStart},
			def: func() any { return 0 }, parse: parseNonNeg, notNow: whileNoJob},
		{CvarInfo: CvarInfo{Name: "MPIGO_TCP_SOCKBUF", Desc: "kernel socket buffer size of tcp connections, in bytes (0: the kernel's default, which autotunes)",
			Verbosity: TunerDetail, Type: intType, Scope: ScopeLocal, When: atJobStart},
			def: func() any { return 0 }, parse: parseNonNeg, notNow: whileNoJob},
		{CvarInfo: CvarInfo{Name: "MPIGO_TRANSPORT", Desc: "transport between the ranks of Run (inproc, tcp, shm), or between processes of one node in a launched job (shm, tcp); empty: the default",
			Verbosity: TunerBasic, Type: stringType, Values: []string{"", "inproc", "shm", "tcp"}, Scope: ScopeAllEq, When: atJobStart},
			def: func() any { return "" }, parse: func(s string) (any, bool) { return s, true }, notNow: whileNoJob},
		{CvarInfo: CvarInfo{Name: "MPIGO_SPIN", Desc: "how long a waiting goroutine rank of Run watches for what it waits for before it parks, when each rank has a processor of its own (a Go duration; 0: only collectives that meet in memory watch, for 50us; below 0: never)",
			Verbosity: TunerBasic, Type: durationType, Scope: ScopeLocal, When: atJobStart},
			def: func() any { return time.Duration(0) }, parse: func(s string) (any, bool) {
				if s == "off" {
					return time.Duration(-1), true
				}
				return parseDuration(s)
			}, notNow: whileNoJob},
		{CvarInfo: CvarInfo{Name: "MPIGO_RANKS_PER_NODE", Desc: "treat each run of this many goroutine ranks of Run as one node, to test node-aware collectives (0: one node)",
			Verbosity: DevBasic, Type: intType, Scope: ScopeAllEq, When: atJobStart},
			def: func() any { return 0 }, parse: parseNonNeg, notNow: whileNoJob},
		{CvarInfo: CvarInfo{Name: "MPIGO_NP", Desc: "number of goroutine ranks Main runs when the program is started without a launcher",
			Verbosity: UserBasic, Type: intType, Scope: ScopeLocal, When: "when Main starts"},
			def: func() any { return 1 }, parse: parsePositive, notNow: whileNoJob},
		{CvarInfo: CvarInfo{Name: "MPIGO_SHM_SPIN", Desc: "how long a rank waiting on shared memory polls before it parks (a Go duration; 0: never poll)",
			Verbosity: TunerDetail, Type: durationType, Scope: ScopeLocal, When: "when a launched process starts"},
			def: func() any { return progress.DefaultPollTime }, parse: parseDuration,
			never: func() string { return "it is read only when a launched process starts" }},
		{CvarInfo: CvarInfo{Name: "MPIGO_SHM_CMA", Desc: "copy large messages between processes of a node in one step by cross-memory attach instead of streaming them through the rings (unset: only where copies between cores are not string moves)",
			Verbosity: TunerDetail, Type: boolType, Scope: ScopeAllEq, When: "when a launched process starts"},
			def: func() any { return shmCMA("") }, parse: func(s string) (any, bool) { return shmCMA(s), true },
			never: func() string { return "it is read only when a launched process starts" }},
		{CvarInfo: CvarInfo{Name: "MPIGO_PMI_TIMEOUT", Desc: "how long to wait for a PMI launcher's reply or fence (a Go duration; unset: 60s per reply, 10m per fence)",
			Verbosity: UserDetail, Type: durationType, Scope: ScopeLocal, When: "when a launched process starts"},
			def: func() any { return time.Duration(0) }, parse: parsePositiveDuration,
			never: func() string { return "it is read only when a launched process starts" }},
	}
	// One variable per collective with a choice of algorithm.
	for _, name := range []string{coll.CollAllreduce, coll.CollReduce, coll.CollBcast, coll.CollAllgather, coll.CollAlltoall, coll.CollReduceScatter} {
		l = append(l, cvarDef{
			CvarInfo: CvarInfo{Name: coll.EnvName(name),
				Desc:      "algorithms of " + name + ", in order of preference: alg:maxbytes,...,alg (docs/collectives.md)",
				Verbosity: TunerDetail, Type: stringType, Scope: ScopeAllEq, When: "at the process's first collective"},
			def:   func() any { return coll.DefaultRules[name] },
			parse: func(s string) (any, bool) { _, err := coll.ParseRules(name, s); return s, err == nil },
			never: func() string { return "the table of algorithms is read once, at the first collective" },
		})
	}
	for i := range l {
		l[i].Index = i
	}
	return l
}

// Cvars lists the control variables (MPI_T_cvar_get_num is its length,
// MPI_T_cvar_get_info its elements). The list and the indices are the
// same for the life of the process.
func Cvars() []CvarInfo {
	l := make([]CvarInfo, len(cvarDefs))
	for i := range cvarDefs {
		l[i] = cvarDefs[i].CvarInfo
	}
	return l
}

// CvarIndex returns the index of the control variable called name
// (MPI_T_cvar_get_index), or an error of class ErrToolName.
func CvarIndex(name string) (int, error) {
	for i := range cvarDefs {
		if cvarDefs[i].Name == name {
			return i, nil
		}
	}
	return -1, toolErr("CvarIndex", ErrToolName, "no control variable %q", name)
}

// Cvar is a handle on a control variable (MPI_T_cvar_handle). Handles
// need no freeing (MPI_T_cvar_handle_free has no counterpart).
type Cvar struct{ d *cvarDef }

// LookupCvar returns a handle on the control variable called name
// (MPI_T_cvar_get_index and MPI_T_cvar_handle_alloc).
func LookupCvar(name string) (*Cvar, error) {
	i, err := CvarIndex(name)
	if err != nil {
		return nil, err
	}
	return &Cvar{&cvarDefs[i]}, nil
}

// CvarAt returns a handle on the control variable with index i
// (MPI_T_cvar_handle_alloc).
func CvarAt(i int) (*Cvar, error) {
	if i < 0 || i >= len(cvarDefs) {
		return nil, toolErr("CvarAt", ErrToolIndex, "no control variable with index %d (there are %d)", i, len(cvarDefs))
	}
	return &Cvar{&cvarDefs[i]}, nil
}

// Info describes the variable.
func (v *Cvar) Info() CvarInfo { return v.d.CvarInfo }

// Read returns the variable's value as the code that uses it sees it
// (MPI_T_cvar_read): the setting of its environment variable if it has a
// valid one, else the default. Its dynamic type is Info().Type.
func (v *Cvar) Read() (any, error) {
	if v == nil || v.d == nil {
		return nil, toolErr("Cvar.Read", ErrToolHandle, "nil control variable handle")
	}
	if s, ok := lookupEnv(v.d.Name); ok && s != "" {
		if x, ok := v.d.parse(s); ok {
			return x, nil
		}
	}
	return v.d.def(), nil
}

// Write sets the variable (MPI_T_cvar_write), for the whole process: it
// takes effect when the value is next read (Info().When). val must have
// the variable's type (Info().Type), or be a string in the form the
// environment variable takes. Variables read only when the process
// starts give ErrCvarSetNever; variables read when a job starts give
// ErrCvarSetNotNow while a job runs in the process. An invalid value
// gives ErrArg and changes nothing.
func (v *Cvar) Write(val any) error {
	if v == nil || v.d == nil {
		return toolErr("Cvar.Write", ErrToolHandle, "nil control variable handle")
	}
	d := v.d
	if d.never != nil {
		if why := d.never(); why != "" {
			return toolErr("Cvar.Write", ErrCvarSetNever, "%s: %s", d.Name, why)
		}
	}
	if d.notNow != nil {
		if why := d.notNow(); why != "" {
			return toolErr("Cvar.Write", ErrCvarSetNotNow, "%s: %s", d.Name, why)
		}
	}
	var s string
	switch x := val.(type) {
	case string:
		s = x
	case int:
		s = strconv.Itoa(x)
	case bool:
		s = "0"
		if x {
			s = "1"
		}
	case time.Duration:
		s = x.String()
	default:
		return toolErr("Cvar.Write", ErrArg, "%s takes a %s, not a %T", d.Name, d.Type, val)
	}
	if val != nil && reflect.TypeOf(val) != d.Type && reflect.TypeOf(val) != stringType {
		return toolErr("Cvar.Write", ErrArg, "%s takes a %s, not a %T", d.Name, d.Type, val)
	}
	if _, ok := d.parse(s); !ok {
		return toolErr("Cvar.Write", ErrArg, "%s: invalid value %q", d.Name, s)
	}
	if d.Values != nil {
		ok := false
		for _, e := range d.Values {
			ok = ok || e == s
		}
		if !ok {
			return toolErr("Cvar.Write", ErrArg, "%s: %q is not one of %s", d.Name, s, strings.Join(d.Values, ", "))
		}
	}
	if err := os.Setenv(d.Name, s); err != nil {
		return toolErr("Cvar.Write", ErrOther, "%s: %v", d.Name, err)
	}
	return nil
}

// String formats the handle as "NAME=VALUE".
func (v *Cvar) String() string {
	x, err := v.Read()
	if err != nil {
		return "<invalid>"
	}
	return fmt.Sprintf("%s=%v", v.d.Name, x)
}

// CategoryInfo describes a category: a named group of variables and of
// other categories (MPI_T_category_get_info; its Cvars, Pvars and
// Categories fields are MPI_T_category_get_cvars, _get_pvars and
// _get_categories).
type CategoryInfo struct {
	Index      int
	Name       string
	Desc       string
	Cvars      []int // indices for CvarAt and Cvars
	Pvars      []int // indices for PvarSession.Handle and Pvars
	Categories []int // indices of sub-categories
}

// categoryDefs are the categories; their variables are listed by name.
var categoryDefs = []struct {
	name, desc  string
	cvars       []string
	cvarPrefix  string
	pvars, subs []string
}{
	{name: "mpigo", desc: "every variable of mpigo", subs: []string{"protocol", "transport", "launch", "collectives", "matching", "traffic", "waiting"}},
	{name: "protocol", desc: "when messages travel eagerly or by rendezvous", cvars: []string{"MPIGO_EAGER_LIMIT", "MPIGO_SHM_EAGER_LIMIT"}},
	{name: "transport", desc: "how ranks reach each other", cvars: []string{"MPIGO_TRANSPORT", "MPIGO_SPIN", "MPIGO_TCP_SOCKBUF", "MPIGO_SHM_SPIN", "MPIGO_SHM_CMA", "MPIGO_RANKS_PER_NODE"}},
	{name: "launch", desc: "how a program starts", cvars: []string{"MPIGO_NP", "MPIGO_PMI_TIMEOUT"}},
	{name: "collectives", desc: "the choice of collective algorithms", cvarPrefix: "MPIGO_COLL_"},
	{name: "matching", desc: "the queues of the matching engine", pvars: []string{"posted_queue_length", "unexpected_queue_length"}},
	{name: "traffic", desc: "messages and bytes between ranks", pvars: []string{"bytes_sent", "messages_sent", "bytes_received", "messages_received"}},
	{name: "waiting", desc: "time spent blocked", pvars: []string{"wait_time"}},
}

var categories = func() []CategoryInfo {
	idx := map[string]int{}
	for i, d := range categoryDefs {
		idx[d.name] = i
	}
	l := make([]CategoryInfo, len(categoryDefs))
	for i, d := range categoryDefs {
		c := CategoryInfo{Index: i, Name: d.name, Desc: d.desc}
		for _, n := range d.cvars {
			for j := range cvarDefs {
				if cvarDefs[j].Name == n {
					c.Cvars = append(c.Cvars, j)
				}
			}
		}
		if d.cvarPrefix != "" {
			for j := range cvarDefs {
				if strings.HasPrefix(cvarDefs[j].Name, d.cvarPrefix) {
					c.Cvars = append(c.Cvars, j)
				}
			}
		}
		for _, n := range d.pvars {
			for j := range pvarDefs {
				if pvarDefs[j].Name == n {
					c.Pvars = append(c.Pvars, j)
				}
			}
		}
		for _, n := range d.subs {
			c.Categories = append(c.Categories, idx[n])
		}
		l[i] = c
	}
	return l
}()

// Categories lists the categories (MPI_T_category_get_num is its length,
// MPI_T_category_get_info its elements). The first, "mpigo", holds every
// other one; each variable is in exactly one of the others.
func Categories() []CategoryInfo {
	l := make([]CategoryInfo, len(categories))
	for i, c := range categories {
		c.Cvars = append([]int(nil), c.Cvars...)
		c.Pvars = append([]int(nil), c.Pvars...)
		c.Categories = append([]int(nil), c.Categories...)
		l[i] = c
	}
	return l
}

// CategoryIndex returns the index of the category called name
// (MPI_T_category_get_index), or an error of class ErrToolName.
func CategoryIndex(name string) (int, error) {
	for i, c := range categories {
		if c.Name == name {
			return i, nil
		}
	}
	return -1, toolErr("CategoryIndex", ErrToolName, "no category %q", name)
}

// CategoriesChanged returns a stamp that changes whenever categories or
// variables are added (MPI_T_category_changed). mpigo's are fixed for
// the life of the process, so it is always 0.
func CategoriesChanged() int { return 0 }
