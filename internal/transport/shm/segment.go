package shm

import (
	"fmt"
	"os"
	"strconv"
	"sync/atomic"
	"time"
)

// Segments are plain shared mappings that a rank creates and its peers on
// the node map too, for memory that several processes address directly
// (one-sided windows). A segment lives in the job's folder under the
// rank's inbox name plus a suffix, so that whatever removes the job's
// inboxes (RemoveJob) removes its segments too.

// SegmentName is the file of rank's segment called suffix in t's job.
func (t *Transport) SegmentName(rank int, suffix string) string {
	return Name(t.cfg.Dir, t.cfg.JobID, rank) + "-" + suffix
}

// SegmentSuffix names segment id of kind (for example "w" and a window's
// context id).
func SegmentSuffix(kind string, id uint64) string { return kind + strconv.FormatUint(id, 10) }

// CreateSegment creates and maps a zeroed segment of size bytes, mode 0600.
func CreateSegment(name string, size int) ([]byte, error) {
	if size <= 0 {
		return nil, fmt.Errorf("shm: segment %s: size %d", name, size)
	}
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, fmt.Errorf("shm: creating segment: %w", err)
	}
	defer f.Close()
	if err := f.Truncate(int64(size)); err != nil {
		os.Remove(name)
		return nil, fmt.Errorf("shm: sizing segment %s (%d bytes): %w", name, size, err)
	}
	mem, err := mapFile(f, size)
	if err != nil {
		os.Remove(name)
		return nil, fmt.Errorf("shm: mapping segment %s: %w", name, err)
	}
	return mem, nil
}

// OpenSegment maps the segment a peer created; it must be size bytes long.
func OpenSegment(name string, size int) ([]byte, error) {
	f, err := os.OpenFile(name, os.O_RDWR, 0)
	if err != nil {
		return nil, fmt.Errorf("shm: opening segment: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("shm: segment %s: %w", name, err)
	}
	if st.Size() != int64(size) {
		return nil, fmt.Errorf("shm: segment %s has %d bytes, want %d", name, st.Size(), size)
	}
	mem, err := mapFile(f, size)
	if err != nil {
		return nil, fmt.Errorf("shm: mapping segment %s: %w", name, err)
	}
	return mem, nil
}

// RemoveSegment unlinks a segment's file; mappings stay valid.
func RemoveSegment(name string) { os.Remove(name) }

// Retire releases the shared memory of a mapping made by CreateSegment or
// OpenSegment but keeps its addresses valid: they read as zeros from then
// on, and writes to them go to private pages of this process. A slice a
// program kept into the mapping (a window's Local after Free) then never
// faults; the address range stays reserved for the life of the process,
// costing address space but no memory until written. Should the system
// refuse, the mapping is left as it is (still valid, still shared).
func Retire(mem []byte) error {
	if len(mem) == 0 {
		return nil
	}
	return retire(mem)
}

// MapPrivate maps size bytes of zeroed memory of this process alone,
// outside Go's heap (memory a C program may keep a pointer to), for the
// blocks of MPI_Alloc_mem that no peer maps. It fails where the platform
// has no mappings; Unmap releases it.
func MapPrivate(size int) ([]byte, error) {
	if size <= 0 {
		return nil, fmt.Errorf("shm: private mapping of %d bytes", size)
	}
	return mapAnon(size)
}

// Unmap releases a mapping made by CreateSegment or OpenSegment.
func Unmap(mem []byte) error {
	if len(mem) == 0 {
		return nil
	}
	unmap(mem)
	return nil
}

// SleepOn sleeps while the word w of a segment holds val, at most d (a
// futex shared between processes where the platform has one). It may
// return early; the caller looks at its condition again. Whoever changes
// what the sleeper waits for clears the word and calls WakeOn.
func SleepOn(w *atomic.Uint32, val uint32, d time.Duration) { futexWait(w, val, d) }

// WakeOn wakes the sleepers of SleepOn on w, whose word its caller has
// changed (on platforms without a futex, the change is the wake-up).
func WakeOn(w *atomic.Uint32) { futexWake(w) }
