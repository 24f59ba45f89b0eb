//go:build cgo

package capi

import (
	"fmt"
	"unsafe"

	"github.com/mpigo/mpi"
)

// The MPI-4.0 persistent collectives (the _init forms, issue 43) and
// partitioned communication (issue 42). Each _init form resolves its
// arguments with the parser its blocking and I forms share (coll.go,
// reduce.go), so that all three check them alike, and hands them to the
// Go layer's Init method. The request is persistent: MPI_Start starts it,
// completion leaves it inactive, MPI_Request_free ends it.

// persist makes the collective a persistent request and stores its
// handle at request.
func (k collOp) persist(fn string, info uintptr, request unsafe.Pointer) int32 {
	if k.ce == nil {
		return k.rc
	}
	if request == nil {
		return raiseOn(fn, k.ce, classErr(MPI_ERR_ARG, "request is NULL"))
	}
	in, rc := infoOrNull(fn, info)
	if rc != 0 {
		return rc
	}
	r, err := k.init(in)
	if err != nil {
		return k.ce.check(fn, err)
	}
	*(*uintptr)(request) = addRequest(r, k.ce, true)
	return MPI_SUCCESS
}

func implBarrier_init(comm uintptr, info uintptr, request unsafe.Pointer) int32 {
	const fn = "MPI_Barrier_init"
	ce, rc := getComm(fn, comm)
	if ce == nil {
		return rc
	}
	return collOp{ce: ce, init: ce.c.BarrierInit}.persist(fn, info, request)
}

func implBcast_init(buffer unsafe.Pointer, count int32, datatype uintptr, root int32, comm uintptr, info uintptr, request unsafe.Pointer) int32 {
	return bcast("MPI_Bcast_init", buffer, int(count), datatype, root, comm).persist("MPI_Bcast_init", info, request)
}

func implBcast_init_c(buffer unsafe.Pointer, count int64, datatype uintptr, root int32, comm uintptr, info uintptr, request unsafe.Pointer) int32 {
	return bcast("MPI_Bcast_init_c", buffer, int(count), datatype, root, comm).persist("MPI_Bcast_init_c", info, request)
}

func implGather_init(sendbuf unsafe.Pointer, sendcount int32, sendtype uintptr, recvbuf unsafe.Pointer, recvcount int32, recvtype uintptr, root int32, comm uintptr, info uintptr, request unsafe.Pointer) int32 {
	const fn = "MPI_Gather_init"
	return gather(fn, sendbuf, int(sendcount), sendtype, recvbuf, int(recvcount), recvtype, root, comm).persist(fn, info, request)
}

func implGather_init_c(sendbuf unsafe.Pointer, sendcount int64, sendtype uintptr, recvbuf unsafe.Pointer, recvcount int64, recvtype uintptr, root int32, comm uintptr, info uintptr, request unsafe.Pointer) int32 {
	const fn = "MPI_Gather_init_c"
	return gather(fn, sendbuf, int(sendcount), sendtype, recvbuf, int(recvcount), recvtype, root, comm).persist(fn, info, request)
}

func implGatherv_init(sendbuf unsafe.Pointer, sendcount int32, sendtype uintptr, recvbuf, recvcounts, displs unsafe.Pointer, recvtype uintptr, root int32, comm uintptr, info uintptr, request unsafe.Pointer) int32 {
	const fn = "MPI_Gatherv_init"
	return gatherv(fn, sendbuf, int(sendcount), sendtype, recvbuf, recvcounts, displs, recvtype, root, comm, false).persist(fn, info, request)
}

func implGatherv_init_c(sendbuf unsafe.Pointer, sendcount int64, sendtype uintptr, recvbuf, recvcounts, displs unsafe.Pointer, recvtype uintptr, root int32, comm uintptr, info uintptr, request unsafe.Pointer) int32 {
	const fn = "MPI_Gatherv_init_c"
	return gatherv(fn, sendbuf, int(sendcount), sendtype, recvbuf, recvcounts, displs, recvtype, root, comm, true).persist(fn, info, request)
}

func implScatter_init(sendbuf unsafe.Pointer, sendcount int32, sendtype uintptr, recvbuf unsafe.Pointer, recvcount int32, recvtype uintptr, root int32, comm uintptr, info uintptr, request unsafe.Pointer) int32 {
	const fn = "MPI_Scatter_init"
	return scatter(fn, sendbuf, int(sendcount), sendtype, recvbuf, int(recvcount), recvtype, root, comm).persist(fn, info, request)
}

func implScatter_init_c(sendbuf unsafe.Pointer, sendcount int64, sendtype uintptr, recvbuf unsafe.Pointer, recvcount int64, recvtype uintptr, root int32, comm uintptr, info uintptr, request unsafe.Pointer) int32 {
	const fn = "MPI_Scatter_init_c"
	return scatter(fn, sendbuf, int(sendcount), sendtype, recvbuf, int(recvcount), recvtype, root, comm).persist(fn, info, request)
}

func implScatterv_init(sendbuf, sendcounts, displs unsafe.Pointer, sendtype uintptr, recvbuf unsafe.Pointer, recvcount int32, recvtype uintptr, root int32, comm uintptr, info uintptr, request unsafe.Pointer) int32 {
	const fn = "MPI_Scatterv_init"
	return scatterv(fn, sendbuf, sendcounts, displs, sendtype, recvbuf, int(recvcount), recvtype, root, comm, false).persist(fn, info, request)
}

func implScatterv_init_c(sendbuf, sendcounts, displs unsafe.Pointer, sendtype uintptr, recvbuf unsafe.Pointer, recvcount int64, recvtype uintptr, root int32, comm uintptr, info uintptr, request unsafe.Pointer) int32 {
	const fn = "MPI_Scatterv_init_c"
	return scatterv(fn, sendbuf, sendcounts, displs, sendtype, recvbuf, int(recvcount), recvtype, root, comm, true).persist(fn, info, request)
}

func implAllgather_init(sendbuf unsafe.Pointer, sendcount int32, sendtype uintptr, recvbuf unsafe.Pointer, recvcount int32, recvtype uintptr, comm uintptr, info uintptr, request unsafe.Pointer) int32 {
	const fn = "MPI_Allgather_init"
	return allgather(fn, sendbuf, int(sendcount), sendtype, recvbuf, int(recvcount), recvtype, comm, false).persist(fn, info, request)
}

func implAllgather_init_c(sendbuf unsafe.Pointer, sendcount int64, sendtype uintptr, recvbuf unsafe.Pointer, recvcount int64, recvtype uintptr, comm uintptr, info uintptr, request unsafe.Pointer) int32 {
	const fn = "MPI_Allgather_init_c"
	return allgather(fn, sendbuf, int(sendcount), sendtype, recvbuf, int(recvcount), recvtype, comm, false).persist(fn, info, request)
}

func implNeighbor_allgather_init(sendbuf unsafe.Pointer, sendcount int32, sendtype uintptr, recvbuf unsafe.Pointer, recvcount int32, recvtype uintptr, comm uintptr, info uintptr, request unsafe.Pointer) int32 {
	const fn = "MPI_Neighbor_allgather_init"
	return allgather(fn, sendbuf, int(sendcount), sendtype, recvbuf, int(recvcount), recvtype, comm, true).persist(fn, info, request)
}

func implNeighbor_allgather_init_c(sendbuf unsafe.Pointer, sendcount int64, sendtype uintptr, recvbuf unsafe.Pointer, recvcount int64, recvtype uintptr, comm uintptr, info uintptr, request unsafe.Pointer) int32 {
	const fn = "MPI_Neighbor_allgather_init_c"
	return allgather(fn, sendbuf, int(sendcount), sendtype, recvbuf, int(recvcount), recvtype, comm, true).persist(fn, info, request)
}

func implAllgatherv_init(sendbuf unsafe.Pointer, sendcount int32, sendtype uintptr, recvbuf, recvcounts, displs unsafe.Pointer, recvtype uintptr, comm uintptr, info uintptr, request unsafe.Pointer) int32 {
	const fn = "MPI_Allgatherv_init"
	return allgatherv(fn, sendbuf, int(sendcount), sendtype, recvbuf, recvcounts, displs, recvtype, comm, false, false).persist(fn, info, request)
}

func implAllgatherv_init_c(sendbuf unsafe.Pointer, sendcount int64, sendtype uintptr, recvbuf, recvcounts, displs unsafe.Pointer, recvtype uintptr, comm uintptr, info uintptr, request unsafe.Pointer) int32 {
	const fn = "MPI_Allgatherv_init_c"
	return allgatherv(fn, sendbuf, int(sendcount), sendtype, recvbuf, recvcounts, displs, recvtype, comm, true, false).persist(fn, info, request)
}

func implNeighbor_allgatherv_init(sendbuf unsafe.Pointer, sendcount int32, sendtype uintptr, recvbuf, recvcounts, displs unsafe.Pointer, recvtype uintptr, comm uintptr, info uintptr, request unsafe.Pointer) int32 {
	const fn = "MPI_Neighbor_allgatherv_init"
	return allgatherv(fn, sendbuf, int(sendcount), sendtype, recvbuf, recvcounts, displs, recvtype, comm, false, true).persist(fn, info, request)
}

func implNeighbor_allgatherv_init_c(sendbuf unsafe.Pointer, sendcount int64, sendtype uintptr, recvbuf, recvcounts, displs unsafe.Pointer, recvtype uintptr, comm uintptr, info uintptr, request unsafe.Pointer) int32 {
	const fn = "MPI_Neighbor_allgatherv_init_c"
	return allgatherv(fn, sendbuf, int(sendcount), sendtype, recvbuf, recvcounts, displs, recvtype, comm, true, true).persist(fn, info, request)
}

func implAlltoall_init(sendbuf unsafe.Pointer, sendcount int32, sendtype uintptr, recvbuf unsafe.Pointer, recvcount int32, recvtype uintptr, comm uintptr, info uintptr, request unsafe.Pointer) int32 {
	const fn = "MPI_Alltoall_init"
	return alltoall(fn, sendbuf, int(sendcount), sendtype, recvbuf, int(recvcount), recvtype, comm, false).persist(fn, info, request)
}

func implAlltoall_init_c(sendbuf unsafe.Pointer, sendcount int64, sendtype uintptr, recvbuf unsafe.Pointer, recvcount int64, recvtype uintptr, comm uintptr, info uintptr, request unsafe.Pointer) int32 {
	const fn = "MPI_Alltoall_init_c"
	return alltoall(fn, sendbuf, int(sendcount), sendtype, recvbuf, int(recvcount), recvtype, comm, false).persist(fn, info, request)
}

func implNeighbor_alltoall_init(sendbuf unsafe.Pointer, sendcount int32, sendtype uintptr, recvbuf unsafe.Pointer, recvcount int32, recvtype uintptr, comm uintptr, info uintptr, request unsafe.Pointer) int32 {
	const fn = "MPI_Neighbor_alltoall_init"
	return alltoall(fn, sendbuf, int(sendcount), sendtype, recvbuf, int(recvcount), recvtype, comm, true).persist(fn, info, request)
}

func implNeighbor_alltoall_init_c(sendbuf unsafe.Pointer, sendcount int64, sendtype uintptr, recvbuf unsafe.Pointer, recvcount int64, recvtype uintptr, comm uintptr, info uintptr, request unsafe.Pointer) int32 {
	const fn = "MPI_Neighbor_alltoall_init_c"
	return alltoall(fn, sendbuf, int(sendcount), sendtype, recvbuf, int(recvcount), recvtype, comm, true).persist(fn, info, request)
}

func implAlltoallv_init(sendbuf, sendcounts, sdispls unsafe.Pointer, sendtype uintptr, recvbuf, recvcounts, rdispls unsafe.Pointer, recvtype uintptr, comm uintptr, info uintptr, request unsafe.Pointer) int32 {
	const fn = "MPI_Alltoallv_init"
	return alltoallv(fn, sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm, false, false).persist(fn, info, request)
}

func implAlltoallv_init_c(sendbuf, sendcounts, sdispls unsafe.Pointer, sendtype uintptr, recvbuf, recvcounts, rdispls unsafe.Pointer, recvtype uintptr, comm uintptr, info uintptr, request unsafe.Pointer) int32 {
	const fn = "MPI_Alltoallv_init_c"
	return alltoallv(fn, sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm, true, false).persist(fn, info, request)
}

func implNeighbor_alltoallv_init(sendbuf, sendcounts, sdispls unsafe.Pointer, sendtype uintptr, recvbuf, recvcounts, rdispls unsafe.Pointer, recvtype uintptr, comm uintptr, info uintptr, request unsafe.Pointer) int32 {
	const fn = "MPI_Neighbor_alltoallv_init"
	return alltoallv(fn, sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm, false, true).persist(fn, info, request)
}

func implNeighbor_alltoallv_init_c(sendbuf, sendcounts, sdispls unsafe.Pointer, sendtype uintptr, recvbuf, recvcounts, rdispls unsafe.Pointer, recvtype uintptr, comm uintptr, info uintptr, request unsafe.Pointer) int32 {
	const fn = "MPI_Neighbor_alltoallv_init_c"
	return alltoallv(fn, sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm, true, true).persist(fn, info, request)
}

func implAlltoallw_init(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes unsafe.Pointer, comm uintptr, info uintptr, request unsafe.Pointer) int32 {
	const fn = "MPI_Alltoallw_init"
	return alltoallw(fn, sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm, false, false).persist(fn, info, request)
}

func implAlltoallw_init_c(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes unsafe.Pointer, comm uintptr, info uintptr, request unsafe.Pointer) int32 {
	const fn = "MPI_Alltoallw_init_c"
	return alltoallw(fn, sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm, true, false).persist(fn, info, request)
}

func implNeighbor_alltoallw_init(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes unsafe.Pointer, comm uintptr, info uintptr, request unsafe.Pointer) int32 {
	const fn = "MPI_Neighbor_alltoallw_init"
	return alltoallw(fn, sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm, false, true).persist(fn, info, request)
}

func implNeighbor_alltoallw_init_c(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes unsafe.Pointer, comm uintptr, info uintptr, request unsafe.Pointer) int32 {
	const fn = "MPI_Neighbor_alltoallw_init_c"
	return alltoallw(fn, sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm, true, true).persist(fn, info, request)
}

func implReduce_init(sendbuf, recvbuf unsafe.Pointer, count int32, datatype, op uintptr, root int32, comm uintptr, info uintptr, request unsafe.Pointer) int32 {
	const fn = "MPI_Reduce_init"
	return reduce(fn, sendbuf, recvbuf, int(count), datatype, op, root, comm).persist(fn, info, request)
}

func implReduce_init_c(sendbuf, recvbuf unsafe.Pointer, count int64, datatype, op uintptr, root int32, comm uintptr, info uintptr, request unsafe.Pointer) int32 {
	const fn = "MPI_Reduce_init_c"
	return reduce(fn, sendbuf, recvbuf, int(count), datatype, op, root, comm).persist(fn, info, request)
}

func implAllreduce_init(sendbuf, recvbuf unsafe.Pointer, count int32, datatype, op, comm uintptr, info uintptr, request unsafe.Pointer) int32 {
	const fn = "MPI_Allreduce_init"
	return allreduce(fn, kAllreduce, sendbuf, recvbuf, int(count), datatype, op, comm).persist(fn, info, request)
}

func implAllreduce_init_c(sendbuf, recvbuf unsafe.Pointer, count int64, datatype, op, comm uintptr, info uintptr, request unsafe.Pointer) int32 {
	const fn = "MPI_Allreduce_init_c"
	return allreduce(fn, kAllreduce, sendbuf, recvbuf, int(count), datatype, op, comm).persist(fn, info, request)
}

func implScan_init(sendbuf, recvbuf unsafe.Pointer, count int32, datatype, op, comm uintptr, info uintptr, request unsafe.Pointer) int32 {
	const fn = "MPI_Scan_init"
	return allreduce(fn, kScan, sendbuf, recvbuf, int(count), datatype, op, comm).persist(fn, info, request)
}

func implScan_init_c(sendbuf, recvbuf unsafe.Pointer, count int64, datatype, op, comm uintptr, info uintptr, request unsafe.Pointer) int32 {
	const fn = "MPI_Scan_init_c"
	return allreduce(fn, kScan, sendbuf, recvbuf, int(count), datatype, op, comm).persist(fn, info, request)
}

func implExscan_init(sendbuf, recvbuf unsafe.Pointer, count int32, datatype, op, comm uintptr, info uintptr, request unsafe.Pointer) int32 {
	const fn = "MPI_Exscan_init"
	return allreduce(fn, kExscan, sendbuf, recvbuf, int(count), datatype, op, comm).persist(fn, info, request)
}

func implExscan_init_c(sendbuf, recvbuf unsafe.Pointer, count int64, datatype, op, comm uintptr, info uintptr, request unsafe.Pointer) int32 {
	const fn = "MPI_Exscan_init_c"
	return allreduce(fn, kExscan, sendbuf, recvbuf, int(count), datatype, op, comm).persist(fn, info, request)
}

func implReduce_scatter_init(sendbuf, recvbuf, recvcounts unsafe.Pointer, datatype, op, comm uintptr, info uintptr, request unsafe.Pointer) int32 {
	const fn = "MPI_Reduce_scatter_init"
	return reduceScatter(fn, sendbuf, recvbuf, recvcounts, datatype, op, comm, false).persist(fn, info, request)
}

func implReduce_scatter_init_c(sendbuf, recvbuf, recvcounts unsafe.Pointer, datatype, op, comm uintptr, info uintptr, request unsafe.Pointer) int32 {
	const fn = "MPI_Reduce_scatter_init_c"
	return reduceScatter(fn, sendbuf, recvbuf, recvcounts, datatype, op, comm, true).persist(fn, info, request)
}

func implReduce_scatter_block_init(sendbuf, recvbuf unsafe.Pointer, recvcount int32, datatype, op, comm uintptr, info uintptr, request unsafe.Pointer) int32 {
	const fn = "MPI_Reduce_scatter_block_init"
	return reduceScatterBlock(fn, sendbuf, recvbuf, int(recvcount), datatype, op, comm).persist(fn, info, request)
}

func implReduce_scatter_block_init_c(sendbuf, recvbuf unsafe.Pointer, recvcount int64, datatype, op, comm uintptr, info uintptr, request unsafe.Pointer) int32 {
	const fn = "MPI_Reduce_scatter_block_init_c"
	return reduceScatterBlock(fn, sendbuf, recvbuf, int(recvcount), datatype, op, comm).persist(fn, info, request)
}

// pinit makes a partitioned send or receive: partitions blocks of count
// elements of datatype in buf.
func pinit(fn string, send bool, buf unsafe.Pointer, partitions int32, count int64, datatype uintptr, peer, tag int32, comm uintptr, info uintptr, request unsafe.Pointer) int32 {
	ce, t, rc := args(fn, comm, datatype)
	if ce == nil {
		return rc
	}
	if request == nil {
		return raiseOn(fn, ce, classErr(MPI_ERR_ARG, "request is NULL"))
	}
	if partitions < 1 {
		return raiseOn(fn, ce, classErr(MPI_ERR_ARG, fmt.Sprintf("%d partitions: there must be at least one", partitions)))
	}
	n, rc := commCountArg(fn, ce, count)
	if rc != 0 {
		return rc
	}
	total := int64(n) * int64(partitions)
	if total/int64(partitions) != int64(n) || int64(int(total)) != total {
		return raiseOn(fn, ce, classErr(MPI_ERR_COUNT, "partitions × count overflows"))
	}
	// Any datatype, MPI_BOTTOM and datatypes that reach below buf
	// included (bufType): mpigo packs and unpacks what is not contiguous.
	b, t, rc := bufType(fn, ce, buf, int(total), t)
	if rc != 0 {
		return rc
	}
	in, rc := infoOrNull(fn, info)
	if rc != 0 {
		return rc
	}
	var r *mpi.Request
	var err error
	if send {
		r, err = ce.c.PsendInit(b, int(partitions), n, t, rankArg(peer), tagArg(tag), in)
	} else {
		r, err = ce.c.PrecvInit(b, int(partitions), n, t, rankArg(peer), tagArg(tag), in)
	}
	if err != nil {
		return raiseOn(fn, ce, err)
	}
	*(*uintptr)(request) = addRequest(r, ce, true)
	return MPI_SUCCESS
}

func implPsend_init(buf unsafe.Pointer, partitions int32, count int64, datatype uintptr, dest, tag int32, comm uintptr, info uintptr, request unsafe.Pointer) int32 {
	return pinit("MPI_Psend_init", true, buf, partitions, count, datatype, dest, tag, comm, info, request)
}

func implPrecv_init(buf unsafe.Pointer, partitions int32, count int64, datatype uintptr, source, tag int32, comm uintptr, info uintptr, request unsafe.Pointer) int32 {
	return pinit("MPI_Precv_init", false, buf, partitions, count, datatype, source, tag, comm, info, request)
}

// reqVal resolves a request passed by value (the partitioned calls take
// the handle, not its address).
func reqVal(fn string, h uintptr) (reqEntry, int32) {
	if rc := running(fn); rc != 0 {
		return reqEntry{}, rc
	}
	if h == MPI_REQUEST_NULL {
		return reqEntry{}, raise(fn, noComm, classErr(MPI_ERR_REQUEST, "MPI_REQUEST_NULL is not a request"))
	}
	e, ok := requests.get(h)
	if !ok {
		return reqEntry{}, badRequest(fn, h)
	}
	return e, 0
}

func implPready(partition int32, request uintptr) int32 {
	const fn = "MPI_Pready"
	e, rc := reqVal(fn, request)
	if rc != 0 {
		return rc
	}
	return e.ce.check(fn, e.r.Pready(int(partition)))
}

func implPready_range(lo, hi int32, request uintptr) int32 {
	const fn = "MPI_Pready_range"
	e, rc := reqVal(fn, request)
	if rc != 0 {
		return rc
	}
	return e.ce.check(fn, e.r.PreadyRange(int(lo), int(hi)))
}

func implPready_list(length int32, partitions unsafe.Pointer, request uintptr) int32 {
	const fn = "MPI_Pready_list"
	e, rc := reqVal(fn, request)
	if rc != 0 {
		return rc
	}
	if length < 0 {
		return raiseOn(fn, e.ce, classErr(MPI_ERR_ARG, fmt.Sprintf("length %d is negative", length)))
	}
	ps, rc := ints(fn, e.ce, partitions, int(length), false, "array_of_partitions")
	if rc != 0 {
		return rc
	}
	return e.ce.check(fn, e.r.PreadyList(ps))
}

func implParrived(request uintptr, partition int32, flag unsafe.Pointer) int32 {
	const fn = "MPI_Parrived"
	e, rc := reqVal(fn, request)
	if rc != 0 {
		return rc
	}
	if flag == nil {
		return raiseOn(fn, e.ce, classErr(MPI_ERR_ARG, "flag is NULL"))
	}
	ok, err := e.r.Parrived(int(partition))
	if err != nil {
		return e.ce.check(fn, err)
	}
	*(*int32)(flag) = 0
	if ok {
		*(*int32)(flag) = 1
	}
	return MPI_SUCCESS
}
