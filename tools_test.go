package mpi_test

import (
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mpigo/mpi"
)

// pvarHandles allocates a handle for each named variable on c.
func pvarHandles(s *mpi.PvarSession, c *mpi.Comm, names ...string) ([]*mpi.PvarHandle, error) {
	var hs []*mpi.PvarHandle
	for _, n := range names {
		i, err := mpi.PvarIndex(n)
		if err != nil {
			return nil, err
		}
		h, err := s.Handle(i, c)
		if err != nil {
			return nil, err
		}
		hs = append(hs, h)
	}
	return hs, nil
}

// TestPvarTraffic sends 10 messages of 100 bytes from rank 0 to rank 1
// over every transport and reads the per-peer counters on both sides.
func TestPvarTraffic(t *testing.T) {
	matrix(t, 2, func(world *mpi.Comm) error {
		s := mpi.NewPvarSession()
		defer s.Free()
		hs, err := pvarHandles(s, world, "bytes_sent", "messages_sent", "bytes_received", "messages_received")
		if err != nil {
			return err
		}
		for _, h := range hs {
			if h.Count() != 2 {
				return fmt.Errorf("%s: count %d, want 2", h.Info().Name, h.Count())
			}
		}
		if err := s.StartAll(); err != nil {
			return err
		}
		// Rank 1 counts from zero before rank 0 sends; rank 0 starts from
		// zero after it has heard so.
		if world.Rank() == 1 {
			if err := s.ResetAll(); err != nil {
				return err
			}
			if err := mpi.Send(world, int64(1), 0, 5); err != nil {
				return err
			}
		} else {
			if _, _, err := mpi.Recv[int64](world, 1, 5); err != nil {
				return err
			}
			if err := s.ResetAll(); err != nil {
				return err
			}
		}
		msg := make([]byte, 100)
		read := func() ([][]uint64, error) {
			var vs [][]uint64
			for _, h := range hs {
				v, err := h.Read()
				if err != nil {
					return nil, err
				}
				vs = append(vs, v)
			}
			return vs, nil
		}
		if world.Rank() == 0 {
			for i := 0; i < 10; i++ {
				if err := mpi.Send(world, msg, 1, 3); err != nil {
					return err
				}
			}
			vs, err := read() // before anything else leaves this rank
			if err != nil {
				return err
			}
			want := fmt.Sprint([][]uint64{{0, 1000}, {0, 10}, {0, 0}, {0, 0}})
			if got := fmt.Sprint(vs); got != want {
				return fmt.Errorf("rank 0: sent/received counters %s, want %s", got, want)
			}
			// Rank 1 sends nothing more until it hears this.
			return mpi.Send(world, 0, 1, 4)
		}
		for i := 0; i < 10; i++ {
			if _, err := mpi.RecvInto(world, msg, 0, 3); err != nil {
				return err
			}
		}
		// Rank 0's word that it has read its counters (8 bytes) may come
		// at any moment: count it too.
		if _, _, err := mpi.Recv[int](world, 0, 4); err != nil {
			return err
		}
		vs, err := read()
		if err != nil {
			return err
		}
		want := fmt.Sprint([][]uint64{{8, 0}, {1, 0}, {1008, 0}, {11, 0}})
		if got := fmt.Sprint(vs); got != want {
			return fmt.Errorf("rank 1: sent/received counters %s, want %s", got, want)
		}
		// Stopped, a counter keeps its value and counts no more.
		if err := s.StopAll(); err != nil {
			return err
		}
		r, err := mpi.Isend(world, 1, 1, 6) // to itself
		if err != nil {
			return err
		}
		if _, _, err := mpi.Recv[int](world, 1, 6); err != nil {
			return err
		}
		if _, err := r.Wait(); err != nil {
			return err
		}
		v, err := hs[1].Read()
		if err != nil {
			return err
		}
		if v[0] != 1 || v[1] != 0 {
			return fmt.Errorf("rank 1: stopped messages_sent counted %v", v)
		}
		v, err = hs[2].ReadReset()
		if err != nil || v[0] != 1008 {
			return fmt.Errorf("rank 1: ReadReset of bytes_received = %v, %v; want 1008", v, err)
		}
		if v, _ = hs[2].Read(); v[0] != 0 {
			return fmt.Errorf("rank 1: bytes_received after ReadReset = %v", v)
		}
		return nil
	})
}

// TestPvarQueues reads the queue levels around messages that wait
// unexpected and a receive that waits posted.
func TestPvarQueues(t *testing.T) {
	matrix(t, 2, func(world *mpi.Comm) error {
		s := mpi.NewPvarSession()
		defer s.Free()
		hs, err := pvarHandles(s, world, "posted_queue_length", "unexpected_queue_length")
		if err != nil {
			return err
		}
		posted, unexp := hs[0], hs[1]
		level := func(h *mpi.PvarHandle) uint64 {
			v, err := h.Read()
			if err != nil || len(v) != 1 {
				return 1 << 60
			}
			return v[0]
		}
		if world.Rank() == 0 {
			// Isend: a rendezvous Send would wait for its receive.
			var reqs []mpi.Waiter
			for i := 0; i < 3; i++ {
				r, err := mpi.Isend(world, []byte("unexpected"), 1, 7)
				if err != nil {
					return err
				}
				reqs = append(reqs, r)
			}
			if _, _, err := mpi.Recv[int](world, 1, 8); err != nil {
				return err
			}
			if err := mpi.Send(world, 42, 1, 9); err != nil {
				return err
			}
			return mpi.WaitAll(reqs...)
		}
		deadline := time.Now().Add(20 * time.Second)
		for level(unexp) < 3 && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
		if n := level(unexp); n != 3 {
			return fmt.Errorf("unexpected queue length %d, want 3", n)
		}
		if n := level(posted); n != 0 {
			return fmt.Errorf("posted queue length %d before Irecv, want 0", n)
		}
		p, err := mpi.Irecv[int](world, 0, 9)
		if err != nil {
			return err
		}
		if n := level(posted); n != 1 {
			return fmt.Errorf("posted queue length %d after Irecv, want 1", n)
		}
		if err := mpi.Send(world, 0, 0, 8); err != nil {
			return err
		}
		if v, _, err := p.Wait(); err != nil || v != 42 {
			return fmt.Errorf("Irecv: %v, %v", v, err)
		}
		if n := level(posted); n != 0 {
			return fmt.Errorf("posted queue length %d after the receive, want 0", n)
		}
		for i := 0; i < 3; i++ {
			if _, _, err := mpi.Recv[[]byte](world, 0, 7); err != nil {
				return err
			}
		}
		if n := level(unexp); n != 0 {
			return fmt.Errorf("unexpected queue length %d after the receives, want 0", n)
		}
		return nil
	})
}

// TestPvarWaitTime times a receive that waits for a late sender.
func TestPvarWaitTime(t *testing.T) {
	err := mpi.Run(2, func(world *mpi.Comm) error {
		s := mpi.NewPvarSession()
		defer s.Free()
		hs, err := pvarHandles(s, world, "wait_time")
		if err != nil {
			return err
		}
		if err := hs[0].Start(); err != nil {
			return err
		}
		if world.Rank() == 0 {
			time.Sleep(30 * time.Millisecond)
			return mpi.Send(world, 1, 1, 0)
		}
		if _, _, err := mpi.Recv[int](world, 0, 0); err != nil {
			return err
		}
		if err := hs[0].Stop(); err != nil {
			return err
		}
		v, err := hs[0].Read()
		if err != nil {
			return err
		}
		if d := time.Duration(v[0]); d < 10*time.Millisecond || d > 10*time.Second {
			return fmt.Errorf("wait_time %v, want about 30ms", d)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestPvarErrors checks the errors MPI_T defines for misuse.
func TestPvarErrors(t *testing.T) {
	if _, err := mpi.PvarIndex("no_such_variable"); !errors.Is(err, mpi.ErrToolName) {
		t.Errorf("PvarIndex of an unknown name: %v", err)
	}
	infos := mpi.Pvars()
	for i, in := range infos {
		if in.Index != i || in.Name == "" || in.Desc == "" || in.Bind != mpi.BindComm {
			t.Errorf("pvar %d: %+v", i, in)
		}
	}
	err := mpi.Run(1, func(world *mpi.Comm) error {
		s := mpi.NewPvarSession()
		if _, err := s.Handle(len(infos), world); !errors.Is(err, mpi.ErrToolIndex) {
			return fmt.Errorf("Handle with a bad index: %v", err)
		}
		if _, err := s.Handle(0, nil); !errors.Is(err, mpi.ErrComm) {
			return fmt.Errorf("Handle without a communicator: %v", err)
		}
		hs, err := pvarHandles(s, world, "unexpected_queue_length", "messages_sent")
		if err != nil {
			return err
		}
		if err := hs[0].Start(); !errors.Is(err, mpi.ErrPvarNoStartStop) {
			return fmt.Errorf("Start of a level: %v", err)
		}
		if err := hs[0].Reset(); !errors.Is(err, mpi.ErrPvarNoWrite) {
			return fmt.Errorf("Reset of a level: %v", err)
		}
		if err := hs[1].Write(make([]uint64, hs[1].Count()+1)); !errors.Is(err, mpi.ErrCount) {
			return fmt.Errorf("Write of the wrong count: %v", err)
		}
		if err := hs[1].Write([]uint64{5}); err != nil {
			return err
		}
		if v, err := hs[1].Read(); err != nil || v[0] != 5 {
			return fmt.Errorf("Read after Write(5) = %v, %v", v, err)
		}
		if err := hs[1].Free(); err != nil {
			return err
		}
		if _, err := hs[1].Read(); !errors.Is(err, mpi.ErrToolHandle) {
			return fmt.Errorf("Read after Free: %v", err)
		}
		if err := s.Free(); err != nil {
			return err
		}
		if _, err := hs[0].Read(); !errors.Is(err, mpi.ErrToolHandle) {
			return fmt.Errorf("Read after the session's Free: %v", err)
		}
		if err := s.Free(); !errors.Is(err, mpi.ErrToolHandle) {
			return fmt.Errorf("second Free of a session: %v", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestCvars(t *testing.T) {
	infos := mpi.Cvars()
	if len(infos) == 0 {
		t.Fatal("no control variables")
	}
	for i, in := range infos {
		if in.Index != i || !strings.HasPrefix(in.Name, "MPIGO_") || in.Desc == "" || in.Type == nil {
			t.Errorf("cvar %d: %+v", i, in)
		}
		v, err := mpi.CvarAt(i)
		if err != nil {
			t.Fatal(err)
		}
		x, err := v.Read()
		if err != nil {
			t.Fatalf("%s: %v", in.Name, err)
		}
		if got := fmt.Sprintf("%T", x); got != in.Type.String() {
			t.Errorf("%s: Read gives a %s, Info says %s", in.Name, got, in.Type)
		}
		if j, err := mpi.CvarIndex(in.Name); err != nil || j != i {
			t.Errorf("CvarIndex(%s) = %d, %v; want %d", in.Name, j, err, i)
		}
	}
	if _, err := mpi.LookupCvar("MPIGO_NO_SUCH"); !errors.Is(err, mpi.ErrToolName) {
		t.Errorf("LookupCvar of an unknown name: %v", err)
	}
	if _, err := mpi.CvarAt(-1); !errors.Is(err, mpi.ErrToolIndex) {
		t.Errorf("CvarAt(-1): %v", err)
	}

	// A write reaches the next job, and is refused while a job runs.
	v, err := mpi.LookupCvar("MPIGO_EAGER_LIMIT")
	if err != nil {
		t.Fatal(err)
	}
	old, had := os.LookupEnv("MPIGO_EAGER_LIMIT")
	defer func() {
		if had {
			os.Setenv("MPIGO_EAGER_LIMIT", old)
		} else {
			os.Unsetenv("MPIGO_EAGER_LIMIT")
		}
	}()
	if err := v.Write("not a number"); !errors.Is(err, mpi.ErrArg) {
		t.Errorf("Write of a bad value: %v", err)
	}
	if err := v.Write(true); !errors.Is(err, mpi.ErrArg) {
		t.Errorf("Write of a bool to an int variable: %v", err)
	}
	if err := v.Write(1234); err != nil {
		t.Fatal(err)
	}
	if x, _ := v.Read(); x != 1234 {
		t.Errorf("Read after Write(1234) = %v", x)
	}
	if got := mpi.DefaultConfig().EagerLimit; got != 1234 {
		t.Errorf("DefaultConfig().EagerLimit = %d after the write, want 1234", got)
	}
	err = mpi.Run(1, func(*mpi.Comm) error {
		if err := v.Write(4321); !errors.Is(err, mpi.ErrCvarSetNotNow) {
			return fmt.Errorf("Write during a job: %v", err)
		}
		return nil
	})
	if err != nil {
		t.Error(err)
	}
	if c, _ := mpi.LookupCvar("MPIGO_COLL_ALLREDUCE"); c == nil {
		t.Error("no MPIGO_COLL_ALLREDUCE")
	} else if err := c.Write("ring"); !errors.Is(err, mpi.ErrCvarSetNever) {
		t.Errorf("Write of a collective's rules: %v", err)
	}
	if c, _ := mpi.LookupCvar("MPIGO_TRANSPORT"); c == nil {
		t.Error("no MPIGO_TRANSPORT")
	} else if err := c.Write("carrier-pigeon"); !errors.Is(err, mpi.ErrArg) {
		t.Errorf("Write of a value outside the enumeration: %v", err)
	}
}

func TestCvarCategories(t *testing.T) {
	cats := mpi.Categories()
	if len(cats) == 0 || cats[0].Name != "mpigo" {
		t.Fatalf("categories %+v", cats)
	}
	// Every variable is in exactly one category below the root.
	cv := map[int]int{}
	pv := map[int]int{}
	for i, c := range cats {
		if c.Index != i {
			t.Errorf("category %d has index %d", i, c.Index)
		}
		if j, err := mpi.CategoryIndex(c.Name); err != nil || j != i {
			t.Errorf("CategoryIndex(%s) = %d, %v", c.Name, j, err)
		}
		for _, k := range c.Cvars {
			cv[k]++
		}
		for _, k := range c.Pvars {
			pv[k]++
		}
	}
	if len(cats[0].Categories) != len(cats)-1 {
		t.Errorf("root holds %d categories, want %d", len(cats[0].Categories), len(cats)-1)
	}
	for i, in := range mpi.Cvars() {
		if cv[i] != 1 {
			t.Errorf("cvar %s is in %d categories", in.Name, cv[i])
		}
	}
	for i, in := range mpi.Pvars() {
		if pv[i] != 1 {
			t.Errorf("pvar %s is in %d categories", in.Name, pv[i])
		}
	}
	if _, err := mpi.CategoryIndex("nope"); !errors.Is(err, mpi.ErrToolName) {
		t.Errorf("CategoryIndex of an unknown name: %v", err)
	}
	if a, b := mpi.CategoriesChanged(), mpi.CategoriesChanged(); a != b {
		t.Error("CategoriesChanged changed")
	}
}

// recorder is a Profiler that records each rank's calls in order.
type recorder struct {
	mu     sync.Mutex
	calls  map[int][]string
	open   map[*mpi.Call]bool
	errs   []string
	levels []int
}

func newRecorder() *recorder {
	return &recorder{calls: map[int][]string{}, open: map[*mpi.Call]bool{}}
}

func (r *recorder) Enter(c *mpi.Call) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := c.Name
	if c.Peer != mpi.Undefined {
		s += fmt.Sprintf("(%d,%d)", c.Peer, c.Tag)
	}
	r.calls[c.Rank] = append(r.calls[c.Rank], s)
	r.open[c] = true
	c.Data = s
}

func (r *recorder) Exit(c *mpi.Call, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.open[c] || c.Data != c.Name && !strings.HasPrefix(c.Data.(string), c.Name+"(") {
		r.errs = append(r.errs, "Exit without its Enter: "+c.Name)
	}
	delete(r.open, c)
	if err != nil {
		r.calls[c.Rank] = append(r.calls[c.Rank], "error:"+c.Name)
	}
}

func (r *recorder) Pcontrol(level int) { r.levels = append(r.levels, level) }

// TestProfilerSeesEachCall runs a small program under a Profiler and
// checks each rank's calls, in order, with nothing nested reported.
func TestProfilerSeesEachCall(t *testing.T) {
	rec := newRecorder()
	if old := mpi.SetProfiler(rec); old != nil {
		t.Fatalf("a profiler was set already: %v", old)
	}
	err := mpi.Run(2, func(world *mpi.Comm) error {
		peer := 1 - world.Rank()
		if world.Rank() == 0 {
			if err := mpi.Send(world, 1.5, peer, 1); err != nil {
				return err
			}
		} else if _, _, err := mpi.Recv[float64](world, peer, 1); err != nil {
			return err
		}
		if _, err := mpi.Allreduce(world, world.Rank(), mpi.Sum[int]()); err != nil {
			return err
		}
		d, err := world.Dup()
		if err != nil {
			return err
		}
		s, err := d.Split(0, world.Rank())
		if err != nil {
			return err
		}
		p, err := mpi.Irecv[int](s, peer, 2)
		if err != nil {
			return err
		}
		r, err := mpi.Isend(s, 7, peer, 2)
		if err != nil {
			return err
		}
		if err := mpi.WaitAll(r, p); err != nil {
			return err
		}
		if _, err := s.Sendrecv([]byte{1}, 1, mpi.Byte, peer, 3, make([]byte, 1), 1, mpi.Byte, peer, 3); err != nil {
			return err
		}
		if err := mpi.Send(world, 0, 5, 0); err == nil { // no rank 5
			return fmt.Errorf("Send to rank 5 succeeded")
		}
		if err := s.Free(); err != nil {
			return err
		}
		if err := d.Free(); err != nil {
			return err
		}
		return mpi.Barrier(world)
	})
	mpi.SetProfiler(nil)
	if err != nil {
		t.Fatal(err)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	for _, e := range rec.errs {
		t.Error(e)
	}
	if len(rec.open) != 0 {
		t.Errorf("%d calls entered and never exited", len(rec.open))
	}
	first := map[int]string{0: "Send(1,1)", 1: "Recv(0,1)"}
	for rank := 0; rank < 2; rank++ {
		peer := 1 - rank
		want := []string{first[rank], "Allreduce", "Comm.Dup", "Comm.Split",
			fmt.Sprintf("Irecv(%d,2)", peer), fmt.Sprintf("Isend(%d,2)", peer), "WaitAll",
			fmt.Sprintf("Comm.Sendrecv(%d,3)", peer), "Send(5,0)", "error:Send",
			"Comm.Free", "Comm.Free", "Barrier"}
		if got := strings.Join(rec.calls[rank], " "); got != strings.Join(want, " ") {
			t.Errorf("rank %d saw\n\t%s\nwant\n\t%s", rank, got, strings.Join(want, " "))
		}
	}
	if mpi.CurrentProfiler() != nil {
		t.Error("SetProfiler(nil) left a profiler")
	}
}

// ExampleLookupCvar reads a control variable and describes it.
func ExampleLookupCvar() {
	v, err := mpi.LookupCvar("MPIGO_EAGER_LIMIT")
	if err != nil {
		fmt.Println(err)
		return
	}
	info := v.Info()
	x, _ := v.Read()
	fmt.Printf("%s (%s, scope %s): %v\n", info.Name, info.Type, info.Scope, x)
	fmt.Println(info.Desc)
	// Output:
	// MPIGO_EAGER_LIMIT (int, scope all-eq): 65536
	// largest message, in bytes, sent eagerly; larger ones use the rendezvous protocol
}

// callCounter is a Profiler that counts the calls by name.
type callCounter struct {
	mu sync.Mutex
	n  map[string]int
}

func (p *callCounter) Enter(c *mpi.Call) {
	p.mu.Lock()
	p.n[c.Name]++
	p.mu.Unlock()
}

func (p *callCounter) Exit(*mpi.Call, error) {}

func (p *callCounter) Pcontrol(int) {}

// ExampleSetProfiler counts the calls a small program makes.
func ExampleSetProfiler() {
	p := &callCounter{n: map[string]int{}}
	mpi.SetProfiler(p)
	defer mpi.SetProfiler(nil)
	mpi.Run(2, func(world *mpi.Comm) error {
		if world.Rank() == 0 {
			mpi.Send(world, "hello", 1, 0)
		} else {
			mpi.Recv[string](world, 0, 0)
		}
		_, err := mpi.Allreduce(world, 1, mpi.Sum[int]())
		return err
	})
	var names []string
	for name := range p.n {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		fmt.Println(name, p.n[name])
	}
	// Output:
	// Allreduce 2
	// Recv 1
	// Send 1
}
