package rma

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
)

func TestLockStates(t *testing.T) {
	var w atomic.Int64
	steps := []struct {
		name string
		do   func() bool
		want bool
		val  int64
	}{
		{"shared on free", func() bool { return TryShared(&w) }, true, 1},
		{"second shared", func() bool { return TryShared(&w) }, true, 2},
		{"exclusive while shared", func() bool { return TryExclusive(&w) }, false, 2},
		{"release one", func() bool { Unlock(&w, false); return true }, true, 1},
		{"release other", func() bool { Unlock(&w, false); return true }, true, 0},
		{"exclusive on free", func() bool { return TryExclusive(&w) }, true, Exclusive},
		{"shared while exclusive", func() bool { return TryShared(&w) }, false, Exclusive},
		{"exclusive twice", func() bool { return TryExclusive(&w) }, false, Exclusive},
		{"release exclusive", func() bool { Unlock(&w, true); return true }, true, 0},
	}
	for _, s := range steps {
		if got := s.do(); got != s.want || w.Load() != s.val {
			t.Fatalf("%s: got %v, word %d; want %v, %d", s.name, got, w.Load(), s.want, s.val)
		}
	}
}

func TestAccLockExcludes(t *testing.T) {
	var m atomic.Uint32
	n := 0
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 2000; i++ {
				if err := AccLock(&m, nil); err != nil {
					t.Error(err)
					return
				}
				n++ // the race detector and the count check the exclusion
				AccUnlock(&m)
			}
		}()
	}
	wg.Wait()
	if n != 8000 {
		t.Fatalf("count %d, want 8000", n)
	}
}

func TestLockGivesUp(t *testing.T) {
	var w atomic.Int64
	w.Store(Exclusive)
	gone := errors.New("target gone")
	calls := 0
	err := Lock(&w, false, func() error {
		calls++
		if calls == 3 {
			return gone
		}
		return nil
	})
	if !errors.Is(err, gone) || calls != 3 {
		t.Fatalf("Lock on a held word: %v after %d checks", err, calls)
	}
}
