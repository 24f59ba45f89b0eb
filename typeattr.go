package mpi

import (
	"sync"
	"sync/atomic"
)

// Attributes on datatypes (MPI-3.1 section 6.7.4): values cached on a
// Datatype under a key made by CreateTypeKeyval, with the same rules as a
// communicator's (attr.go): Dup copies what the copy callback keeps, and
// the delete callback runs when a value is deleted, overwritten, or its
// datatype freed.

// TypeCopyAttrFunc is a datatype keyval's copy callback
// (MPI_Type_copy_attr_function): called by Dup on old for each attribute
// set with the key, it returns the value the new datatype gets and whether
// it gets one at all. An error makes Dup fail.
type TypeCopyAttrFunc func(old *Datatype, key *TypeKeyval, val any) (newVal any, keep bool, err error)

// TypeDeleteAttrFunc is a datatype keyval's delete callback
// (MPI_Type_delete_attr_function): called with the value being deleted
// from dt by DeleteAttr, by SetAttr overwriting it, or by Free. An error
// makes that call fail and leaves the attribute in place.
type TypeDeleteAttrFunc func(dt *Datatype, key *TypeKeyval, val any) error

// Predefined copy callbacks for datatype keyvals.
var (
	// TypeNullCopyFn copies nothing (MPI_TYPE_NULL_COPY_FN; also what a
	// nil TypeCopyAttrFunc does).
	TypeNullCopyFn TypeCopyAttrFunc = func(*Datatype, *TypeKeyval, any) (any, bool, error) { return nil, false, nil }
	// TypeDupFn gives the new datatype the same value (MPI_TYPE_DUP_FN).
	TypeDupFn TypeCopyAttrFunc = func(_ *Datatype, _ *TypeKeyval, v any) (any, bool, error) { return v, true, nil }
)

// TypeKeyval is a key for attributes on datatypes, made by
// CreateTypeKeyval and released by FreeTypeKeyval.
type TypeKeyval struct {
	copyFn   TypeCopyAttrFunc
	deleteFn TypeDeleteAttrFunc
	freed    atomic.Bool
}

// CreateTypeKeyval makes a new datatype attribute key with the given
// callbacks (MPI_Type_create_keyval); either may be nil. Closures carry
// MPI's extra_state.
func CreateTypeKeyval(copyFn TypeCopyAttrFunc, deleteFn TypeDeleteAttrFunc) (_ *TypeKeyval, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("CreateTypeKeyval", nil, Undefined, Undefined), &err)
	}

	if copyFn == nil {
		copyFn = TypeNullCopyFn
	}
	return &TypeKeyval{copyFn: copyFn, deleteFn: deleteFn}, nil
}

// FreeTypeKeyval releases key (MPI_Type_free_keyval): it can no longer be
// used to set or get attributes; values already set keep their callbacks.
func FreeTypeKeyval(key *TypeKeyval) (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("FreeTypeKeyval", nil, Undefined, Undefined), &err)
	}

	if key == nil || key.freed.Swap(true) {
		return (*Comm)(nil).errorf("FreeTypeKeyval", ErrKeyval, loc{}, "nil or already freed key")
	}
	return nil
}

// typeAttrs guards the attribute lists of every datatype: attribute calls
// are rare, and a Datatype is copied by value in places, so it holds only
// a pointer to its list.
var typeAttrs sync.Mutex

type typeAttr struct {
	key *TypeKeyval
	val any
}

// checkTypeKey checks key for use on d; a freed key can still delete the
// attributes set with it before the free (see Comm.checkKey), and only
// that (del).
func (d *Datatype) checkTypeKey(op string, key *TypeKeyval, del bool) error {
	if d == nil {
		return typeErr(op, "nil datatype")
	}
	if d.isFreed() {
		return typeErr(op, "the datatype has been freed")
	}
	if key == nil {
		return (*Comm)(nil).errorf(op, ErrKeyval, loc{}, "nil key")
	}
	if !del && key.freed.Load() {
		return (*Comm)(nil).errorf(op, ErrKeyval, loc{}, "freed key")
	}
	return nil
}

// takeAttr removes key's attribute from d and returns it.
func (d *Datatype) takeAttr(key *TypeKeyval) (typeAttr, bool) {
	typeAttrs.Lock()
	defer typeAttrs.Unlock()
	if d.attrs == nil {
		return typeAttr{}, false
	}
	for i, a := range *d.attrs {
		if a.key == key {
			*d.attrs = append((*d.attrs)[:i], (*d.attrs)[i+1:]...)
			return a, true
		}
	}
	return typeAttr{}, false
}

// putAttr sets key's attribute of d, replacing any.
func (d *Datatype) putAttr(a typeAttr, replace bool) {
	typeAttrs.Lock()
	defer typeAttrs.Unlock()
	if d.attrs == nil {
		d.attrs = new([]typeAttr)
	}
	for i, b := range *d.attrs {
		if b.key == a.key {
			if replace {
				(*d.attrs)[i] = a
			}
			return
		}
	}
	*d.attrs = append(*d.attrs, a)
}

// SetAttr caches val on d under key (MPI_Type_set_attr). A value already
// there is first deleted, with its delete callback. Predefined datatypes
// take attributes too.
func (d *Datatype) SetAttr(key *TypeKeyval, val any) (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Datatype.SetAttr", nil, Undefined, Undefined), &err)
	}

	if err := d.checkTypeKey("TypeSetAttr", key, false); err != nil {
		return err
	}
	if old, ok := d.takeAttr(key); ok && key.deleteFn != nil {
		if err := key.deleteFn(d, key, old.val); err != nil {
			d.putAttr(old, false)
			return (*Comm)(nil).errorf("TypeSetAttr", ErrOther, loc{}, "delete callback of the old value: %v", err)
		}
	}
	d.putAttr(typeAttr{key, val}, true)
	return nil
}

// GetAttr returns the value cached on d under key, and whether there is
// one (MPI_Type_get_attr).
func (d *Datatype) GetAttr(key *TypeKeyval) (_ any, _ bool, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Datatype.GetAttr", nil, Undefined, Undefined), &err)
	}

	if err := d.checkTypeKey("TypeGetAttr", key, false); err != nil {
		return nil, false, err
	}
	typeAttrs.Lock()
	defer typeAttrs.Unlock()
	if d.attrs != nil {
		for _, a := range *d.attrs {
			if a.key == key {
				return a.val, true, nil
			}
		}
	}
	return nil, false, nil
}

// DeleteAttr removes the value cached on d under key, after calling the
// key's delete callback (MPI_Type_delete_attr). Deleting a key that has
// no value fails with ErrKeyval.
func (d *Datatype) DeleteAttr(key *TypeKeyval) (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Datatype.DeleteAttr", nil, Undefined, Undefined), &err)
	}

	if err := d.checkTypeKey("TypeDeleteAttr", key, true); err != nil {
		return err
	}
	a, ok := d.takeAttr(key)
	if !ok {
		return (*Comm)(nil).errorf("TypeDeleteAttr", ErrKeyval, loc{}, "no attribute with this key on %s", d.name)
	}
	if key.deleteFn != nil {
		if err := key.deleteFn(d, key, a.val); err != nil {
			d.putAttr(a, false)
			return (*Comm)(nil).errorf("TypeDeleteAttr", ErrOther, loc{}, "delete callback: %v", err)
		}
	}
	return nil
}

// deleteAllAttrs deletes every attribute of d, the last set first.
func (d *Datatype) deleteAllAttrs(op string) error {
	for {
		typeAttrs.Lock()
		var a typeAttr
		n := 0
		if d.attrs != nil {
			n = len(*d.attrs)
		}
		if n > 0 {
			a = (*d.attrs)[n-1]
			*d.attrs = (*d.attrs)[:n-1]
		}
		typeAttrs.Unlock()
		if n == 0 {
			return nil
		}
		if a.key.deleteFn != nil {
			if err := a.key.deleteFn(d, a.key, a.val); err != nil {
				d.putAttr(a, false)
				return (*Comm)(nil).errorf(op, ErrOther, loc{}, "attribute delete callback: %v", err)
			}
		}
	}
}

// copyAttrs gives n, a new Dup of d, the attributes of d that their copy
// callbacks keep.
func (d *Datatype) copyAttrs(op string, n *Datatype) error {
	typeAttrs.Lock()
	var list []typeAttr
	if d.attrs != nil {
		list = append(list, *d.attrs...)
	}
	typeAttrs.Unlock()
	for _, a := range list {
		v, keep, err := a.key.copyFn(d, a.key, a.val)
		if err != nil {
			return (*Comm)(nil).errorf(op, ErrOther, loc{}, "attribute copy callback: %v", err)
		}
		if keep {
			n.putAttr(typeAttr{a.key, v}, true)
		}
	}
	return nil
}
