package fabric

import (
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mpigo/mpi/internal/wire"
)

func TestSpinFor(t *testing.T) {
	for _, c := range []struct {
		in   int64
		want time.Duration
	}{{0, DefaultSpin}, {-1, 0}, {int64(time.Millisecond), time.Millisecond}} {
		if got := SpinFor(c.in); got != c.want {
			t.Errorf("SpinFor(%d) = %v, want %v", c.in, got, c.want)
		}
	}
}

func TestCheckFrame(t *testing.T) {
	for _, c := range []struct {
		name string
		f    wire.Frame
		want string // in the error; "" for none
	}{
		{"ok", wire.Frame{To: 1, Payload: make([]byte, 8)}, ""},
		{"negative rank", wire.Frame{To: -1}, "ucx: no rank -1"},
		{"rank past the job", wire.Frame{To: 2}, "ucx: no rank 2"},
		{"payload too large", wire.Frame{To: 0, Payload: make([]byte, wire.MaxPayload+1)}, "exceeds"},
	} {
		err := CheckFrame("ucx", c.f, 2)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: error %v, want one with %q", c.name, err, c.want)
		}
	}
}

func TestReport(t *testing.T) {
	Report([]Failure{{1, errors.New("x")}}, nil) // no handler: nothing
	var got []int
	Report([]Failure{{1, errors.New("x")}, {3, errors.New("y")}}, func(p int, err error) { got = append(got, p) })
	if len(got) != 2 || got[0] != 1 || got[1] != 3 {
		t.Fatalf("reported %v, want [1 3]", got)
	}
}

func TestQueuesInOrder(t *testing.T) {
	q := NewQueues[int](3)
	if q.Busy() {
		t.Fatal("new queues are busy")
	}
	ready := map[int]bool{10: true, 11: true, 20: true, 30: false, 31: true}
	for _, x := range []struct{ peer, v int }{{1, 10}, {2, 20}, {1, 11}, {0, 30}, {0, 31}, {1, 12}} {
		q.Push(x.peer, x.v)
	}
	var took []int
	q.Take(func(v int) bool { return ready[v] }, func(p, v int) { took = append(took, p*100+v) })
	// Peer 1 up to 12 (not ready), peer 2 all, peer 0 nothing (30 blocks 31).
	want := []int{110, 111, 220}
	if len(took) != len(want) {
		t.Fatalf("took %v, want %v", took, want)
	}
	for i := range want {
		if took[i] != want[i] {
			t.Fatalf("took %v, want %v", took, want)
		}
	}
	if got := q.Active(); len(got) != 2 {
		t.Fatalf("active peers %v, want 2 of them (0 and 1)", got)
	}
	if got := q.Peer(0); len(got) != 2 || got[0] != 30 {
		t.Fatalf("peer 0 holds %v", got)
	}
	q.Take(func(int) bool { return true }, func(int, int) {})
	if q.Busy() {
		t.Fatal("queues busy after everything was taken")
	}
	q.Push(2, 1)
	q.Reset()
	if q.Busy() || len(q.Peer(2)) != 0 {
		t.Fatal("queues busy after Reset")
	}
}

func TestEndpointsOnce(t *testing.T) {
	var made, asked atomic.Int32
	closed := false
	e := Endpoints{Name: "ofi", What: "endpoint name",
		Addrs: func(peer int) ([]byte, error) {
			asked.Add(1)
			switch peer {
			case 1:
				return []byte{1}, nil
			case 2:
				return nil, nil
			}
			return nil, errors.New("no such key")
		},
		Closed: func() bool { return closed },
		Make:   func(peer int, addr []byte) error { made.Add(1); return nil }}
	e.Init(4)
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := e.Ensure(1); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if made.Load() != 1 || asked.Load() != 1 || !e.Has(1) {
		t.Fatalf("8 Ensure of one peer made %d endpoints from %d look-ups", made.Load(), asked.Load())
	}
	for _, c := range []struct {
		peer int
		want string
	}{{2, "ofi: no endpoint name for rank 2: empty address"}, {3, "ofi: no endpoint name for rank 3: no such key"}} {
		if err := e.Ensure(c.peer); err == nil || err.Error() != c.want {
			t.Errorf("Ensure(%d) = %v, want %q", c.peer, err, c.want)
		}
		if e.Has(c.peer) {
			t.Errorf("peer %d has an endpoint after a failure", c.peer)
		}
	}
	closed = true
	if err := e.Ensure(0); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("Ensure after close: %v", err)
	}
	if err := e.Ensure(1); err != nil {
		t.Errorf("Ensure of a made endpoint after close: %v", err)
	}
}

// The loop naps while a wait polls, sleeping in the library only once no
// waiter has marked; EndWait and Nudge wake it. The waiter here marks just
// before each of the loop's steps, as one that polls without pause would.
func TestLoopNapsForWaiters(t *testing.T) {
	var steps, sleeps, wakes atomic.Int32
	var marking atomic.Bool
	marking.Store(true)
	wake := make(chan struct{}, 1)
	l := NewLoop(0, func() {
		wakes.Add(1)
		select {
		case wake <- struct{}{}:
		default:
		}
	})
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		l.Run(stop, func() bool {
			if marking.Load() {
				l.MarkWait()
			}
			steps.Add(1)
			return false
		}, func() {
			sleeps.Add(1)
			select {
			case <-wake:
			case <-time.After(time.Second):
			}
		})
	}()
	start := time.Now()
	time.Sleep(20 * time.Millisecond)
	// Each nap lasts WaiterNap at least.
	if n, most := steps.Load(), int32(time.Since(start)/WaiterNap)+2; n > most {
		t.Errorf("the loop stepped %d times in %v while a waiter polled: more than one step a nap (%d)", n, time.Since(start), most)
	}
	if n := sleeps.Load(); n != 0 {
		t.Errorf("the loop slept in the library %d times while a waiter polled", n)
	}
	// Every step but the last took a mark off to nap, and counted it
	// (the loop goes on meanwhile: steps before and after).
	before := uint64(steps.Load())
	n := l.Naps()
	after := uint64(steps.Load())
	if n+1 < before || n > after || n == 0 {
		t.Errorf("%d naps counted for %d-%d steps, each marked before it", n, before, after)
	}
	marking.Store(false)
	l.EndWait()
	deadline := time.Now().Add(5 * time.Second)
	for sleeps.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if sleeps.Load() == 0 {
		t.Fatal("the loop never slept in the library after the waiter left")
	}
	for !l.sleeping.Load() && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	l.Nudge()
	if wakes.Load() == 0 {
		t.Error("Nudge of a sleeping loop did not wake it")
	}
	close(stop)
	l.Nudge()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after stop")
	}
}

// A loop marked by a polling waiter does not step before its nap is
// over: a step of its own would contend with the waiter's for the
// transport's lock (each poll of a wait marks the loop again, so while
// the waiter polls, the loop only naps).
func TestLoopLeavesTheWaiterAlone(t *testing.T) {
	l := NewLoop(time.Hour, func() {})
	l.MarkWait()
	marked := make(chan bool, 1)
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		l.Run(stop, func() bool {
			select {
			case marked <- l.waiting.Load():
			default:
			}
			return false
		}, func() {})
	}()
	select {
	case m := <-marked:
		if m {
			t.Error("the loop stepped while a waiter's mark was on it; want a nap first")
		}
	case <-time.After(5 * time.Second):
		t.Error("the loop did not step within 5s of a nap")
	}
	close(stop)
	<-done
}

// Await returns the send's result, and ticks say whether the delivering
// goroutine is stuck (holds dmu).
func TestAwait(t *testing.T) {
	var dmu sync.Mutex
	done := make(chan error, 1)
	var stuck, free atomic.Int32
	dmu.Lock()
	go func() {
		time.Sleep(10 * time.Millisecond)
		dmu.Unlock()
		time.Sleep(10 * time.Millisecond)
		done <- errors.New("over")
	}()
	err := Await(done, &dmu, func(s bool) {
		if s {
			stuck.Add(1)
		} else {
			free.Add(1)
		}
	})
	if err == nil || err.Error() != "over" {
		t.Fatalf("Await = %v", err)
	}
	if stuck.Load() == 0 || free.Load() == 0 {
		t.Errorf("ticks: %d stuck, %d free; want some of each", stuck.Load(), free.Load())
	}
}
