package shm

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// RemoveStale removes the inboxes of dead creators once they are old
// enough, and nothing else.
func TestRemoveStale(t *testing.T) {
	dir := t.TempDir()
	old := time.Now().Add(-time.Hour)
	inbox := func(name string, pid int, age time.Time, good bool) string {
		b := make([]byte, ctlSize)
		if good {
			copy(b, magic)
		} else {
			copy(b, "notshm!!")
		}
		binary.LittleEndian.PutUint64(b[offPid:], uint64(pid))
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		os.Chtimes(p, age, age)
		return p
	}
	dead := 1 << 30 // beyond any pid_max
	gone := []string{
		inbox("mpigo-11-0", dead, old, true),
		inbox("mpigo-11-1", 0, old, true), // never recorded its creator
	}
	kept := []string{
		inbox("mpigo-12-0", os.Getpid(), old, true), // its creator lives
		inbox("mpigo-13-0", dead, time.Now(), true), // too young
		inbox("mpigo-14-0", dead, old, false),       // not an inbox
		inbox("mpigo-x-0", dead, old, true),         // not an inbox's name
		inbox("other-15-0", dead, old, true),        // likewise
	}
	if n := RemoveStale(dir, time.Minute); n != len(gone) {
		t.Errorf("removed %d, want %d", n, len(gone))
	}
	for _, p := range gone {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s is still there", p)
		}
	}
	for _, p := range kept {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s was removed", p)
		}
	}
}
