//go:build cgo

package capi

import (
	"fmt"
	"unsafe"

	"github.com/mpigo/mpi"
)

// Handle kinds of this file and the attribute and error handler files.
// They are numbered from 16 so that the kinds of handles.go can grow.
const (
	kindGroup = 16 + iota
	kindErrhandler
	kindCommKeyval
	kindTypeKeyval
)

var groups = &table[*mpi.Group]{kind: kindGroup}

// groupArg returns the group behind h, or nil and the error code.
func groupArg(fn string, h uintptr) (*mpi.Group, int32) {
	if rc := running(fn); rc != 0 {
		return nil, rc
	}
	switch h {
	case MPI_GROUP_EMPTY:
		return mpi.GroupEmpty, 0
	case MPI_GROUP_NULL:
		return nil, raise(fn, noComm, classErr(MPI_ERR_GROUP, "MPI_GROUP_NULL is not a group"))
	}
	if g, ok := groups.get(h); ok {
		return g, 0
	}
	return nil, raise(fn, noComm, classErr(MPI_ERR_GROUP, fmt.Sprintf("%#x is not a group handle (freed, garbage, or of another kind)", h)))
}

// newGroup stores g at out; an empty group is MPI_GROUP_EMPTY.
func newGroup(g *mpi.Group, out unsafe.Pointer) {
	if g.Size() == 0 {
		*(*uintptr)(out) = MPI_GROUP_EMPTY
		return
	}
	*(*uintptr)(out) = groups.add(g)
}

// abiRank maps mpigo's Undefined and ProcNull to the ABI's.
func abiRank(r int) int32 {
	switch r {
	case mpi.Undefined:
		return MPI_UNDEFINED
	case mpi.ProcNull:
		return MPI_PROC_NULL
	}
	return int32(r)
}

func implGroup_size(group uintptr, size unsafe.Pointer) int32 {
	const fn = "MPI_Group_size"
	g, rc := groupArg(fn, group)
	if g == nil {
		return rc
	}
	if size == nil {
		return nullArray(fn, "size")
	}
	*(*int32)(size) = int32(g.Size())
	return MPI_SUCCESS
}

func implGroup_rank(group uintptr, rank unsafe.Pointer) int32 {
	const fn = "MPI_Group_rank"
	g, rc := groupArg(fn, group)
	if g == nil {
		return rc
	}
	if rank == nil {
		return nullArray(fn, "rank")
	}
	*(*int32)(rank) = abiRank(g.Rank())
	return MPI_SUCCESS
}

func implGroup_free(group unsafe.Pointer) int32 {
	const fn = "MPI_Group_free"
	if group == nil {
		return nullArray(fn, "group")
	}
	h := *(*uintptr)(group)
	g, rc := groupArg(fn, h)
	if g == nil {
		return rc
	}
	if h != MPI_GROUP_EMPTY {
		groups.remove(h)
	}
	*(*uintptr)(group) = MPI_GROUP_NULL
	return MPI_SUCCESS
}

func implGroup_translate_ranks(group1 uintptr, n int32, ranks1 unsafe.Pointer, group2 uintptr, ranks2 unsafe.Pointer) int32 {
	const fn = "MPI_Group_translate_ranks"
	g1, rc := groupArg(fn, group1)
	if g1 == nil {
		return rc
	}
	g2, rc := groupArg(fn, group2)
	if g2 == nil {
		return rc
	}
	if n < 0 {
		return raise(fn, noComm, classErr(MPI_ERR_ARG, fmt.Sprintf("n %d is negative", n)))
	}
	in, ok := cInts(ranks1, int(n))
	if !ok || (n > 0 && ranks2 == nil) {
		return nullArray(fn, "ranks1 or ranks2")
	}
	for i, r := range in {
		if r == MPI_PROC_NULL {
			in[i] = mpi.ProcNull
		}
	}
	out, err := g1.TranslateRanks(in, g2)
	if err != nil {
		return raise(fn, noComm, err)
	}
	if n > 0 {
		o := unsafe.Slice((*int32)(ranks2), n)
		for i, r := range out {
			o[i] = abiRank(r)
		}
	}
	return MPI_SUCCESS
}

var compareResults = [...]int32{mpi.Ident: MPI_IDENT, mpi.Congruent: MPI_CONGRUENT, mpi.Similar: MPI_SIMILAR, mpi.Unequal: MPI_UNEQUAL}

func implGroup_compare(group1, group2 uintptr, result unsafe.Pointer) int32 {
	const fn = "MPI_Group_compare"
	g1, rc := groupArg(fn, group1)
	if g1 == nil {
		return rc
	}
	g2, rc := groupArg(fn, group2)
	if g2 == nil {
		return rc
	}
	if result == nil {
		return nullArray(fn, "result")
	}
	*(*int32)(result) = compareResults[mpi.CompareGroups(g1, g2)]
	return MPI_SUCCESS
}

func groupOp(fn string, group1, group2 uintptr, out unsafe.Pointer, op func(a, b *mpi.Group) (*mpi.Group, error)) int32 {
	g1, rc := groupArg(fn, group1)
	if g1 == nil {
		return rc
	}
	g2, rc := groupArg(fn, group2)
	if g2 == nil {
		return rc
	}
	if out == nil {
		return nullArray(fn, "newgroup")
	}
	g, err := op(g1, g2)
	if err != nil {
		return raise(fn, noComm, err)
	}
	newGroup(g, out)
	return MPI_SUCCESS
}

func implGroup_union(group1, group2 uintptr, newgroup unsafe.Pointer) int32 {
	return groupOp("MPI_Group_union", group1, group2, newgroup, (*mpi.Group).Union)
}

func implGroup_intersection(group1, group2 uintptr, newgroup unsafe.Pointer) int32 {
	return groupOp("MPI_Group_intersection", group1, group2, newgroup, (*mpi.Group).Intersection)
}

func implGroup_difference(group1, group2 uintptr, newgroup unsafe.Pointer) int32 {
	return groupOp("MPI_Group_difference", group1, group2, newgroup, (*mpi.Group).Difference)
}

func groupSel(fn string, group uintptr, n int32, ranks unsafe.Pointer, newgroup unsafe.Pointer, op func(g *mpi.Group, r []int) (*mpi.Group, error)) int32 {
	g, rc := groupArg(fn, group)
	if g == nil {
		return rc
	}
	if newgroup == nil {
		return nullArray(fn, "newgroup")
	}
	if n < 0 {
		return raise(fn, noComm, classErr(MPI_ERR_ARG, fmt.Sprintf("n %d is negative", n)))
	}
	rs, ok := cInts(ranks, int(n))
	if !ok {
		return nullArray(fn, "ranks")
	}
	ng, err := op(g, rs)
	if err != nil {
		return raise(fn, noComm, err)
	}
	newGroup(ng, newgroup)
	return MPI_SUCCESS
}

func implGroup_incl(group uintptr, n int32, ranks, newgroup unsafe.Pointer) int32 {
	return groupSel("MPI_Group_incl", group, n, ranks, newgroup, (*mpi.Group).Incl)
}

func implGroup_excl(group uintptr, n int32, ranks, newgroup unsafe.Pointer) int32 {
	return groupSel("MPI_Group_excl", group, n, ranks, newgroup, (*mpi.Group).Excl)
}

func rangesOf(p unsafe.Pointer, n int) []mpi.Range {
	flat := unsafe.Slice((*int32)(p), 3*n)
	rs := make([]mpi.Range, n)
	for i := range rs {
		rs[i] = mpi.Range{int(flat[3*i]), int(flat[3*i+1]), int(flat[3*i+2])}
	}
	return rs
}

func groupRange(fn string, group uintptr, n int32, ranges, newgroup unsafe.Pointer, op func(g *mpi.Group, r []mpi.Range) (*mpi.Group, error)) int32 {
	g, rc := groupArg(fn, group)
	if g == nil {
		return rc
	}
	if newgroup == nil || (n > 0 && ranges == nil) {
		return nullArray(fn, "ranges or newgroup")
	}
	if n < 0 {
		return raise(fn, noComm, classErr(MPI_ERR_ARG, fmt.Sprintf("n %d is negative", n)))
	}
	ng, err := op(g, rangesOf(ranges, int(n)))
	if err != nil {
		return raise(fn, noComm, err)
	}
	newGroup(ng, newgroup)
	return MPI_SUCCESS
}

func implGroup_range_incl(group uintptr, n int32, ranges, newgroup unsafe.Pointer) int32 {
	return groupRange("MPI_Group_range_incl", group, n, ranges, newgroup, (*mpi.Group).RangeIncl)
}

func implGroup_range_excl(group uintptr, n int32, ranges, newgroup unsafe.Pointer) int32 {
	return groupRange("MPI_Group_range_excl", group, n, ranges, newgroup, (*mpi.Group).RangeExcl)
}

func implComm_group(comm uintptr, group unsafe.Pointer) int32 {
	const fn = "MPI_Comm_group"
	ce, rc := getComm(fn, comm)
	if ce == nil {
		return rc
	}
	if group == nil {
		return raiseOn(fn, ce, classErr(MPI_ERR_ARG, "group is NULL"))
	}
	newGroup(ce.c.Group(), group)
	return MPI_SUCCESS
}

func implComm_remote_group(comm uintptr, group unsafe.Pointer) int32 {
	const fn = "MPI_Comm_remote_group"
	ce, rc := getComm(fn, comm)
	if ce == nil {
		return rc
	}
	if group == nil {
		return raiseOn(fn, ce, classErr(MPI_ERR_ARG, "group is NULL"))
	}
	g, err := ce.c.RemoteGroup()
	if err != nil {
		return raiseOn(fn, ce, err)
	}
	newGroup(g, group)
	return MPI_SUCCESS
}
