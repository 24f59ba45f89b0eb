package mpi

import "sync"

// Info is an ordered set of (key, value) string hints (MPI_Info). A nil
// *Info is MPI_INFO_NULL: it has no keys and cannot be set. An Info is
// safe for use by many goroutines.
type Info struct {
	mu   sync.Mutex
	keys []string
	vals map[string]string
}

// Limits on Info keys and values (MPI_MAX_INFO_KEY, MPI_MAX_INFO_VAL).
const (
	MaxInfoKey = 255
	MaxInfoVal = 1024
)

// NewInfo returns an empty Info (MPI_Info_create).
func NewInfo() *Info { return &Info{vals: map[string]string{}} }

func infoErr(op, format string, args ...any) error {
	return (*Comm)(nil).errorf(op, ErrArg, loc{}, format, args...)
}

// Set sets key to value, keeping the key's place if it is already there
// (MPI_Info_set). Keys must have 1 to MaxInfoKey bytes, values at most
// MaxInfoVal.
func (in *Info) Set(key, value string) (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Info.Set", nil, Undefined, Undefined), &err)
	}
	if in == nil {
		return infoErr("InfoSet", "nil Info (InfoNull) cannot be set")
	}
	if len(key) == 0 || len(key) > MaxInfoKey {
		return infoErr("InfoSet", "key of %d bytes (1 to %d allowed)", len(key), MaxInfoKey)
	}
	if len(value) > MaxInfoVal {
		return infoErr("InfoSet", "value of %d bytes (at most %d allowed)", len(value), MaxInfoVal)
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.vals == nil {
		in.vals = map[string]string{}
	}
	if _, ok := in.vals[key]; !ok {
		in.keys = append(in.keys, key)
	}
	in.vals[key] = value
	return nil
}

// Get returns the value of key and whether it is set (MPI_Info_get).
func (in *Info) Get(key string) (string, bool) {
	if in == nil {
		return "", false
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	v, ok := in.vals[key]
	return v, ok
}

// Delete removes key (MPI_Info_delete); deleting a key that is not set
// fails with ErrArg.
func (in *Info) Delete(key string) (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Info.Delete", nil, Undefined, Undefined), &err)
	}
	if in == nil {
		return infoErr("InfoDelete", "nil Info (InfoNull)")
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	if _, ok := in.vals[key]; !ok {
		return infoErr("InfoDelete", "key %q is not set", key)
	}
	delete(in.vals, key)
	for i, k := range in.keys {
		if k == key {
			in.keys = append(in.keys[:i], in.keys[i+1:]...)
			break
		}
	}
	return nil
}

// Keys returns the keys in the order they were first set
// (MPI_Info_get_nkeys and MPI_Info_get_nthkey).
func (in *Info) Keys() []string {
	if in == nil {
		return nil
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	return append([]string(nil), in.keys...)
}

// Dup returns a copy of in (MPI_Info_dup); the copy of nil is nil.
func (in *Info) Dup() *Info {
	if in == nil {
		return nil
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	d := &Info{keys: append([]string(nil), in.keys...), vals: make(map[string]string, len(in.vals))}
	for k, v := range in.vals {
		d.vals[k] = v
	}
	return d
}

// SetInfo replaces c's hints with a copy of info (MPI_Comm_set_info).
// mpigo currently acts on no hint; they are kept for Info to return.
func (c *Comm) SetInfo(info *Info) (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.SetInfo", c, Undefined, Undefined), &err)
	}
	if err := c.check("SetInfo"); err != nil {
		return err
	}
	c.info.Store(info.Dup())
	return nil
}

// Info returns a copy of the hints set on c, which may be empty
// (MPI_Comm_get_info).
func (c *Comm) Info() *Info {
	if c == nil {
		return nil
	}
	if in := c.info.Load(); in != nil {
		return in.Dup()
	}
	return NewInfo()
}
