package mpi_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mpigo/mpi"
)

func TestIdupWithInfo(t *testing.T) {
	err := mpi.Run(3, func(w *mpi.Comm) error {
		w.SetInfo(nil)
		in := mpi.NewInfo()
		in.Set("mpi_assert_no_any_tag", "true")
		d, r, err := w.IdupWithInfo(in)
		if err != nil {
			return err
		}
		in.Set("mpi_assert_no_any_tag", "false") // the copy is the duplicate's
		if _, err := r.Wait(); err != nil {
			return err
		}
		defer d.Free()
		if v, ok := d.Info().Get("mpi_assert_no_any_tag"); !ok || v != "true" {
			return errors.New("the duplicate lost its hint: " + v)
		}
		sum, err := mpi.Allreduce(d, d.Rank(), mpi.Sum[int]())
		if err != nil || sum != 3 {
			return errors.New("Allreduce on the duplicate")
		}
		_, _, err = (*mpi.Comm)(nil).IdupWithInfo(in)
		if !errors.Is(err, mpi.ErrComm) {
			return errors.New("nil communicator")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestInfoGetStringAndEnv(t *testing.T) {
	in := mpi.NewInfo()
	in.Set("k", "a value")
	if v, ok, err := in.GetString("k"); v != "a value" || !ok || err != nil {
		t.Errorf("GetString: %q %v %v", v, ok, err)
	}
	if v, ok, err := in.GetString("absent"); v != "" || ok || err != nil {
		t.Errorf("GetString of an absent key: %q %v %v", v, ok, err)
	}
	if _, _, err := in.GetString(""); !errors.Is(err, mpi.ErrArg) {
		t.Errorf("empty key: %v", err)
	}
	if _, _, err := in.GetString(strings.Repeat("k", mpi.MaxInfoKey+1)); !errors.Is(err, mpi.ErrArg) {
		t.Errorf("long key: %v", err)
	}
	if _, _, err := (*mpi.Info)(nil).GetString("k"); !errors.Is(err, mpi.ErrArg) {
		t.Errorf("nil Info: %v", err)
	}
	env, err := mpi.InfoCreateEnv(nil, []string{"prog", "-x", "1"})
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{"command": "prog", "argv": "-x 1", "thread_level": "MPI_THREAD_MULTIPLE"} {
		if v, _ := env.Get(k); v != want {
			t.Errorf("InfoCreateEnv %s = %q, want %q", k, v, want)
		}
	}
	if _, ok := env.Get("maxprocs"); ok {
		t.Error("maxprocs without a communicator")
	}
	mpi.Run(2, func(w *mpi.Comm) error {
		env, _ := mpi.InfoCreateEnv(w, nil)
		if v, _ := env.Get("maxprocs"); v != "2" {
			t.Errorf("maxprocs %q in a job of 2", v)
		}
		return nil
	})
	hw, err := mpi.GetHwResourceInfo()
	if v, _ := hw.Get("mpi_hw_resource_type"); err != nil || v != "mpi_shared_memory" {
		t.Errorf("GetHwResourceInfo: %q %v", v, err)
	}
}

// The status of a list of requests is looked at without completing them:
// a Wait afterwards still returns each one.
func TestRequestListGetStatus(t *testing.T) {
	err := mpi.Run(2, func(w *mpi.Comm) error {
		if w.Rank() == 1 {
			if _, _, err := mpi.Recv[int](w, 0, 9); err != nil { // go
				return err
			}
			for i := range 2 {
				if err := mpi.Send(w, 10+i, 0, i); err != nil {
					return err
				}
			}
			return nil
		}
		bufs := [][]int{{0}, {0}}
		var l mpi.RequestList
		for i := range 2 {
			r, err := mpi.IrecvInto(w, bufs[i], 1, i)
			if err != nil {
				return err
			}
			l = append(l, r)
		}
		l = append(l, nil) // a null request counts as done
		if ok, _, err := l.GetStatusAll(); ok || err != nil {
			return errors.New("GetStatusAll true before any message")
		}
		if _, ok, _, err := l.GetStatusAny(); ok || err != nil {
			return errors.New("GetStatusAny true before any message")
		}
		if idx, _, active, err := l.GetStatusSome(); len(idx) != 0 || !active || err != nil {
			return errors.New("GetStatusSome before any message")
		}
		if err := mpi.Send(w, 0, 1, 9); err != nil {
			return err
		}
		deadline := time.Now().Add(5 * time.Second)
		for {
			ok, sts, err := l.GetStatusAll()
			if err != nil {
				return err
			}
			if ok {
				if sts[0].Tag != 0 || sts[1].Tag != 1 || sts[1].Source != 1 {
					return errors.New("GetStatusAll statuses")
				}
				break
			}
			if time.Now().After(deadline) {
				return errors.New("GetStatusAll never true")
			}
			time.Sleep(time.Millisecond)
		}
		idx, sts, _, err := l.GetStatusSome()
		if err != nil || len(idx) != 2 || sts[1].Tag != 1 {
			return errors.New("GetStatusSome after the messages")
		}
		if i, ok, st, err := l.GetStatusAny(); !ok || err != nil || i != 0 || st.Tag != 0 {
			return errors.New("GetStatusAny after the messages")
		}
		// Nothing was completed: the waits still see the requests.
		sts, err = l.WaitAllStatus()
		if err != nil || sts[1].Tag != 1 || bufs[0][0] != 10 || bufs[1][0] != 11 {
			return errors.New("WaitAll after GetStatus")
		}
		if i, ok, _, err := l.GetStatusAny(); i != mpi.Undefined || !ok || err != nil {
			return errors.New("GetStatusAny of inactive requests")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// MPI-4.1's buffers: a Bsend takes its room from the communicator's
// buffer, else from its session's, else from the rank's; flushes wait for
// the buffered sends and leave the buffer attached.
func TestCommAndSessionBuffers(t *testing.T) {
	err := mpi.Run(2, func(w *mpi.Comm) error {
		peer := 1 - w.Rank()
		if err := mpi.Bsend(w, 1, peer, 0); !errors.Is(err, mpi.ErrBuffer) {
			return errors.New("Bsend without any buffer did not fail: " + errString(err))
		}
		d, err := w.Dup()
		if err != nil {
			return err
		}
		if err := d.AttachBuffer(make([]byte, 1024)); err != nil {
			return err
		}
		if err := mpi.Bsend(d, 10+w.Rank(), peer, 1); err != nil {
			return err
		}
		if err := d.FlushBuffer(); err != nil {
			return err
		}
		if v, _, err := mpi.Recv[int](d, peer, 1); err != nil || v != 10+peer {
			return errors.New("Bsend through the communicator's buffer")
		}
		if b, err := d.DetachBuffer(); err != nil || len(b) != 1024 {
			return errors.New("DetachBuffer")
		}
		if _, err := d.DetachBuffer(); !errors.Is(err, mpi.ErrBuffer) {
			return errors.New("second DetachBuffer: " + errString(err))
		}
		// The world's Bsend still has no buffer: the communicator's was
		// d's alone.
		if err := mpi.Bsend(w, 1, peer, 0); !errors.Is(err, mpi.ErrBuffer) {
			return errors.New("world used d's buffer")
		}
		s, err := w.SessionInit(nil, nil)
		if err != nil {
			return err
		}
		defer s.Finalize()
		if err := s.AttachBuffer(make([]byte, 1024)); err != nil {
			return err
		}
		g, _ := s.GroupFromPset(mpi.PsetWorld)
		sc, err := mpi.CommCreateFromGroup(g, "buffers", nil, nil)
		if err != nil {
			return err
		}
		defer sc.Free()
		if err := mpi.Bsend(sc, 20+w.Rank(), peer, 2); err != nil {
			return err
		}
		r, err := s.IflushBuffer()
		if err != nil {
			return err
		}
		if v, _, err := mpi.Recv[int](sc, peer, 2); err != nil || v != 20+peer {
			return errors.New("Bsend through the session's buffer")
		}
		if _, err := r.Wait(); err != nil {
			return err
		}
		if err := s.FlushBuffer(); err != nil {
			return err
		}
		if b, err := s.DetachBuffer(); err != nil || len(b) != 1024 {
			return errors.New("Session.DetachBuffer")
		}
		if err := w.BufferFlush(); err != nil {
			return err
		}
		r, err = w.BufferIflush()
		if err != nil {
			return err
		}
		_, err = r.Wait()
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// The process's buffer in the Sessions model (MPI_Buffer_attach without
// MPI_Init): Session.BufferAttach attaches the rank's buffer, the one
// Comm.BufferAttach does, which a Bsend on a session's communicator uses
// when neither it nor the session has one; it outlives the session.
func TestSessionProcessBuffer(t *testing.T) {
	err := mpi.Run(2, func(w *mpi.Comm) error {
		peer := 1 - w.Rank()
		s, err := w.SessionInit(nil, nil)
		if err != nil {
			return err
		}
		g, _ := s.GroupFromPset(mpi.PsetWorld)
		sc, err := mpi.CommCreateFromGroup(g, "procbuf", nil, nil)
		if err != nil {
			return err
		}
		defer sc.Free()
		if err := mpi.Bsend(sc, 1, peer, 0); !errors.Is(err, mpi.ErrBuffer) {
			return errors.New("Bsend without any buffer did not fail: " + errString(err))
		}
		buf := make([]byte, 1024)
		if err := s.BufferAttach(buf); err != nil {
			return err
		}
		if err := s.BufferAttach(buf); !errors.Is(err, mpi.ErrBuffer) {
			return errors.New("second Session.BufferAttach: " + errString(err))
		}
		if err := mpi.Bsend(sc, 30+w.Rank(), peer, 3); err != nil {
			return err
		}
		r, err := s.BufferIflush()
		if err != nil {
			return err
		}
		if v, _, err := mpi.Recv[int](sc, peer, 3); err != nil || v != 30+peer {
			return fmt.Errorf("Bsend through the process's buffer: %d, %v", v, err)
		}
		if _, err := r.Wait(); err != nil {
			return err
		}
		if err := s.BufferFlush(); err != nil {
			return err
		}
		// The session's own buffer is another: nothing to detach there.
		if _, err := s.DetachBuffer(); !errors.Is(err, mpi.ErrBuffer) {
			return errors.New("Session.DetachBuffer found the process's buffer: " + errString(err))
		}
		if err := s.Finalize(); err != nil {
			return err
		}
		// The rank's buffer outlives the session: world's detach gets it.
		if b, err := w.BufferDetach(); err != nil || len(b) != len(buf) {
			return fmt.Errorf("BufferDetach after the session: %d bytes, %v", len(b), err)
		}
		if err := s.BufferAttach(buf); !errors.Is(err, mpi.ErrSession) {
			return errors.New("BufferAttach on a finalized session: " + errString(err))
		}
		if _, err := s.BufferDetach(); !errors.Is(err, mpi.ErrSession) {
			return errors.New("BufferDetach on a finalized session: " + errString(err))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// Automatic buffers (MPI_BUFFER_AUTOMATIC): Bsends of any number and
// size go without a buffer of the user's; a second attach fails; detach
// waits for them and returns nil. Rank's, communicator's and session's.
func TestAutomaticBuffers(t *testing.T) {
	err := mpi.Run(2, func(w *mpi.Comm) error {
		peer := 1 - w.Rank()
		d, err := w.Dup()
		if err != nil {
			return err
		}
		defer d.Free()
		s, err := w.SessionInit(nil, nil)
		if err != nil {
			return err
		}
		defer s.Finalize()
		g, _ := s.GroupFromPset(mpi.PsetWorld)
		sc, err := mpi.CommCreateFromGroup(g, "auto", nil, nil)
		if err != nil {
			return err
		}
		defer sc.Free()
		cases := []struct {
			name   string
			c      *mpi.Comm
			attach func() error
			again  func() error
			detach func() ([]byte, error)
		}{
			{"rank", w, w.BufferAttachAutomatic, func() error { return w.BufferAttach(make([]byte, 64)) }, w.BufferDetach},
			{"communicator", d, d.AttachBufferAutomatic, d.AttachBufferAutomatic, d.DetachBuffer},
			{"session", sc, s.AttachBufferAutomatic, func() error { return s.AttachBuffer(make([]byte, 64)) }, s.DetachBuffer},
			{"rank, through the session", sc, s.BufferAttachAutomatic, func() error { return s.BufferAttach(make([]byte, 64)) }, s.BufferDetach},
		}
		for _, tc := range cases {
			if err := tc.attach(); err != nil {
				return fmt.Errorf("%s: attach automatic: %v", tc.name, err)
			}
			if err := tc.again(); !errors.Is(err, mpi.ErrBuffer) {
				return fmt.Errorf("%s: a second attach: %v, want ErrBuffer", tc.name, err)
			}
			const n, size = 20, 100000 // 2 MB buffered, no buffer given
			for i := range n {
				v := make([]int32, size)
				v[0], v[size-1] = int32(i), int32(w.Rank())
				if err := mpi.Bsend(tc.c, v, peer, i); err != nil {
					return fmt.Errorf("%s: Bsend %d: %v", tc.name, i, err)
				}
			}
			for i := range n {
				v, _, err := mpi.Recv[[]int32](tc.c, peer, i)
				if err != nil || len(v) != size || v[0] != int32(i) || v[size-1] != int32(peer) {
					return fmt.Errorf("%s: receive %d: %d elements, %v", tc.name, i, len(v), err)
				}
			}
			if b, err := tc.detach(); err != nil || b != nil {
				return fmt.Errorf("%s: detach: %d bytes, %v; want nil, nil", tc.name, len(b), err)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func errString(err error) string {
	if err == nil {
		return "nil"
	}
	return err.Error()
}

func TestRemoveErrorClassCodeString(t *testing.T) {
	class := mpi.AddErrorClass("my class")
	code, err := mpi.AddErrorCode(class, "my code")
	if err != nil {
		t.Fatal(err)
	}
	code2, err := mpi.AddErrorCode(class, "my second code")
	if err != nil {
		t.Fatal(err)
	}
	otherClass := mpi.AddErrorClass("other")
	steps := []struct {
		name    string
		call    func() error
		wantArg bool // the call fails with ErrArg
	}{
		{"class that has codes", func() error { return mpi.RemoveErrorClass(class) }, true},
		{"predefined class", func() error { return mpi.RemoveErrorClass(mpi.ErrTag) }, true},
		{"predefined class as a code", func() error { return mpi.RemoveErrorCode(mpi.ErrTag) }, true},
		{"string of a predefined class", func() error { return mpi.RemoveErrorString(mpi.ErrTag) }, true},
		{"an error not added", func() error { return mpi.RemoveErrorClass(errors.New("x")) }, true},
		{"nil", func() error { return mpi.RemoveErrorCode(nil) }, true},
		{"code as a class", func() error { return mpi.RemoveErrorClass(code) }, true},
		{"class as a code", func() error { return mpi.RemoveErrorCode(class) }, true},
		{"string of a code", func() error { return mpi.RemoveErrorString(code) }, false},
		{"code", func() error { return mpi.RemoveErrorCode(code) }, false},
		{"code twice", func() error { return mpi.RemoveErrorCode(code) }, true},
		{"string of a removed code", func() error { return mpi.RemoveErrorString(code) }, true},
		{"message of a removed code", func() error { return mpi.AddErrorString(code, "again") }, true},
		{"class with a code left", func() error { return mpi.RemoveErrorClass(class) }, true},
		{"second code", func() error { return mpi.RemoveErrorCode(code2) }, false},
		{"class", func() error { return mpi.RemoveErrorClass(class) }, false},
		{"class twice", func() error { return mpi.RemoveErrorClass(class) }, true},
		{"a code of a removed class", func() error { _, err := mpi.AddErrorCode(class, "late"); return err }, true},
		{"string of a class", func() error { return mpi.RemoveErrorString(otherClass) }, false},
		{"class without codes", func() error { return mpi.RemoveErrorClass(otherClass) }, false},
	}
	for _, s := range steps {
		err := s.call()
		if s.wantArg != errors.Is(err, mpi.ErrArg) || (!s.wantArg && err != nil) {
			t.Errorf("%s: err %v, want ErrArg %v", s.name, err, s.wantArg)
		}
	}
	for _, e := range []error{class, code, code2} {
		if got := mpi.ErrorClass(e); got != mpi.ErrOther {
			t.Errorf("ErrorClass of removed %v = %v, want ErrOther", e, got)
		}
		if s := mpi.ErrorString(e); !strings.Contains(s, "removed") {
			t.Errorf("ErrorString of a removed one: %q", s)
		}
	}
}

func TestRemoveErrorStringLeavesEmptyText(t *testing.T) {
	class := mpi.AddErrorClass("text")
	if err := mpi.RemoveErrorString(class); err != nil {
		t.Fatal(err)
	}
	if s := mpi.ErrorString(class); s != "" {
		t.Errorf("text after RemoveErrorString: %q", s)
	}
	if mpi.ErrorClass(class) != class {
		t.Error("the class went with its text")
	}
	if err := mpi.AddErrorString(class, "new"); err != nil || mpi.ErrorString(class) != "new" {
		t.Errorf("AddErrorString after RemoveErrorString: %v %q", err, mpi.ErrorString(class))
	}
}

func TestTypeGetValueIndex(t *testing.T) {
	freed, err := mpi.Float64.Dup()
	if err != nil {
		t.Fatal(err)
	}
	if err := freed.Free(); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		value, index, want *mpi.Datatype
		err                error
	}{
		{mpi.Float32, mpi.Int, mpi.Float32Loc, nil},
		{mpi.Float64, mpi.Int, mpi.Float64Loc, nil},
		{mpi.Int32, mpi.Int, mpi.Int32Loc, nil},
		{mpi.Int64, mpi.Int, mpi.Int64Loc, nil},
		{mpi.Int, mpi.Int, mpi.IntLoc, nil},
		{mpi.Float32, mpi.Int32, mpi.CFloatInt, nil},
		{mpi.Float64, mpi.Int32, mpi.CDoubleInt, nil},
		{mpi.Int64, mpi.Int32, mpi.CLongInt, nil},
		{mpi.Int32, mpi.Int32, mpi.C2Int, nil},
		{mpi.Int16, mpi.Int32, mpi.CShortInt, nil},
		{mpi.Int16, mpi.Int, nil, nil},
		{mpi.Uint8, mpi.Int32, nil, nil},
		{mpi.Float64, mpi.Float64, nil, nil},
		{nil, mpi.Int, nil, mpi.ErrType},
		{mpi.Float64, nil, nil, mpi.ErrType},
		{freed, mpi.Int, nil, mpi.ErrType},
	}
	for _, c := range cases {
		got, err := mpi.TypeGetValueIndex(c.value, c.index)
		if got != c.want || !errors.Is(err, c.err) || (c.err == nil && err != nil) {
			t.Errorf("TypeGetValueIndex(%v, %v) = %v, %v; want %v, %v", c.value, c.index, got, err, c.want, c.err)
		}
	}
}

func TestStatusErr(t *testing.T) {
	var st mpi.Status
	if st.Err() != nil {
		t.Fatal("a new status has an error")
	}
	st.SetErr(mpi.ErrTag)
	st.Source, st.Tag = 3, 42
	if st.Err() != mpi.ErrTag || st.Source != 3 || st.Tag != 42 {
		t.Errorf("status %+v", st)
	}
	// A call that completes several requests puts each one's error in its
	// status: a truncated receive beside a good one.
	err := mpi.Run(2, func(w *mpi.Comm) error {
		if w.Rank() == 0 {
			if err := mpi.Send(w, []int{1, 2, 3}, 1, 1); err != nil {
				return err
			}
			return mpi.Send(w, []int{4}, 1, 2)
		}
		small := make([]int, 1)
		ok := make([]int, 1)
		r1, err := mpi.IrecvInto(w, small, 0, 1)
		if err != nil {
			return err
		}
		r2, err := mpi.IrecvInto(w, ok, 0, 2)
		if err != nil {
			return err
		}
		sts, err := mpi.WaitAllStatus(r1, r2)
		if !errors.Is(err, mpi.ErrTruncate) {
			return errors.New("WaitAllStatus: want ErrTruncate, got " + errString(err))
		}
		if !errors.Is(sts[0].Err(), mpi.ErrTruncate) || sts[1].Err() != nil {
			return errors.New("statuses' errors: " + errString(sts[0].Err()) + ", " + errString(sts[1].Err()))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestSplitTypeHardware(t *testing.T) {
	info := func(v string) *mpi.Info {
		in := mpi.NewInfo()
		if v != "" {
			in.Set("mpi_hw_resource_type", v)
		}
		return in
	}
	cases := []struct {
		name      string
		perNode   int // 0: one node
		splitType int
		info      *mpi.Info
		wantNode  bool // each rank gets its node; else nil
	}{
		{"guided shared memory", 2, mpi.SplitTypeHWGuided, info(mpi.HWResourceShared), true},
		{"guided on one node", 0, mpi.SplitTypeHWGuided, info("mpi_shared_memory"), true},
		{"guided unknown level", 2, mpi.SplitTypeHWGuided, info("no such level"), false},
		{"guided without the key", 2, mpi.SplitTypeHWGuided, info(""), false},
		{"guided nil info", 2, mpi.SplitTypeHWGuided, nil, false},
		{"resource guided", 2, mpi.SplitTypeResourceGuided, info(mpi.HWResourceShared), true},
		{"resource guided unknown", 2, mpi.SplitTypeResourceGuided, info("core"), false},
		{"unguided over nodes", 2, mpi.SplitTypeHWUnguided, nil, true},
		{"unguided on one node", 0, mpi.SplitTypeHWUnguided, nil, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := mpi.DefaultConfig()
			cfg.RanksPerNode = c.perNode
			err := mpi.RunConfig(4, cfg, func(w *mpi.Comm) error {
				s, err := w.SplitType(c.splitType, 0, c.info)
				if err != nil {
					return err
				}
				if !c.wantNode {
					if s != nil {
						return errors.New("got a communicator, want nil")
					}
					return nil
				}
				if s == nil {
					return errors.New("got nil, want the node")
				}
				defer s.Free()
				want := 4
				if c.perNode > 0 {
					want = c.perNode
				}
				if s.Size() != want {
					return errors.New("wrong size of the node's communicator")
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
	err := mpi.Run(1, func(w *mpi.Comm) error {
		if _, err := w.SplitType(99, 0, nil); !errors.Is(err, mpi.ErrArg) {
			return errors.New("split type 99: want ErrArg, got " + errString(err))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
