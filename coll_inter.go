package mpi

import (
	"encoding/binary"
	"fmt"
	"strconv"

	"github.com/mpigo/mpi/internal/coll"
)

// Intercommunicator collectives (MPI-3.1 section 5.2.2). Rooted calls
// follow the standard's convention: the root passes Root, the other
// members of the root's group pass ProcNull, and every member of the other
// group passes the root's rank in its group. Data flows between the
// groups: Gather collects the other group's values at the root,
// Allgather gives each group the other group's values, Allreduce gives
// each group the reduction of the other group's values.
//
// Each call takes one tag base from the intercommunicator's sequence (both
// groups call collectives on it in the same order, so they agree). The
// steps between the groups are point-to-point messages on the
// intercommunicator's collective context, usually between the root or a
// group's leader (local rank 0) and the other group's leader; the steps
// inside a group reuse the intracommunicator algorithms on the group's
// private communicator with the same tag base.

// Root is what the root of a rooted collective on an intercommunicator
// passes as root (MPI_ROOT).
const Root = -3

// Roles in a rooted intercommunicator collective.
const (
	roleRoot  = iota // the root
	roleIdle         // another member of the root's group
	roleOther        // a member of the other group; root names the root
)

// interRole validates root on the intercommunicator c.
func (c *Comm) interRole(op string, root int) (int, error) {
	if err := c.check(op); err != nil {
		return 0, err
	}
	switch {
	case root == Root:
		return roleRoot, nil
	case root == ProcNull:
		return roleIdle, nil
	case root >= 0 && root < len(c.group):
		return roleOther, nil
	}
	return 0, c.fail(op, ErrRoot, loc{}, "root %d: on an intercommunicator pass Root at the root, ProcNull at the rest of its group, or the root's rank (remote size %d)", root, len(c.group))
}

// packParts and unpackParts carry a list of byte strings in one message.
func packParts(parts [][]byte) []byte {
	n := binary.MaxVarintLen64 * (len(parts) + 1)
	for _, p := range parts {
		n += len(p)
	}
	b := make([]byte, 0, n)
	b = binary.AppendUvarint(b, uint64(len(parts)))
	for _, p := range parts {
		b = binary.AppendUvarint(b, uint64(len(p)))
		b = append(b, p...)
	}
	return b
}

func unpackParts(b []byte, want int) ([][]byte, error) {
	n, k := binary.Uvarint(b)
	if k <= 0 || int(n) != want {
		return nil, fmt.Errorf("intercommunicator collective: got %d blocks, want %d", n, want)
	}
	b = b[k:]
	parts := make([][]byte, n)
	for i := range parts {
		l, k := binary.Uvarint(b)
		if k <= 0 || uint64(len(b)-k) < l {
			return nil, fmt.Errorf("intercommunicator collective: bad block record")
		}
		parts[i] = b[k : k+int(l)]
		b = b[k+int(l):]
	}
	return parts, nil
}

// interBarrier: each group meets, the leaders exchange a token, and each
// leader releases its group.
func (c *Comm) interBarrier() error {
	base := c.collTag()
	lcc := c.inter.lc.coll()
	if err := coll.Barrier(lcc, base); err != nil {
		return c.collErr("Barrier", err)
	}
	var tok []byte
	if c.rank == 0 {
		in, err := exchange(collComm{c.shadow}, []byte{1}, 0, base)
		if err != nil {
			return c.collErr("Barrier", err)
		}
		tok = in
	}
	_, err := coll.BcastVarAlg(lcc, "", tok, 0, base+4)
	return c.collErr("Barrier", err)
}

// endCall ends a collective call: through cc when the call checks
// signatures (coll_call.go), else by classifying err.
func (c *Comm) endCall(cc *collCall, op string, err error) error {
	if cc == nil {
		return c.collErr(op, err)
	}
	return cc.done(op, err)
}

// The intercommunicator collectives below take the call cc whose
// signature their messages carry and check (nil: none), and end it.

// interBcast: the root sends to the other group's leader, which
// broadcasts in its group. It returns the data on the other group.
func (c *Comm) interBcast(cc *collCall, op string, b []byte, root int, conv hetConv) ([]byte, error) {
	role, err := c.interRole(op, root)
	if err != nil {
		c.endCall(cc, op, nil)
		return nil, err
	}
	base := c.collTag()
	switch role {
	case roleRoot:
		return b, c.endCall(cc, op, c.via(cc).Send(b, 0, base))
	case roleIdle:
		return nil, c.endCall(cc, op, nil)
	}
	var got []byte
	if c.rank == 0 {
		got, err = c.via(cc).RecvAlloc(root, base)
	}
	// The leader broadcasts even after a failed receive (nil: the
	// group learns of it), so that no member waits for ever.
	got, berr := coll.BcastVarAlg(c.inter.lc.via(cc), "", got, 0, base)
	if err == nil {
		err = berr
	}
	if err == nil {
		got, err = c.hetFix(got, root, conv) // hetero_coll.go
	}
	return got, c.endCall(cc, op, err)
}

// interGather: the other group gathers at its leader, which sends the
// blocks to the root. The root gets one block per remote rank.
func (c *Comm) interGather(cc *collCall, op string, b []byte, root int, conv hetConv) ([][]byte, error) {
	role, err := c.interRole(op, root)
	if err != nil {
		c.endCall(cc, op, nil)
		return nil, err
	}
	base := c.collTag()
	switch role {
	case roleRoot:
		rec, err := c.via(cc).RecvAlloc(0, base)
		var parts [][]byte
		if err == nil {
			parts, err = unpackParts(rec, len(c.group))
		}
		if err == nil {
			err = c.hetFixParts(parts, conv) // hetero_coll.go
		}
		return parts, c.endCall(cc, op, err)
	case roleIdle:
		return nil, c.endCall(cc, op, nil)
	}
	parts, err := coll.Gather(c.inter.lc.via(cc), b, 0, base)
	if c.rank == 0 {
		if err != nil {
			parts = make([][]byte, c.Size()) // the root still gets a message
		}
		if serr := c.via(cc).Send(packParts(parts), root, base); err == nil {
			err = serr
		}
	}
	return nil, c.endCall(cc, op, err)
}

// interScatter: the root sends every block to the other group's leader,
// which scatters them in its group.
func (c *Comm) interScatter(cc *collCall, op string, parts [][]byte, root int, conv hetConv) ([]byte, error) {
	role, err := c.interRole(op, root)
	if err != nil {
		c.endCall(cc, op, nil)
		return nil, err
	}
	base := c.collTag()
	switch role {
	case roleRoot:
		return nil, c.endCall(cc, op, c.via(cc).Send(packParts(parts), 0, base))
	case roleIdle:
		return nil, c.endCall(cc, op, nil)
	}
	var mine [][]byte
	var rerr error
	if c.rank == 0 {
		rec, err := c.via(cc).RecvAlloc(root, base)
		if err == nil {
			mine, err = unpackParts(rec, c.Size())
		}
		if err != nil {
			// Scatter empty blocks so the group does not wait forever.
			rerr, mine = err, make([][]byte, c.Size())
		}
	}
	got, err := coll.Scatter(c.inter.lc.via(cc), mine, 0, base)
	if rerr != nil {
		err = rerr
	}
	if err == nil {
		got, err = c.hetFix(got, root, conv) // hetero_coll.go
	}
	return got, c.endCall(cc, op, err)
}

// interAllgather: each group gathers at its leader, the leaders swap the
// blocks, and each leader broadcasts the other group's blocks.
func (c *Comm) interAllgather(cc *collCall, op string, b []byte, conv hetConv) ([][]byte, error) {
	if err := c.check(op); err != nil {
		c.endCall(cc, op, nil)
		return nil, err
	}
	base := c.collTag()
	lcc := c.inter.lc.via(cc)
	parts, err := coll.Gather(lcc, b, 0, base)
	var rec []byte
	if c.rank == 0 {
		if err != nil {
			parts = make([][]byte, c.inter.lc.Size())
		}
		var xerr error
		if rec, xerr = exchange(c.via(cc), packParts(parts), 0, base); xerr != nil {
			rec = packParts(nil) // the group learns of the failure
		}
		if err == nil {
			err = xerr
		}
	}
	rec, berr := coll.BcastVarAlg(c.inter.lc.via(cc), "", rec, 0, base+4)
	if err == nil {
		err = berr
	}
	var out [][]byte
	if err == nil {
		out, err = unpackParts(rec, len(c.group))
	}
	if err == nil {
		err = c.hetFixParts(out, conv) // hetero_coll.go
	}
	return out, c.endCall(cc, op, err)
}

// interAlltoall: every rank sends parts[j] to remote rank j and receives
// one block from each remote rank.
func (c *Comm) interAlltoall(cc *collCall, op string, parts [][]byte, conv hetConv) ([][]byte, error) {
	if err := c.check(op); err != nil {
		c.endCall(cc, op, nil)
		return nil, err
	}
	base := c.collTag()
	via := c.via(cc)
	reqs := make([]coll.Request, 0, len(parts))
	var first error
	for j, p := range parts {
		r, err := via.Isend(p, j, base)
		if err != nil {
			first = err
			break
		}
		reqs = append(reqs, r)
	}
	out := make([][]byte, len(c.group))
	for j := range out {
		b, err := via.RecvAlloc(j, base)
		if err != nil && first == nil {
			first = err
		}
		out[j] = b
	}
	for _, r := range reqs {
		if _, err := r.Wait(); err != nil && first == nil {
			first = err
		}
	}
	if first == nil {
		first = c.hetFixParts(out, conv) // hetero_coll.go
	}
	return out, c.endCall(cc, op, first)
}

// interReduce: the other group reduces at its leader (in rank order), which
// sends the result to the root.
func (c *Comm) interReduce(cc *collCall, op string, b []byte, f coll.Combine, commutative bool, root int, conv hetConv) ([]byte, error) {
	role, err := c.interRole(op, root)
	if err != nil {
		c.endCall(cc, op, nil)
		return nil, err
	}
	base := c.collTag()
	switch role {
	case roleRoot:
		res, err := c.via(cc).RecvAlloc(0, base)
		if err == nil {
			res, err = c.hetFix(res, 0, conv) // hetero_coll.go
		}
		return res, c.endCall(cc, op, err)
	case roleIdle:
		return nil, c.endCall(cc, op, nil)
	}
	res, err := c.interLocalReduce(cc, b, f, commutative, base, conv)
	if c.rank == 0 {
		if serr := c.via(cc).Send(res, root, base); err == nil {
			err = serr
		}
	}
	return nil, c.endCall(cc, op, err)
}

// interAllreduce: each group reduces at its leader, the leaders swap the
// results, and each leader broadcasts the other group's result.
func (c *Comm) interAllreduce(cc *collCall, op string, b []byte, f coll.Combine, commutative bool, conv hetConv) ([]byte, error) {
	if err := c.check(op); err != nil {
		c.endCall(cc, op, nil)
		return nil, err
	}
	base := c.collTag()
	res, err := c.interLocalReduce(cc, b, f, commutative, base, conv)
	var theirs []byte
	if c.rank == 0 {
		var xerr error
		theirs, xerr = exchange(c.via(cc), res, 0, base)
		if err == nil {
			err = xerr
		}
	}
	got, berr := coll.BcastVarAlg(c.inter.lc.via(cc), "", theirs, 0, base+4)
	if err == nil {
		err = berr
	}
	if err == nil {
		got, err = c.hetFix(got, 0, conv) // the other group's leader's (hetero_coll.go)
	}
	return got, c.endCall(cc, op, err)
}

// Typed forms.

func interBcastT[T any](c *Comm, v T, root int) (T, error) {
	var zero T
	t := typeOf[T]()
	var b []byte
	if root == Root {
		var err error
		if b, err = viewBytes(t, &v, nil); err != nil {
			return zero, c.typeErr("Bcast", loc{}, err)
		}
	}
	got, err := c.interBcast(c.typedCall(t, -1), "Bcast", b, root, mixConv[T](c, t))
	if err != nil || root == Root || root == ProcNull {
		if root == Root && err == nil {
			return v, nil
		}
		return zero, err
	}
	var r T
	if err := fromBytes(t, got, &r); err != nil {
		return zero, c.typeErr("Bcast", loc{}, err)
	}
	return r, nil
}

func interGatherT[T any](c *Comm, v T, root int) ([]T, error) {
	t := typeOf[T]()
	var b []byte
	if root >= 0 {
		var err error
		if b, err = viewBytes(t, &v, nil); err != nil {
			return nil, c.typeErr("Gather", loc{}, err)
		}
	}
	parts, err := c.interGather(c.typedCall(t, -1), "Gather", b, root, mixConv[T](c, t))
	if err != nil || root != Root {
		return nil, err
	}
	return decodeAll[T](c, "Gather", t, parts)
}

func interScatterT[T any](c *Comm, vs []T, root int) (T, error) {
	var zero T
	t := typeOf[T]()
	var parts [][]byte
	if root == Root {
		if len(vs) != len(c.group) {
			return zero, c.fail("Scatter", ErrCount, loc{}, "root has %d values for a remote group of %d", len(vs), len(c.group))
		}
		var err error
		if parts, err = valueParts(c, "Scatter", t, vs); err != nil {
			return zero, err
		}
	}
	got, err := c.interScatter(c.typedCall(t, -1), "Scatter", parts, root, mixConv[T](c, t))
	if err != nil || root < 0 {
		return zero, err
	}
	var r T
	if err := fromBytes(t, got, &r); err != nil {
		return zero, c.typeErr("Scatter", loc{}, err)
	}
	return r, nil
}

func interAllgatherT[T any](c *Comm, v T) ([]T, error) {
	t := typeOf[T]()
	b, err := viewBytes(t, &v, nil)
	if err != nil {
		return nil, c.typeErr("Allgather", loc{}, err)
	}
	parts, err := c.interAllgather(c.typedCall(t, -1), "Allgather", b, mixConv[T](c, t))
	if err != nil {
		return nil, err
	}
	return decodeAll[T](c, "Allgather", t, parts)
}

func interAlltoallT[T any](c *Comm, vs []T) ([]T, error) {
	if len(vs) != len(c.group) {
		return nil, c.fail("Alltoall", ErrCount, loc{}, "%d values for a remote group of %d", len(vs), len(c.group))
	}
	t := typeOf[T]()
	parts, err := valueParts(c, "Alltoall", t, vs)
	if err != nil {
		return nil, err
	}
	got, err := c.interAlltoall(c.typedCall(t, -1), "Alltoall", parts, mixConv[T](c, t))
	if err != nil {
		return nil, err
	}
	return decodeAll[T](c, "Alltoall", t, got)
}

// interReduceT reduces the values of type T (root: as for Reduce; -1 for
// Allreduce) with combine f.
func interReduceT[T any](c *Comm, cc *collCall, opname string, t *typeInfo, v T, f coll.Combine, commutative bool, root int, all bool) (T, bool, error) {
	var zero T
	var b []byte
	if all || root >= 0 {
		var err error
		if b, err = ownBytes(t, &v); err != nil {
			cc.done(opname, nil)
			return zero, false, c.typeErr(opname, loc{}, err)
		}
	}
	var res []byte
	var err error
	if all {
		res, err = c.interAllreduce(cc, opname, b, f, commutative, mixConv[T](c, t))
	} else {
		res, err = c.interReduce(cc, opname, b, f, commutative, root, mixConv[T](c, t))
	}
	if err != nil || (!all && root != Root) {
		return zero, false, err
	}
	var r T
	if err := fromBytes(t, res, &r); err != nil {
		return zero, false, c.typeErr(opname, loc{}, err)
	}
	return r, true, nil
}

// interReduceOp is Reduce (all false) or Allreduce (all true) of whole
// values on an intercommunicator.
func interReduceOp[T any](c *Comm, opname string, v T, op Op[T], root int, all bool) (T, error) {
	var zero T
	if err := c.check(opname); err != nil {
		return zero, err
	}
	if !op.valid() {
		return zero, c.fail(opname, ErrOp, loc{}, "zero Op: make one with NewOp or use a predefined one such as Sum")
	}
	t := typeOf[T]()
	cc := c.typedCall(t, -1)
	r, _, err := interReduceT(c, cc, opname, t, v, valueCombine(cc, t, op), op.commutative, root, all)
	return r, err
}

// interReduceSliceOp is ReduceSlice or AllreduceSlice on an
// intercommunicator.
func interReduceSliceOp[E any](c *Comm, opname string, v []E, op Op[E], root int, all bool) ([]E, error) {
	if err := c.check(opname); err != nil {
		return nil, err
	}
	if !op.valid() {
		return nil, c.fail(opname, ErrOp, loc{}, "zero Op: make one with NewOp or use a predefined one such as Sum")
	}
	// Every member of both groups passes len(v) elements (Allreduce), or
	// of the group that sends (Reduce; the root's v is not used, so it
	// accepts any count).
	cc := sliceCall[E](c, len(v))
	if !all && root == Root {
		cc.sig, cc.anyCount = cc.t.sig, true
	}
	r, _, err := interReduceT(c, cc, opname, typeOf[[]E](), v, sliceCombine(cc, op), op.commutative, root, all)
	return r, err
}

// Low-level forms.

// interBcastBuf is Bcast on an intercommunicator.
func (c *Comm) interBcastBuf(buf []byte, count int, dt *Datatype, root int) error {
	const op = "Bcast"
	var b []byte
	var sp *dspan
	if root != ProcNull {
		var err error
		if b, sp, err = c.collBuf(op, buf, count, dt, root == Root); err != nil {
			return err
		}
	}
	var cc *collCall
	if root != ProcNull {
		cc = c.lowCall(lowSig(dt, count), true)
	}
	got, err := c.interBcast(cc, op, b, root, formConv(dt, sp != nil))
	if err != nil || root < 0 {
		return err
	}
	if len(got) != len(b) {
		return c.argErr(op, ErrTruncate, "the root sent %d bytes for a %d-byte buffer", len(got), len(b))
	}
	copy(b, got)
	if sp != nil {
		sp.unpack(b)
	}
	return nil
}

// interGathervBuf is Gather(v) on an intercommunicator: the root's
// recvbuf gets recvcounts[j] elements from remote rank j at displs[j]
// (nil: packed in rank order).
func (c *Comm) interGathervBuf(name string, sendbuf []byte, sendcount int, sendtype *Datatype, recvbuf []byte, recvcounts, displs []int, recvtype *Datatype, root int) error {
	var sb, rb []byte
	var lo, hi []int
	var st *vStage
	var err error
	if root >= 0 {
		if sb, _, err = c.collBuf(name, sendbuf, sendcount, sendtype, true); err != nil {
			return err
		}
	}
	if root == Root {
		if rb, lo, hi, st, err = c.checkV(name, "receive", recvbuf, recvcounts, displs, recvtype, nil); err != nil {
			return err
		}
	}
	var cc *collCall
	full := name == "Gather"
	switch {
	case root >= 0 && full:
		cc = c.lowCall(lowSig(sendtype, sendcount), true)
	case root >= 0:
		cc = c.lowCall(lowUnitSig(sendtype), false)
	case root == Root && full && len(recvcounts) > 0:
		cc = c.lowCall(lowSig(recvtype, recvcounts[0]), true)
	case root == Root:
		cc = c.lowCall(lowUnitSig(recvtype), false)
	}
	parts, err := c.interGather(cc, name, sb, root, formConv(recvtype, st != nil))
	if err != nil || root != Root {
		return err
	}
	return c.placeParts(name, rb, st, parts, lo, hi, recvcounts, recvtype)
}

// placeParts copies block j of parts to rb[lo[j]:hi[j]], and unpacks it
// into the caller's buffer if the blocks are staged (st).
func (c *Comm) placeParts(name string, rb []byte, st *vStage, parts [][]byte, lo, hi, counts []int, dt *Datatype) error {
	for j, p := range parts {
		if len(p) != hi[j]-lo[j] {
			return c.blockErr(name, "remote rank "+strconv.Itoa(j), len(p), "recvcounts["+strconv.Itoa(j)+"]", counts[j], dt)
		}
		copy(rb[lo[j]:hi[j]], p)
		if st != nil {
			st.unpack(j)
		}
	}
	return nil
}

// interScattervBuf is Scatter(v) on an intercommunicator: remote rank j
// gets sendcounts[j] elements of the root's sendbuf at displs[j].
func (c *Comm) interScattervBuf(name string, sendbuf []byte, sendcounts, displs []int, sendtype *Datatype, recvbuf []byte, recvcount int, recvtype *Datatype, root int) error {
	var parts [][]byte
	var rb []byte
	var rsp *dspan
	if root == Root {
		sb, lo, hi, st, err := c.checkV(name, "send", sendbuf, sendcounts, displs, sendtype, nil)
		if err != nil {
			return err
		}
		parts = make([][]byte, len(lo))
		for j := range lo {
			if st != nil {
				st.pack(j)
			}
			parts[j] = sb[lo[j]:hi[j]]
		}
	} else if root >= 0 {
		var err error
		if rb, rsp, err = c.collBuf(name, recvbuf, recvcount, recvtype, false); err != nil {
			return err
		}
	}
	var cc *collCall
	full := name == "Scatter"
	switch {
	case root >= 0:
		cc = c.lowCall(lowSig(recvtype, recvcount), full)
		if !full {
			cc.sig = lowUnitSig(recvtype)
		}
	case root == Root && full && len(sendcounts) > 0:
		cc = c.lowCall(lowSig(sendtype, sendcounts[0]), true)
	case root == Root:
		cc = c.lowCall(lowUnitSig(sendtype), false)
	}
	got, err := c.interScatter(cc, name, parts, root, formConv(recvtype, rsp != nil))
	if err != nil || root < 0 {
		return err
	}
	if len(got) != len(rb) {
		return c.blockErr(name, "the root", len(got), "recvcount", recvcount, recvtype)
	}
	copy(rb, got)
	if rsp != nil {
		rsp.unpack(rb)
	}
	return nil
}

// interAllgathervBuf is Allgather(v) on an intercommunicator: recvbuf
// gets recvcounts[j] elements from remote rank j at displs[j].
func (c *Comm) interAllgathervBuf(name string, sendbuf []byte, sendcount int, sendtype *Datatype, recvbuf []byte, recvcounts, displs []int, recvtype *Datatype) error {
	sb, _, err := c.collBuf(name, sendbuf, sendcount, sendtype, true)
	if err != nil {
		return err
	}
	rb, lo, hi, st, err := c.checkV(name, "receive", recvbuf, recvcounts, displs, recvtype, nil)
	if err != nil {
		return err
	}
	// Not checked by signature: the groups may pass different counts.
	parts, err := c.interAllgather(nil, name, sb, formConv(recvtype, st != nil))
	if err != nil {
		return err
	}
	return c.placeParts(name, rb, st, parts, lo, hi, recvcounts, recvtype)
}

// interAlltoallBuf is Alltoall on an intercommunicator: block j of sendbuf
// goes to remote rank j, block j of recvbuf comes from it.
func (c *Comm) interAlltoallBuf(sendbuf []byte, sendcount int, sendtype *Datatype, recvbuf []byte, recvcount int, recvtype *Datatype) error {
	const op = "Alltoall"
	q := len(c.group)
	sn, err := c.mulCount(op, q, sendcount)
	if err != nil {
		return err
	}
	rn, err := c.mulCount(op, q, recvcount)
	if err != nil {
		return err
	}
	sb, _, err := c.collBuf(op, sendbuf, sn, sendtype, true)
	if err != nil {
		return err
	}
	rb, rsp, err := c.collBuf(op, recvbuf, rn, recvtype, false)
	if err != nil {
		return err
	}
	sblk, rblk := len(sb)/max(q, 1), len(rb)/max(q, 1)
	parts := make([][]byte, q)
	for j := range parts {
		parts[j] = sb[j*sblk : (j+1)*sblk]
	}
	// Each pair of ranks checks its block's signature.
	cc := c.lowCall(perPeerSig, true)
	cc.sendTo, cc.recvOf = make([]uint64, q), make([]uint64, q)
	for j := range q {
		cc.sendTo[j], cc.recvOf[j] = lowSig(sendtype, sendcount), lowSig(recvtype, recvcount)
	}
	got, err := c.interAlltoall(cc, op, parts, formConv(recvtype, rsp != nil))
	if err != nil {
		return err
	}
	for j, p := range got {
		if len(p) != rblk {
			return c.argErr(op, ErrTruncate, "remote rank %d sent %d bytes for a %d-byte block", j, len(p), rblk)
		}
		copy(rb[j*rblk:], p)
	}
	if rsp != nil {
		rsp.unpack(rb)
	}
	return nil
}

// interReduceBuf is Reduce (root as on intercommunicators) or, with all,
// Allreduce on an intercommunicator.
func (c *Comm) interReduceBuf(name string, sendbuf, recvbuf []byte, count int, dt *Datatype, op *ReduceOp, root int, all bool) error {
	if err := c.check(name); err != nil {
		return err
	}
	n, err := c.lowOpArgs(name, count, dt, op)
	if err != nil {
		return err
	}
	var in []byte
	if all || root >= 0 {
		if err := c.need(name, "sendbuf", sendbuf, n); err != nil {
			return err
		}
		in = append([]byte(nil), sendbuf[:n]...)
	}
	if all || root == Root {
		if err := c.need(name, "recvbuf", recvbuf, n); err != nil {
			return err
		}
	}
	f, _ := op.combine(dt)
	var cc *collCall
	if all || root != ProcNull {
		cc = c.lowCall(lowSig(dt, count), true)
		f = cc.combine(f)
	}
	var res []byte
	if all {
		res, err = c.interAllreduce(cc, name, in, f, op.commutative, lowConvOf(dt))
	} else {
		res, err = c.interReduce(cc, name, in, f, op.commutative, root, lowConvOf(dt))
	}
	if err != nil || (!all && root != Root) {
		return err
	}
	if len(res) != n {
		return c.argErr(name, ErrTruncate, "the other group's result has %d bytes, want %d", len(res), n)
	}
	copy(recvbuf[:n], res)
	return nil
}

// interReduceScatterBuf is ReduceScatter(Block) on an intercommunicator:
// each group reduces its vectors (Σ recvcounts elements, the same total in
// both groups) at its leader, the leaders swap the results, and each
// leader scatters the other group's result over its own group, block i
// (recvcounts[i] elements) to local rank i. InPlace is not allowed, as in
// MPI.
func (c *Comm) interReduceScatterBuf(name string, sendbuf, recvbuf []byte, recvcounts []int, dt *Datatype, op *ReduceOp) error {
	if err := c.check(name); err != nil {
		return err
	}
	if len(recvcounts) != c.Size() {
		return c.argErr(name, ErrCount, "%d counts for a local group of %d", len(recvcounts), c.Size())
	}
	total, err := c.countSum(name, recvcounts)
	if err != nil {
		return err
	}
	n, err := c.lowOpArgs(name, total, dt, op)
	if err != nil {
		return err
	}
	if isInPlace(sendbuf) {
		return c.argErr(name, ErrArg, "InPlace cannot be used on an intercommunicator")
	}
	if err := c.need(name, "sendbuf", sendbuf, n); err != nil {
		return err
	}
	mine := recvcounts[c.rank] * dt.block()
	if err := c.need(name, "recvbuf", recvbuf, mine); err != nil {
		return err
	}
	f, _ := op.combine(dt)
	base := c.collTag()
	lcc := c.inter.lc.coll()
	conv := lowConvOf(dt)
	res, err := c.interLocalReduce(nil, append([]byte(nil), sendbuf[:n]...), f, op.commutative, base, conv)
	if err != nil {
		return c.collErr(name, err)
	}
	var parts [][]byte
	var xerr error
	if c.rank == 0 {
		var theirs []byte
		theirs, xerr = exchange(collComm{c.shadow}, res, 0, base)
		if xerr == nil && len(theirs) != n {
			xerr = fmt.Errorf("%w: the other group reduced %d bytes, this group expects %d (the totals of recvcounts differ)", ErrCount, len(theirs), n)
		}
		parts = make([][]byte, len(recvcounts))
		off := 0
		for i, k := range recvcounts {
			if xerr == nil {
				parts[i] = theirs[off : off+k*dt.block()]
			} else {
				parts[i] = nil // the group still completes the scatter, then fails below
			}
			off += k * dt.block()
		}
	}
	got, serr := coll.Scatter(lcc, parts, 0, base+4)
	if xerr != nil {
		return c.collErr(name, xerr)
	}
	if serr == nil {
		got, serr = c.hetFix(got, 0, conv) // the other group's leader's (hetero_coll.go)
	}
	if serr != nil {
		return c.collErr(name, serr)
	}
	if len(got) != mine {
		return c.argErr(name, ErrTruncate, "received %d bytes for a %d-byte block", len(got), mine)
	}
	copy(recvbuf[:mine], got)
	return nil
}
