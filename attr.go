package mpi

import (
	"sync"
	"sync/atomic"
)

// Attributes (MPI-3.1 section 6.7): values cached on a communicator under
// a key made by CreateKeyval. A key's copy callback decides what Dup
// carries over to the new communicator; its delete callback runs when the
// value is deleted, overwritten, or its communicator freed.

// CopyAttrFunc is a keyval's copy callback (MPI_Comm_copy_attr_function):
// called by Dup on old for each attribute set with the key, it returns the
// value the new communicator gets and whether it gets one at all. An error
// makes Dup fail.
type CopyAttrFunc func(old *Comm, key *Keyval, val any) (newVal any, keep bool, err error)

// DeleteAttrFunc is a keyval's delete callback
// (MPI_Comm_delete_attr_function): called with the value being deleted
// from c by DeleteAttr, by SetAttr overwriting it, or by Free. An error
// makes that call fail and leaves the attribute in place.
type DeleteAttrFunc func(c *Comm, key *Keyval, val any) error

// Predefined copy callbacks.
var (
	// NullCopyFn copies nothing: the new communicator does not get the
	// attribute (MPI_COMM_NULL_COPY_FN; also what a nil CopyAttrFunc does).
	NullCopyFn CopyAttrFunc = func(*Comm, *Keyval, any) (any, bool, error) { return nil, false, nil }
	// DupFn gives the new communicator the same value (MPI_COMM_DUP_FN).
	DupFn CopyAttrFunc = func(_ *Comm, _ *Keyval, v any) (any, bool, error) { return v, true, nil }
)

// Keyval is an attribute key (MPI_Comm_keyval): made by CreateKeyval,
// released by FreeKeyval.
type Keyval struct {
	copyFn     CopyAttrFunc
	deleteFn   DeleteAttrFunc
	predefined func(c *Comm) any // predefined keys: the value, computed
	name       string
	freed      atomic.Bool
}

// CreateKeyval makes a new attribute key with the given callbacks
// (MPI_Comm_create_keyval). Either may be nil: a nil copyFn copies
// nothing, a nil deleteFn does nothing. The callbacks may carry state as
// closures (MPI's extra_state).
func CreateKeyval(copyFn CopyAttrFunc, deleteFn DeleteAttrFunc) (_ *Keyval, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("CreateKeyval", nil, Undefined, Undefined), &err)
	}
	if copyFn == nil {
		copyFn = NullCopyFn
	}
	return &Keyval{copyFn: copyFn, deleteFn: deleteFn, name: "keyval"}, nil
}

// FreeKeyval releases key (MPI_Comm_free_keyval): it can no longer be used
// to set or get attributes, but attributes already set with it keep their
// callbacks until they are deleted.
func FreeKeyval(key *Keyval) (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("FreeKeyval", nil, Undefined, Undefined), &err)
	}
	if key == nil || key.predefined != nil || key.freed.Swap(true) {
		return (*Comm)(nil).errorf("FreeKeyval", ErrKeyval, loc{}, "nil, predefined or already freed key")
	}
	return nil
}

// Predefined attribute keys. Their values are read-only: GetAttr returns
// them on every communicator; SetAttr and DeleteAttr refuse them.
var (
	// AttrTagUB gives the largest valid tag, an int (MPI_TAG_UB).
	AttrTagUB = &Keyval{name: "AttrTagUB", predefined: func(*Comm) any { return TagUB }}
	// AttrWtimeIsGlobal gives whether clocks are synchronised across the
	// job, a bool: false (MPI_WTIME_IS_GLOBAL).
	AttrWtimeIsGlobal = &Keyval{name: "AttrWtimeIsGlobal", predefined: func(*Comm) any { return false }}
	// AttrUniverseSize gives, as an int, how many processes the job may
	// have (MPI_UNIVERSE_SIZE): the slots of mpigo run's hosts when it
	// was given some (MPIGO_UNIVERSE_SIZE), else the job's size.
	AttrUniverseSize = &Keyval{name: "AttrUniverseSize", predefined: func(c *Comm) any { return max(c.p.job.universe, c.p.job.Size) }}
)

// attrTable holds a communicator's attributes in the order they were set.
type attrTable struct {
	mu   sync.Mutex
	list []attr
}

type attr struct {
	key *Keyval
	val any
}

// find returns the position of key in t, or -1. t.mu is held.
func (t *attrTable) find(key *Keyval) int {
	for i, a := range t.list {
		if a.key == key {
			return i
		}
	}
	return -1
}

// The uses of a key that checkKey checks.
const (
	keySet = iota
	keyGet
	keyDelete
)

// checkKey checks key for use on c. A freed key can still delete the
// attributes set with it before the free (MPI-4.1 section 7.7.2: the free
// takes effect once every attribute of the key is gone, which the program
// does with MPI_Comm_delete_attr), but not set or read any.
func (c *Comm) checkKey(op string, key *Keyval, use int) error {
	if err := c.check(op); err != nil {
		return err
	}
	if key == nil {
		return c.fail(op, ErrKeyval, loc{}, "nil key")
	}
	if use != keyDelete && key.freed.Load() {
		return c.fail(op, ErrKeyval, loc{}, "freed key")
	}
	if use != keyGet && key.predefined != nil {
		return c.fail(op, ErrKeyval, loc{}, "%s is predefined and read-only", key.name)
	}
	return nil
}

// take removes key's attribute from c and returns it; callbacks run with
// the table unlocked, so they may use c's attributes themselves.
func (t *attrTable) take(key *Keyval) (attr, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	i := t.find(key)
	if i < 0 {
		return attr{}, false
	}
	a := t.list[i]
	t.list = append(t.list[:i], t.list[i+1:]...)
	return a, true
}

// putBack returns a to c's table unless the key has been set meanwhile.
func (t *attrTable) putBack(a attr) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.find(a.key) < 0 {
		t.list = append(t.list, a)
	}
}

// SetAttr caches val on c under key (MPI_Comm_set_attr). A value already
// there is first deleted, with its delete callback.
func (c *Comm) SetAttr(key *Keyval, val any) (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.SetAttr", c, Undefined, Undefined), &err)
	}
	if err := c.checkKey("SetAttr", key, keySet); err != nil {
		return err
	}
	if old, ok := c.attrs.take(key); ok && key.deleteFn != nil {
		if err := key.deleteFn(c, key, old.val); err != nil {
			c.attrs.putBack(old)
			return c.fail("SetAttr", ErrOther, loc{}, "delete callback of the old value: %v", err)
		}
	}
	c.attrs.mu.Lock()
	if i := c.attrs.find(key); i >= 0 {
		c.attrs.list = append(c.attrs.list[:i], c.attrs.list[i+1:]...)
	}
	c.attrs.list = append(c.attrs.list, attr{key, val})
	c.attrs.mu.Unlock()
	return nil
}

// GetAttr returns the value cached on c under key, and whether there is
// one (MPI_Comm_get_attr).
func (c *Comm) GetAttr(key *Keyval) (_ any, _ bool, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.GetAttr", c, Undefined, Undefined), &err)
	}
	return c.getAttr(key)
}

// getAttr is GetAttr without the profiler hook, for the package's own use.
func (c *Comm) getAttr(key *Keyval) (any, bool, error) {
	if err := c.checkKey("GetAttr", key, keyGet); err != nil {
		return nil, false, err
	}
	if key.predefined != nil {
		return key.predefined(c), true, nil
	}
	c.attrs.mu.Lock()
	defer c.attrs.mu.Unlock()
	if i := c.attrs.find(key); i >= 0 {
		return c.attrs.list[i].val, true, nil
	}
	return nil, false, nil
}

// DeleteAttr removes the value cached on c under key, after calling the
// key's delete callback (MPI_Comm_delete_attr). Deleting a key that has no
// value fails with ErrKeyval.
func (c *Comm) DeleteAttr(key *Keyval) (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.DeleteAttr", c, Undefined, Undefined), &err)
	}
	return c.deleteAttr(key)
}

// deleteAttr is DeleteAttr without the profiler hook, for the package's own use.
func (c *Comm) deleteAttr(key *Keyval) error {
	if err := c.checkKey("DeleteAttr", key, keyDelete); err != nil {
		return err
	}
	a, ok := c.attrs.take(key)
	if !ok {
		return c.fail("DeleteAttr", ErrKeyval, loc{}, "no attribute with this key")
	}
	if key.deleteFn != nil {
		if err := key.deleteFn(c, key, a.val); err != nil {
			c.attrs.putBack(a)
			return c.fail("DeleteAttr", ErrOther, loc{}, "delete callback: %v", err)
		}
	}
	return nil
}

// popAttr takes off the attribute of c set last; ok is false when c has
// none left.
func (c *Comm) popAttr() (a attr, ok bool) {
	c.attrs.mu.Lock()
	defer c.attrs.mu.Unlock()
	n := len(c.attrs.list)
	if n == 0 {
		return attr{}, false
	}
	a = c.attrs.list[n-1]
	c.attrs.list = c.attrs.list[:n-1]
	return a, true
}

// deleteAllAttrs deletes every attribute of c, the last set first.
func (c *Comm) deleteAllAttrs(op string) error {
	for {
		a, ok := c.popAttr()
		if !ok {
			return nil
		}
		if a.key.deleteFn != nil {
			if err := a.key.deleteFn(c, a.key, a.val); err != nil {
				c.attrs.putBack(a)
				return c.fail(op, ErrOther, loc{}, "attribute delete callback: %v", err)
			}
		}
	}
}

// finalizeSelf deletes the attributes of the rank's Self communicator, the
// last set first, as MPI_Finalize must before it does anything else
// (MPI-4.1 section 11.2.4): their delete callbacks run while MPI is still
// usable, which is how libraries hook the end of MPI. Finalize calls it on
// the caller's thread and runRank when the rank's function returns; the
// second call finds nothing left.
func (p *proc) finalizeSelf() error {
	if p == nil || p.world == nil {
		return nil
	}
	c := p.world.Self()
	var first error
	for {
		// Unlike deleteAllAttrs, a failing callback does not keep its
		// attribute: the communicator ends here, and the callback must
		// not run twice.
		a, ok := c.popAttr()
		if !ok {
			return first
		}
		if a.key.deleteFn != nil {
			if err := a.key.deleteFn(c, a.key, a.val); err != nil && first == nil {
				first = c.fail("Finalize", ErrOther, loc{}, "attribute delete callback of MPI_COMM_SELF: %v", err)
			}
		}
	}
}

// copyAttrs gives d the attributes of c that their copy callbacks keep.
func (c *Comm) copyAttrs(op string, d *Comm) error {
	c.attrs.mu.Lock()
	list := append([]attr(nil), c.attrs.list...)
	c.attrs.mu.Unlock()
	for _, a := range list {
		v, keep, err := a.key.copyFn(c, a.key, a.val)
		if err != nil {
			return c.fail(op, ErrOther, loc{}, "attribute copy callback: %v", err)
		}
		if keep {
			d.attrs.mu.Lock()
			d.attrs.list = append(d.attrs.list, attr{a.key, v})
			d.attrs.mu.Unlock()
		}
	}
	return nil
}
