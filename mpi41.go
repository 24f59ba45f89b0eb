package mpi

// The MPI-4.1 calls of chapters 3, 9 and 11 that are small enough to sit
// together: the string form of an info value, the info of the program's
// start, the status of many requests without completing them, and the
// hardware the rank runs on.

import (
	"os"
	"runtime"
	"strconv"
	"strings"
)

// GetString returns the value of key, whether it is set, and an error for
// a nil Info or a key of the wrong length (MPI_Info_get_string: the C
// buffer's length handling has no Go counterpart, the whole value comes
// back).
func (in *Info) GetString(key string) (_ string, _ bool, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Info.GetString", nil, Undefined, Undefined), &err)
	}
	if in == nil {
		return "", false, infoErr("InfoGetString", "nil Info (InfoNull) has no values")
	}
	if len(key) == 0 || len(key) > MaxInfoKey {
		return "", false, infoErr("InfoGetString", "key of %d bytes (1 to %d allowed)", len(key), MaxInfoKey)
	}
	v, ok := in.Get(key)
	return v, ok, nil
}

// InfoCreateEnv returns the info of the program's start
// (MPI_Info_create_env, what MPI_INFO_ENV holds): "command" and "argv"
// (from args, os.Args when nil), "host", "wdir", "arch" and
// "thread_level" (always MPI_THREAD_MULTIPLE). "maxprocs" is the size of
// c's world, or with a nil c the job's size as its launcher gave it (so
// that the answer is the same before a rank starts as after; there is
// none without a launcher). It may be called at any time, before any rank
// runs.
func InfoCreateEnv(c *Comm, args []string) (_ *Info, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("InfoCreateEnv", c, Undefined, Undefined), &err)
	}
	if args == nil {
		args = os.Args
	}
	in := NewInfo()
	set := func(k, v string) {
		if v != "" {
			in.Set(k, v)
		}
	}
	if len(args) > 0 {
		set("command", args[0])
		set("argv", strings.Join(args[1:], " "))
	}
	if c != nil && c.p != nil {
		set("maxprocs", strconv.Itoa(c.p.Size))
	} else if n := launchSize(); n > 0 {
		set("maxprocs", strconv.Itoa(n))
	}
	if h, err := os.Hostname(); err == nil {
		set("host", h)
	}
	if wd, err := os.Getwd(); err == nil {
		set("wdir", wd)
	}
	set("arch", runtime.GOOS+"/"+runtime.GOARCH)
	set("thread_level", "MPI_THREAD_MULTIPLE")
	return in, nil
}

// GetHwResourceInfo returns what the rank knows of the hardware it runs
// on (MPI_Get_hw_resource_info): "mpi_hw_resource_type" ("mpi_shared_memory",
// the level Comm.SplitType(SplitTypeShared) splits at), the number of
// processors ("mpigo_num_cpus") and the architecture ("mpigo_arch").
func GetHwResourceInfo() (_ *Info, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("GetHwResourceInfo", nil, Undefined, Undefined), &err)
	}
	in := NewInfo()
	in.Set("mpi_hw_resource_type", "mpi_shared_memory")
	in.Set("mpigo_num_cpus", strconv.Itoa(runtime.NumCPU()))
	in.Set("mpigo_arch", runtime.GOOS+"/"+runtime.GOARCH)
	return in, nil
}

// GetStatusAll reports whether every request of the list has completed,
// with their statuses when so, and leaves them all to be waited for
// (MPI_Request_get_status_all). Nil and inactive requests count as
// completed, with the empty status.
func (l RequestList) GetStatusAll() (_ bool, _ []Status, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("RequestList.GetStatusAll", requestsComm(l), Undefined, Undefined), &err)
	}
	sts := make([]Status, len(l))
	all := true
	for i, r := range l {
		if r == nil {
			sts[i] = emptyStatus
			continue
		}
		done, st, err := r.GetStatus()
		if err != nil && !done {
			return false, nil, err
		}
		all = all && done
		sts[i] = st
	}
	if !all {
		return false, nil, nil
	}
	return true, sts, nil
}

// GetStatusAny reports the index and status of an active request of the
// list that has completed, leaving it to be waited for
// (MPI_Request_get_status_any). With no active request it reports
// (Undefined, true, the empty status); with none completed, false.
func (l RequestList) GetStatusAny() (_ int, _ bool, _ Status, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("RequestList.GetStatusAny", requestsComm(l), Undefined, Undefined), &err)
	}
	active := false
	for i, r := range l {
		if !r.active() {
			continue
		}
		active = true
		done, st, err := r.GetStatus()
		if done || err != nil {
			return i, done, st, err
		}
	}
	if !active {
		return Undefined, true, emptyStatus, nil
	}
	return Undefined, false, Status{}, nil
}

// GetStatusSome reports the indices and statuses of the active requests
// of the list that have completed, leaving them to be waited for
// (MPI_Request_get_status_some). With no active request the indices are
// nil and active is false (MPI's outcount MPI_UNDEFINED).
func (l RequestList) GetStatusSome() (_ []int, _ []Status, active bool, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("RequestList.GetStatusSome", requestsComm(l), Undefined, Undefined), &err)
	}
	var idx []int
	var sts []Status
	for i, r := range l {
		if !r.active() {
			continue
		}
		active = true
		done, st, err := r.GetStatus()
		if err != nil && !done {
			return nil, nil, true, err
		}
		if done {
			idx = append(idx, i)
			sts = append(sts, st)
		}
	}
	return idx, sts, active, nil
}

// TypeGetValueIndex returns the predefined pair datatype of MinLoc and
// MaxLoc whose value has type value and whose location has type index
// (MPI_Type_get_value_index), or nil (MPI_DATATYPE_NULL) when there is
// none. With a Go int location (Int) the pairs are the ValueLoc types
// (Float32Loc, Float64Loc, Int32Loc, Int64Loc, IntLoc); with a C int
// location (Int32) they are the C layouts (CFloatInt, CDoubleInt,
// CLongInt, C2Int, CShortInt), for memory shared with C. A nil or freed
// datatype is ErrType.
func TypeGetValueIndex(value, index *Datatype) (_ *Datatype, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("TypeGetValueIndex", nil, Undefined, Undefined), &err)
	}
	if err := value.usable("TypeGetValueIndex"); err != nil {
		return nil, err
	}
	if err := index.usable("TypeGetValueIndex"); err != nil {
		return nil, err
	}
	var pairs map[*Datatype]*Datatype
	switch index {
	case Int:
		pairs = map[*Datatype]*Datatype{Float32: Float32Loc, Float64: Float64Loc, Int32: Int32Loc, Int64: Int64Loc, Int: IntLoc}
	case Int32:
		pairs = map[*Datatype]*Datatype{Float32: CFloatInt, Float64: CDoubleInt, Int64: CLongInt, CLong: CLongInt, Int32: C2Int, Int16: CShortInt}
	}
	return pairs[value], nil
}
