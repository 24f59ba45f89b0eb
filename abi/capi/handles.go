//go:build cgo

package capi

import "sync"

// Handle kinds of user handles. A user handle is kind<<24 | index+1: never
// below 1<<24, so never in the predefined range (1..4095), never 0, and it
// fits in an int (MPI_Comm_toint). The kind in the value lets a handle of
// the wrong kind be told from a bad one.
const (
	kindComm = 1 + iota
	kindType
	kindOp
	kindRequest
	kindInfo
)

const kindShift = 24

// table holds the objects behind the user handles of one kind.
type table[T any] struct {
	mu   sync.RWMutex
	kind uintptr
	objs []T
	used []bool
	free []int
}

func (t *table[T]) add(v T) uintptr {
	t.mu.Lock()
	defer t.mu.Unlock()
	var i int
	if n := len(t.free); n > 0 {
		i = t.free[n-1]
		t.free = t.free[:n-1]
		t.objs[i], t.used[i] = v, true
	} else {
		i = len(t.objs)
		t.objs = append(t.objs, v)
		t.used = append(t.used, true)
	}
	return t.kind<<kindShift | uintptr(i+1)
}

func (t *table[T]) index(h uintptr) (int, bool) {
	if h>>kindShift != t.kind {
		return 0, false
	}
	i := int(h&(1<<kindShift-1)) - 1
	return i, i >= 0 && i < len(t.objs) && t.used[i]
}

func (t *table[T]) get(h uintptr) (T, bool) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	i, ok := t.index(h)
	if !ok {
		var zero T
		return zero, false
	}
	return t.objs[i], true
}

// someLive returns one object of the table (the one of the lowest
// handle), if it has any.
func (t *table[T]) someLive() (T, bool) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	for i, used := range t.used {
		if used {
			return t.objs[i], true
		}
	}
	var zero T
	return zero, false
}

func (t *table[T]) remove(h uintptr) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if i, ok := t.index(h); ok {
		var zero T
		t.objs[i], t.used[i] = zero, false
		t.free = append(t.free, i)
	}
}
