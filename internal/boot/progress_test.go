package boot

import (
	"slices"
	"testing"
	"time"
)

// StartupProgress names the processes that have reached the first fence,
// and says when it has completed.
func TestStoreStartupProgress(t *testing.T) {
	s := newTestStore(t, 3, testSecret)
	if done, arrived := s.StartupProgress(); done || len(arrived) != 0 {
		t.Fatalf("before anyone: done %v, arrived %v", done, arrived)
	}
	fenced := make(chan error, 3)
	var kvs []KV
	for _, r := range []int{0, 2} {
		kv, err := Dial(s.Addr(), r, testSecret)
		if err != nil {
			t.Fatal(err)
		}
		defer kv.Close()
		kvs = append(kvs, kv)
		go func() { fenced <- kv.Fence() }()
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		done, arrived := s.StartupProgress()
		slices.Sort(arrived)
		if done {
			t.Fatal("the fence completed without rank 1")
		}
		if slices.Equal(arrived, []int{0, 2}) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("arrived %v, want [0 2]", arrived)
		}
		time.Sleep(10 * time.Millisecond)
	}
	kv, err := Dial(s.Addr(), 1, testSecret)
	if err != nil {
		t.Fatal(err)
	}
	defer kv.Close()
	if err := kv.Fence(); err != nil {
		t.Fatal(err)
	}
	for range kvs {
		if err := <-fenced; err != nil {
			t.Fatal(err)
		}
	}
	if done, _ := s.StartupProgress(); !done {
		t.Error("the fence completed, StartupProgress says not")
	}
}

// Departure tells a process that left in order (Close says bye) from one
// that took part and went without a word, and from one that never took
// part.
func TestStoreDeparture(t *testing.T) {
	s := newTestStore(t, 3, testSecret)
	for r := 0; r < 3; r++ {
		kv, err := Dial(s.Addr(), r, testSecret)
		if err != nil {
			t.Fatal(err)
		}
		switch r {
		case 0: // takes part, leaves in order
			if err := kv.Put("k0", "v"); err != nil {
				t.Fatal(err)
			}
			kv.Close()
		case 1: // takes part, goes without a word
			if err := kv.Put("k1", "v"); err != nil {
				t.Fatal(err)
			}
			kv.(*client).conn.Close()
		case 2: // never takes part
			defer kv.Close()
		}
	}
	for _, tc := range []struct {
		rank            int
		joined, inOrder bool
	}{{0, true, true}, {1, true, false}, {2, false, false}} {
		if j, o := s.Departure(tc.rank); j != tc.joined || o != tc.inOrder {
			t.Errorf("rank %d: joined %v in order %v, want %v %v", tc.rank, j, o, tc.joined, tc.inOrder)
		}
	}
}
