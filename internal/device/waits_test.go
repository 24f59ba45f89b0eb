package device

import (
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mpigo/mpi/internal/diag"
	"github.com/mpigo/mpi/internal/engine"
	"github.com/mpigo/mpi/internal/transport"
)

// parkOne starts a wait on a request nothing completes and returns when
// it has parked, listed too (a park marks the rank parked before it takes
// the lock to list the wait: a test that read Counts as soon as
// AnyParked held saw 0 parked on a loaded machine); the channel gets the
// wait's error.
func parkOne(t *testing.T, d *Device, r *engine.Request) chan error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- d.WaitRefIn(r, nil).Err }()
	listed := func() bool { n, _ := d.Blk.Counts(); return n > 0 }
	for deadline := time.Now().Add(5 * time.Second); !d.Blk.AnyParked() || !listed(); {
		if time.Now().After(deadline) {
			t.Fatal("the wait did not park")
		}
		time.Sleep(time.Millisecond)
	}
	return done
}

func TestWaitsCountParkedAndEnded(t *testing.T) {
	d := &Device{}
	r := &engine.Request{Context: 4, Peer: 1, Tag: 9}
	done := parkOne(t, d, r)
	if parked, ended := d.Blk.Counts(); parked != 1 || ended != 0 {
		t.Fatalf("counts %d parked, %d ended; want 1, 0", parked, ended)
	}
	r.FailOnce(errors.New("done"))
	<-done
	if parked, ended := d.Blk.Counts(); parked != 0 || ended != 1 {
		t.Fatalf("counts %d parked, %d ended; want 0, 1", parked, ended)
	}
	if d.Activity() != 1 {
		t.Fatalf("activity %d, want 1", d.Activity())
	}
}

func TestDescribeAllAsksTheParkedWaits(t *testing.T) {
	d := &Device{}
	var asked atomic.Int32
	d.InitWaits(func(r *engine.Request, env *Env) diag.Wait {
		asked.Add(1)
		return diag.Wait{Call: "Recv", Kind: diag.KindRecv, Peer: r.Peer, Tag: r.Tag}
	})
	r := &engine.Request{Context: 4, Peer: 1, Tag: 9}
	done := parkOne(t, d, r)
	ranks := DescribeAll([]*Device{d}, func(i int, gen uint64) diag.Rank {
		rk := diag.Rank{Rank: i}
		rk.Waits, rk.State = d.Blk.Snapshot(gen)
		return rk
	})
	if len(ranks) != 1 || ranks[0].State != diag.Blocked || len(ranks[0].Waits) != 1 {
		t.Fatalf("described %+v, want one blocked rank with one wait", ranks)
	}
	if w := ranks[0].Waits[0]; w.Call != "Recv" || w.Peer != 1 || w.Tag != 9 || asked.Load() == 0 {
		t.Fatalf("wait %+v (asked %d times), want Recv from 1 tag 9 described by the waiting goroutine", w, asked.Load())
	}
	r.FailOnce(errors.New("done"))
	<-done
}

func TestEndWaitsFailsOrphans(t *testing.T) {
	d := &Device{}
	done := parkOne(t, d, &engine.Request{Context: 7, Peer: 1, Tag: 3})
	d.Blk.Returned.Store(true)
	cause := errors.New("the job failed")
	EndWaits([]*Device{d}, cause)
	select {
	case err := <-done:
		if !errors.Is(err, cause) {
			t.Fatalf("the wait ended with %v, want %v", err, cause)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("an orphan wait stayed parked after EndWaits")
	}
}

func TestWatcherReportsOnlyAHang(t *testing.T) {
	for _, tt := range []struct {
		name string
		hang bool
	}{{"stuck", true}, {"returned", false}} {
		t.Run(tt.name, func(t *testing.T) {
			d := &Device{}
			r := &engine.Request{Context: 2, Peer: 0, Tag: 1}
			done := parkOne(t, d, r)
			if !tt.hang {
				r.FailOnce(errors.New("done"))
				<-done
				d.Blk.Returned.Store(true)
			}
			hung := make(chan string, 1)
			w := StartWatch([]*Device{d}, Watch{
				Threshold: 20 * time.Millisecond,
				Describe:  func() []diag.Rank { return nil },
				OnHang: func(_ []diag.Rank, why string) bool {
					hung <- why
					return false
				},
			})
			defer w.Close()
			select {
			case why := <-hung:
				if !tt.hang {
					t.Fatalf("a rank that returned was reported hung: %s", why)
				}
			case <-time.After(500 * time.Millisecond):
				if tt.hang {
					t.Fatal("a rank parked with no progress was not reported")
				}
			}
			if tt.hang {
				r.FailOnce(errors.New("done"))
				<-done
			}
		})
	}
}

func TestWatchOffWithoutThreshold(t *testing.T) {
	if StartWatch(nil, Watch{}) != nil {
		t.Fatal("a watcher started with no threshold")
	}
}

// TestFamilyWaitsForItsRunningMember: a stuck rank is not reported while
// a rank of another job of its family runs (it may be waiting for it), and
// is once that rank parks too.
func TestFamilyWaitsForItsRunningMember(t *testing.T) {
	fam := new(Family)
	d := &Device{}
	r := &engine.Request{Context: 2, Peer: 0, Tag: 1}
	done := parkOne(t, d, r)
	defer func() { r.FailOnce(errors.New("done")); <-done }()
	busy := &Device{} // a live rank that never parks: it computes
	wb := StartWatch([]*Device{busy}, Watch{Threshold: time.Hour, Family: fam})
	defer wb.Close()
	hung := make(chan string, 1)
	w := StartWatch([]*Device{d}, Watch{
		Threshold: 20 * time.Millisecond,
		Describe:  func() []diag.Rank { return nil },
		OnHang:    func(_ []diag.Rank, why string) bool { hung <- why; return false },
		Family:    fam,
	})
	defer w.Close()
	select {
	case why := <-hung:
		t.Fatalf("reported while the other job of its family runs: %s", why)
	case <-time.After(300 * time.Millisecond):
	}
	r2 := &engine.Request{Context: 2, Peer: 0, Tag: 1}
	done2 := parkOne(t, busy, r2)
	defer func() { r2.FailOnce(errors.New("done")); <-done2 }()
	select {
	case <-hung:
	case <-time.After(5 * time.Second):
		t.Fatal("not reported once every job of the family waits")
	}
}

// moverTransport is a transport that counts pieces it moves on its own.
type moverTransport struct {
	transport.Transport
	n atomic.Uint64
}

func (m *moverTransport) Moved() uint64 { return m.n.Load() }

// TestActivityCountsMovers: the pieces a transport reads of peers' memory
// count as progress, once per transport however many peers it reaches.
func TestActivityCountsMovers(t *testing.T) {
	mv := &moverTransport{}
	plain := &fakeTransport{}
	d := &Device{Size: 3}
	d.Tr = transport.NewRouter(3, func(peer int) transport.Transport {
		if peer == 0 {
			return plain
		}
		return mv
	})
	d.NoteRoutes()
	before := d.Activity()
	mv.n.Add(5)
	if got := d.Activity() - before; got != 5 {
		t.Fatalf("activity grew by %d after 5 pieces, want 5", got)
	}
}

// fakeTransport is a transport with no optional capability.
type fakeTransport struct{ transport.Transport }
