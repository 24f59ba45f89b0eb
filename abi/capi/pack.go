//go:build cgo

package capi

import (
	"fmt"
	"unsafe"

	"github.com/mpigo/mpi"
)

// MPI_BOTTOM and datatypes whose data starts before the buffer.
//
// mpigo's own Bottom reads memory of Go values that mpi.GetAddress saw;
// C memory is none of those. But C memory needs no such care: an address
// is memory. So the ABI turns a buffer at p (NULL for MPI_BOTTOM) whose
// datatype t reaches below p into a buffer that starts at the first byte
// t reaches, p+tlb, and a datatype rebased onto it: t placed at
// displacement -tlb and resized back to t's extent, so that count
// elements of it are exactly count elements of t at p. Counts, statuses
// and MPI_Get_count see the same numbers as with t.

// rebased is t moved up by shift bytes, with t's extent.
func rebased(t *mpi.Datatype, shift int) (*mpi.Datatype, error) {
	s, err := mpi.NewStruct([]int{1}, []int{shift}, []*mpi.Datatype{t})
	if err != nil {
		return nil, err
	}
	_, ext := t.Extent()
	r, err := mpi.NewResized(s, 0, ext)
	if err != nil {
		return nil, err
	}
	if err := r.Commit(); err != nil {
		return nil, err
	}
	r.SetName(t.Name())
	return r, nil
}

// bufType is bufArg for the calls that can take MPI_BOTTOM (or a type
// with a negative lower bound): it returns the buffer and the datatype to
// give mpigo for count elements of t at p.
func bufType(fn string, ce *commEntry, p unsafe.Pointer, count int, t *mpi.Datatype) ([]byte, *mpi.Datatype, int32) {
	if uintptr(p) == 1 || count <= 0 || t.Size() == 0 {
		b, rc := bufArg(fn, ce, p, count, t)
		return b, t, rc
	}
	tlb, textent := t.TrueExtent()
	if p != nil && tlb >= 0 {
		b, rc := bufArg(fn, ce, p, count, t)
		return b, t, rc
	}
	if p == nil && tlb <= 0 {
		return nil, nil, raiseOn(fn, ce, classErr(MPI_ERR_BUFFER, fmt.Sprintf("buffer is MPI_BOTTOM but datatype %s starts at address %d, not an absolute address", t.Name(), tlb)))
	}
	r, err := rebased(t, -tlb)
	if err != nil {
		return nil, nil, raiseOn(fn, ce, err)
	}
	_, ext := t.Extent()
	n := (count-1)*ext + textent
	return unsafe.Slice((*byte)(unsafe.Add(p, tlb)), n), r, 0
}

func pack(fn string, inbuf unsafe.Pointer, incount int64, datatype uintptr, outbuf unsafe.Pointer, outsize int64, position unsafe.Pointer, wide bool, comm uintptr) int32 {
	ce, t, rc := args(fn, comm, datatype)
	if ce == nil {
		return rc
	}
	if position == nil {
		return raiseOn(fn, ce, classErr(MPI_ERR_ARG, "position is NULL"))
	}
	if incount < 0 || outsize < 0 {
		return raiseOn(fn, ce, classErr(MPI_ERR_COUNT, fmt.Sprintf("incount %d or outsize %d is negative", incount, outsize)))
	}
	in, tt, rc := bufType(fn, ce, inbuf, int(incount), t)
	if rc != 0 {
		return rc
	}
	out, rc := rawBuf(fn, ce, outbuf, outsize)
	if rc != 0 {
		return rc
	}
	pos := readPos(position, wide)
	np, err := mpi.Pack(in, int(incount), tt, out, pos)
	if err != nil {
		return raiseOn(fn, ce, err)
	}
	writePos(position, wide, np)
	return MPI_SUCCESS
}

func rawBuf(fn string, ce *commEntry, p unsafe.Pointer, n int64) ([]byte, int32) {
	if n == 0 {
		return []byte{}, 0
	}
	if p == nil {
		return nil, raiseOn(fn, ce, classErr(MPI_ERR_BUFFER, "buffer is NULL"))
	}
	return unsafe.Slice((*byte)(p), n), 0
}

func readPos(p unsafe.Pointer, wide bool) int {
	if wide {
		return int(*(*int64)(p))
	}
	return int(*(*int32)(p))
}

func writePos(p unsafe.Pointer, wide bool, v int) {
	if wide {
		*(*int64)(p) = int64(v)
	} else {
		*(*int32)(p) = int32(v)
	}
}

func implPack(inbuf unsafe.Pointer, incount int32, datatype uintptr, outbuf unsafe.Pointer, outsize int32, position unsafe.Pointer, comm uintptr) int32 {
	return pack("MPI_Pack", inbuf, int64(incount), datatype, outbuf, int64(outsize), position, false, comm)
}

func implPack_c(inbuf unsafe.Pointer, incount int64, datatype uintptr, outbuf unsafe.Pointer, outsize int64, position unsafe.Pointer, comm uintptr) int32 {
	return pack("MPI_Pack_c", inbuf, incount, datatype, outbuf, outsize, position, true, comm)
}

func unpack(fn string, inbuf unsafe.Pointer, insize int64, position, outbuf unsafe.Pointer, outcount int64, datatype uintptr, wide bool, comm uintptr) int32 {
	ce, t, rc := args(fn, comm, datatype)
	if ce == nil {
		return rc
	}
	if position == nil {
		return raiseOn(fn, ce, classErr(MPI_ERR_ARG, "position is NULL"))
	}
	if insize < 0 || outcount < 0 {
		return raiseOn(fn, ce, classErr(MPI_ERR_COUNT, fmt.Sprintf("insize %d or outcount %d is negative", insize, outcount)))
	}
	in, rc := rawBuf(fn, ce, inbuf, insize)
	if rc != 0 {
		return rc
	}
	out, tt, rc := bufType(fn, ce, outbuf, int(outcount), t)
	if rc != 0 {
		return rc
	}
	np, err := mpi.Unpack(in, readPos(position, wide), out, int(outcount), tt)
	if err != nil {
		return raiseOn(fn, ce, err)
	}
	writePos(position, wide, np)
	return MPI_SUCCESS
}

func implUnpack(inbuf unsafe.Pointer, insize int32, position, outbuf unsafe.Pointer, outcount int32, datatype uintptr, comm uintptr) int32 {
	return unpack("MPI_Unpack", inbuf, int64(insize), position, outbuf, int64(outcount), datatype, false, comm)
}

func implUnpack_c(inbuf unsafe.Pointer, insize int64, position, outbuf unsafe.Pointer, outcount int64, datatype uintptr, comm uintptr) int32 {
	return unpack("MPI_Unpack_c", inbuf, insize, position, outbuf, outcount, datatype, true, comm)
}

func packSize(fn string, incount int64, datatype, comm uintptr, size unsafe.Pointer, wide bool) int32 {
	ce, t, rc := args(fn, comm, datatype)
	if ce == nil {
		return rc
	}
	if size == nil {
		return raiseOn(fn, ce, classErr(MPI_ERR_ARG, "size is NULL"))
	}
	if incount < 0 {
		return raiseOn(fn, ce, classErr(MPI_ERR_COUNT, fmt.Sprintf("incount %d is negative", incount)))
	}
	n, err := mpi.PackSize(int(incount), t)
	if err != nil {
		return raiseOn(fn, ce, err)
	}
	if !wide && n > 1<<31-1 {
		return raiseOn(fn, ce, classErr(MPI_ERR_VALUE_TOO_LARGE, fmt.Sprintf("the packed size %d does not fit in an int: use MPI_Pack_size_c", n)))
	}
	writePos(size, wide, n)
	return MPI_SUCCESS
}

func implPack_size(incount int32, datatype, comm uintptr, size unsafe.Pointer) int32 {
	return packSize("MPI_Pack_size", int64(incount), datatype, comm, size, false)
}

func implPack_size_c(incount int64, datatype, comm uintptr, size unsafe.Pointer) int32 {
	return packSize("MPI_Pack_size_c", incount, datatype, comm, size, true)
}

// datarepArg accepts "external32", the only representation of the
// external calls.
func datarepArg(fn string, p unsafe.Pointer) int32 {
	if p == nil {
		return nullArray(fn, "datarep")
	}
	if s := cString(p); s != "external32" {
		return raise(fn, noComm, classErr(MPI_ERR_UNSUPPORTED_DATAREP, fmt.Sprintf("data representation %q: only \"external32\" is defined", s)))
	}
	return 0
}

func packExternal(fn string, datarep, inbuf unsafe.Pointer, incount int64, datatype uintptr, outbuf unsafe.Pointer, outsize int64, position unsafe.Pointer) int32 {
	t, rc := queryType(fn, datatype, position)
	if t == nil {
		return rc
	}
	if rc := datarepArg(fn, datarep); rc != 0 {
		return rc
	}
	if incount < 0 || outsize < 0 {
		return raise(fn, noComm, classErr(MPI_ERR_COUNT, "incount or outsize is negative"))
	}
	in, t, rc := bufType(fn, &self, inbuf, int(incount), t)
	if rc != 0 {
		return rc
	}
	out, rc := rawBuf(fn, &self, outbuf, outsize)
	if rc != 0 {
		return rc
	}
	np, err := mpi.PackExternal(in, int(incount), t, out, readPos(position, true))
	if err != nil {
		return raise(fn, noComm, err)
	}
	writePos(position, true, np)
	return MPI_SUCCESS
}

func implPack_external(datarep, inbuf unsafe.Pointer, incount int32, datatype uintptr, outbuf unsafe.Pointer, outsize int, position unsafe.Pointer) int32 {
	return packExternal("MPI_Pack_external", datarep, inbuf, int64(incount), datatype, outbuf, int64(outsize), position)
}

func implPack_external_c(datarep, inbuf unsafe.Pointer, incount int64, datatype uintptr, outbuf unsafe.Pointer, outsize int64, position unsafe.Pointer) int32 {
	return packExternal("MPI_Pack_external_c", datarep, inbuf, incount, datatype, outbuf, outsize, position)
}

func unpackExternal(fn string, datarep, inbuf unsafe.Pointer, insize int64, position, outbuf unsafe.Pointer, outcount int64, datatype uintptr) int32 {
	t, rc := queryType(fn, datatype, position)
	if t == nil {
		return rc
	}
	if rc := datarepArg(fn, datarep); rc != 0 {
		return rc
	}
	if insize < 0 || outcount < 0 {
		return raise(fn, noComm, classErr(MPI_ERR_COUNT, "insize or outcount is negative"))
	}
	in, rc := rawBuf(fn, &self, inbuf, insize)
	if rc != 0 {
		return rc
	}
	out, t, rc := bufType(fn, &self, outbuf, int(outcount), t)
	if rc != 0 {
		return rc
	}
	np, err := mpi.UnpackExternal(in, readPos(position, true), out, int(outcount), t)
	if err != nil {
		return raise(fn, noComm, err)
	}
	writePos(position, true, np)
	return MPI_SUCCESS
}

func implUnpack_external(datarep, inbuf unsafe.Pointer, insize int, position, outbuf unsafe.Pointer, outcount int32, datatype uintptr) int32 {
	return unpackExternal("MPI_Unpack_external", datarep, inbuf, int64(insize), position, outbuf, int64(outcount), datatype)
}

func implUnpack_external_c(datarep, inbuf unsafe.Pointer, insize int64, position, outbuf unsafe.Pointer, outcount int64, datatype uintptr) int32 {
	return unpackExternal("MPI_Unpack_external_c", datarep, inbuf, insize, position, outbuf, outcount, datatype)
}

func packExternalSize(fn string, datarep unsafe.Pointer, incount int64, datatype uintptr, size unsafe.Pointer) int32 {
	t, rc := queryType(fn, datatype, size)
	if t == nil {
		return rc
	}
	if rc := datarepArg(fn, datarep); rc != 0 {
		return rc
	}
	if incount < 0 {
		return raise(fn, noComm, classErr(MPI_ERR_COUNT, "incount is negative"))
	}
	n, err := mpi.PackExternalSize(int(incount), t)
	if err != nil {
		return raise(fn, noComm, err)
	}
	*(*int64)(size) = int64(n)
	return MPI_SUCCESS
}

func implPack_external_size(datarep unsafe.Pointer, incount int32, datatype uintptr, size unsafe.Pointer) int32 {
	return packExternalSize("MPI_Pack_external_size", datarep, int64(incount), datatype, size)
}

func implPack_external_size_c(datarep unsafe.Pointer, incount int64, datatype uintptr, size unsafe.Pointer) int32 {
	return packExternalSize("MPI_Pack_external_size_c", datarep, incount, datatype, size)
}
