//go:build cgo

package capi

import (
	"fmt"
	"sync"
	"unsafe"

	"github.com/mpigo/mpi"
)

// The communicator calls beyond dup, split and free: comparison,
// creation from groups, split by type, the info and name calls and
// intercommunicators.

func implComm_compare(comm1, comm2 uintptr, result unsafe.Pointer) int32 {
	const fn = "MPI_Comm_compare"
	c1, rc := getComm(fn, comm1)
	if c1 == nil {
		return rc
	}
	c2, rc := getComm(fn, comm2)
	if c2 == nil {
		return rc
	}
	if result == nil {
		return raiseOn(fn, c1, classErr(MPI_ERR_ARG, "result is NULL"))
	}
	*(*int32)(result) = compareResults[mpi.CompareComms(c1.c, c2.c)]
	return MPI_SUCCESS
}

// commFromGroup is Comm_create and Comm_create_group.
func commFromGroup(fn string, comm, group uintptr, newcomm unsafe.Pointer, do func(c *mpi.Comm, g *mpi.Group) (*mpi.Comm, error)) int32 {
	ce, rc := getComm(fn, comm)
	if ce == nil {
		return rc
	}
	g, rc := groupArg(fn, group)
	if g == nil {
		return rc
	}
	if newcomm == nil {
		return raiseOn(fn, ce, classErr(MPI_ERR_ARG, "newcomm is NULL"))
	}
	c, err := do(ce.c, g)
	if err != nil {
		return raiseOn(fn, ce, err)
	}
	newComm(ce, c, newcomm)
	return MPI_SUCCESS
}

func implComm_create(comm, group uintptr, newcomm unsafe.Pointer) int32 {
	return commFromGroup("MPI_Comm_create", comm, group, newcomm, (*mpi.Comm).Create)
}

func implComm_create_group(comm, group uintptr, tag int32, newcomm unsafe.Pointer) int32 {
	if tag < 0 {
		return raise("MPI_Comm_create_group", comm, classErr(MPI_ERR_TAG, fmt.Sprintf("tag %d is negative", tag)))
	}
	return commFromGroup("MPI_Comm_create_group", comm, group, newcomm, func(c *mpi.Comm, g *mpi.Group) (*mpi.Comm, error) {
		return c.CreateGroup(g, int(tag))
	})
}

// infoOrNull resolves an info argument that may be MPI_INFO_NULL.
func infoOrNull(fn string, h uintptr) (*mpi.Info, int32) {
	if h == MPI_INFO_NULL {
		return nil, 0
	}
	return infoArg(fn, h)
}

// implComm_split_type maps the MPI split types onto Comm.SplitType's:
// MPI-4's hardware splits work there at the one level of hardware mpigo
// knows, the node ("mpi_shared_memory").
func implComm_split_type(comm uintptr, splitType, key int32, info uintptr, newcomm unsafe.Pointer) int32 {
	const fn = "MPI_Comm_split_type"
	ce, rc := getComm(fn, comm)
	if ce == nil {
		return rc
	}
	in, rc := infoOrNull(fn, info)
	if rc != 0 {
		return rc
	}
	if newcomm == nil {
		return raiseOn(fn, ce, classErr(MPI_ERR_ARG, "newcomm is NULL"))
	}
	st, ok := map[int32]int{
		MPI_UNDEFINED:                 mpi.Undefined,
		MPI_COMM_TYPE_SHARED:          mpi.SplitTypeShared,
		MPI_COMM_TYPE_HW_GUIDED:       mpi.SplitTypeHWGuided,
		MPI_COMM_TYPE_HW_UNGUIDED:     mpi.SplitTypeHWUnguided,
		MPI_COMM_TYPE_RESOURCE_GUIDED: mpi.SplitTypeResourceGuided,
	}[splitType]
	if !ok {
		return raiseOn(fn, ce, classErr(MPI_ERR_ARG, fmt.Sprintf("split type %d is not one mpigo knows", splitType)))
	}
	c, err := ce.c.SplitType(st, int(key), in)
	if err != nil {
		return raiseOn(fn, ce, err)
	}
	newComm(ce, c, newcomm)
	return MPI_SUCCESS
}

func implComm_dup_with_info(comm, info uintptr, newcomm unsafe.Pointer) int32 {
	const fn = "MPI_Comm_dup_with_info"
	ce, rc := getComm(fn, comm)
	if ce == nil {
		return rc
	}
	in, rc := infoOrNull(fn, info)
	if rc != 0 {
		return rc
	}
	if newcomm == nil {
		return raiseOn(fn, ce, classErr(MPI_ERR_ARG, "newcomm is NULL"))
	}
	if in == nil {
		in = mpi.NewInfo()
	}
	c, err := ce.c.DupWithInfo(in)
	if err != nil {
		return raiseOn(fn, ce, err)
	}
	newComm(ce, c, newcomm)
	return MPI_SUCCESS
}

func idup(fn string, comm uintptr, info *mpi.Info, newcomm, request unsafe.Pointer) int32 {
	ce, rc := getComm(fn, comm)
	if ce == nil {
		return rc
	}
	if newcomm == nil || request == nil {
		return raiseOn(fn, ce, classErr(MPI_ERR_ARG, "newcomm or request is NULL"))
	}
	c, r, err := ce.c.Idup()
	if err != nil {
		return raiseOn(fn, ce, err)
	}
	if info != nil {
		idupInfos.Store(c, info.Dup())
	}
	newComm(ce, c, newcomm)
	*(*uintptr)(request) = requests.add(reqEntry{r, ce})
	return MPI_SUCCESS
}

// idupInfos holds the hints of MPI_Comm_idup_with_info for the new
// communicator: mpigo's Idup gives it the old one's when it completes,
// so MPI_Comm_get_info answers these until MPI_Comm_set_info replaces
// them.
var idupInfos sync.Map // *mpi.Comm -> *mpi.Info

func implComm_idup(comm uintptr, newcomm, request unsafe.Pointer) int32 {
	return idup("MPI_Comm_idup", comm, nil, newcomm, request)
}

func implComm_idup_with_info(comm, info uintptr, newcomm, request unsafe.Pointer) int32 {
	const fn = "MPI_Comm_idup_with_info"
	in, rc := infoOrNull(fn, info)
	if rc != 0 {
		return rc
	}
	if in == nil {
		in = mpi.NewInfo()
	}
	return idup(fn, comm, in, newcomm, request)
}

// namedComms holds the communicators MPI_Comm_set_name named.
var namedComms sync.Map // *mpi.Comm -> struct{}

func implComm_set_name(comm uintptr, name unsafe.Pointer) int32 {
	const fn = "MPI_Comm_set_name"
	ce, rc := getComm(fn, comm)
	if ce == nil {
		return rc
	}
	if name == nil {
		return raiseOn(fn, ce, classErr(MPI_ERR_ARG, "comm_name is NULL"))
	}
	s := cString(name)
	if len(s) > MPI_MAX_OBJECT_NAME-1 {
		s = s[:MPI_MAX_OBJECT_NAME-1]
	}
	ce.c.SetName(s)
	namedComms.Store(ce.c, struct{}{})
	return MPI_SUCCESS
}

func implComm_get_name(comm uintptr, name, resultlen unsafe.Pointer) int32 {
	const fn = "MPI_Comm_get_name"
	if comm == MPI_COMM_NULL && phase.Load() == phaseRunning && name != nil && resultlen != nil {
		// MPICH and Open MPI answer with the handle's name, and programs
		// print names of communicators that may be null.
		putString(name, resultlen, "MPI_COMM_NULL", MPI_MAX_OBJECT_NAME)
		return MPI_SUCCESS
	}
	ce, rc := getComm(fn, comm)
	if ce == nil {
		return rc
	}
	if name == nil || resultlen == nil {
		return raiseOn(fn, ce, classErr(MPI_ERR_ARG, "comm_name or resultlen is NULL"))
	}
	// MPI names the predefined communicators, and no other until the
	// program does; mpigo names every communicator for its messages.
	s := ""
	if _, ok := namedComms.Load(ce.c); ok {
		s = ce.c.Name()
	} else if comm == MPI_COMM_WORLD {
		s = "MPI_COMM_WORLD"
	} else if comm == MPI_COMM_SELF {
		s = "MPI_COMM_SELF"
	}
	putString(name, resultlen, s, MPI_MAX_OBJECT_NAME)
	return MPI_SUCCESS
}

func implComm_set_info(comm, info uintptr) int32 {
	const fn = "MPI_Comm_set_info"
	ce, rc := getComm(fn, comm)
	if ce == nil {
		return rc
	}
	in, rc := infoArg(fn, info)
	if in == nil {
		return rc
	}
	idupInfos.Delete(ce.c)
	return ce.check(fn, ce.c.SetInfo(in))
}

func implComm_get_info(comm uintptr, info unsafe.Pointer) int32 {
	const fn = "MPI_Comm_get_info"
	ce, rc := getComm(fn, comm)
	if ce == nil {
		return rc
	}
	if info == nil {
		return raiseOn(fn, ce, classErr(MPI_ERR_ARG, "info_used is NULL"))
	}
	in := ce.c.Info()
	if v, ok := idupInfos.Load(ce.c); ok {
		in = v.(*mpi.Info)
	}
	if in == nil {
		in = mpi.NewInfo()
	}
	*(*uintptr)(info) = infos.add(in.Dup())
	return MPI_SUCCESS
}

func implComm_test_inter(comm uintptr, flag unsafe.Pointer) int32 {
	const fn = "MPI_Comm_test_inter"
	ce, rc := getComm(fn, comm)
	if ce == nil {
		return rc
	}
	if flag == nil {
		return raiseOn(fn, ce, classErr(MPI_ERR_ARG, "flag is NULL"))
	}
	setFlag(flag, ce.c.IsInter())
	return MPI_SUCCESS
}

func implComm_remote_size(comm uintptr, size unsafe.Pointer) int32 {
	const fn = "MPI_Comm_remote_size"
	ce, rc := getComm(fn, comm)
	if ce == nil {
		return rc
	}
	if size == nil {
		return raiseOn(fn, ce, classErr(MPI_ERR_ARG, "size is NULL"))
	}
	if !ce.c.IsInter() {
		return raiseOn(fn, ce, classErr(MPI_ERR_COMM, "not an intercommunicator"))
	}
	*(*int32)(size) = int32(ce.c.RemoteSize())
	return MPI_SUCCESS
}

func implIntercomm_create(local uintptr, localLeader int32, peer uintptr, remoteLeader, tag int32, newintercomm unsafe.Pointer) int32 {
	const fn = "MPI_Intercomm_create"
	ce, rc := getComm(fn, local)
	if ce == nil {
		return rc
	}
	if newintercomm == nil {
		return raiseOn(fn, ce, classErr(MPI_ERR_ARG, "newintercomm is NULL"))
	}
	// peer_comm matters at the local leader only.
	var pc *mpi.Comm
	if ce.c.Rank() == int(localLeader) || peer != MPI_COMM_NULL {
		pe, rc := getComm(fn, peer)
		if pe == nil {
			return rc
		}
		pc = pe.c
	}
	if tag < 0 {
		return raiseOn(fn, ce, classErr(MPI_ERR_TAG, fmt.Sprintf("tag %d is negative", tag)))
	}
	c, err := mpi.IntercommCreate(ce.c, int(localLeader), pc, int(remoteLeader), int(tag))
	if err != nil {
		return raiseOn(fn, ce, err)
	}
	newComm(ce, c, newintercomm)
	return MPI_SUCCESS
}

func implIntercomm_merge(intercomm uintptr, high int32, newintracomm unsafe.Pointer) int32 {
	const fn = "MPI_Intercomm_merge"
	ce, rc := getComm(fn, intercomm)
	if ce == nil {
		return rc
	}
	if newintracomm == nil {
		return raiseOn(fn, ce, classErr(MPI_ERR_ARG, "newintracomm is NULL"))
	}
	c, err := ce.c.IntercommMerge(high != 0)
	if err != nil {
		return raiseOn(fn, ce, err)
	}
	newComm(ce, c, newintracomm)
	return MPI_SUCCESS
}
