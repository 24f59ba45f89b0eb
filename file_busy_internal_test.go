package mpi

import (
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestLongNonblockingIOIsNoHang: a rank parked in Wait for a
// non-blocking file access whose file system calls take longer than the
// hang threshold is waiting for its own I/O, not blocked in MPI: no hang
// report (MPICH's io/i_bigtype, 2 GiB written by MPI_File_iwrite_at_all
// and waited for by MPI_Wait, was stopped as hung after 10 s). Independent
// and collective (two-phase forced) accesses, writes and reads.
func TestLongNonblockingIOIsNoHang(t *testing.T) {
	cfg := DefaultConfig()
	cfg.HangReport = 200 * time.Millisecond
	var slow atomic.Bool
	fileIOHook = func() {
		if slow.Load() {
			time.Sleep(5 * cfg.HangReport / 2)
		}
	}
	defer func() { fileIOHook = nil }()
	for _, n := range []int{1, 2} {
		name := filepath.Join(t.TempDir(), "f")
		err := RunConfig(n, cfg, func(c *Comm) error {
			in := NewInfo()
			_ = in.Set("romio_cb_write", "enable")
			_ = in.Set("romio_cb_read", "enable")
			f, err := OpenFile(c, name, ModeCreate|ModeRdwr|ModeDeleteOnClose, in)
			if err != nil {
				return err
			}
			// Strided: rank r owns every n-th int32.
			vec, _ := NewContiguous(1, Int32)
			ft, _ := NewResized(vec, 0, 4*n)
			if err := ft.Commit(); err != nil {
				return err
			}
			if err := f.SetView(int64(4*c.Rank()), Int32, ft, "native", nil); err != nil {
				return err
			}
			buf := AsBytes([]int32{1, 2, 3, 4})
			if c.Rank() == 0 {
				slow.Store(true)
			}
			if err := c.Barrier(); err != nil {
				return err
			}
			for _, start := range []func() (*Request, error){
				func() (*Request, error) { return f.IwriteAt(0, buf, 4, Int32) },
				func() (*Request, error) { return f.IwriteAtAll(0, buf, 4, Int32) },
				func() (*Request, error) { return f.IreadAtAll(0, buf, 4, Int32) },
				func() (*Request, error) { return f.IreadAt(0, buf, 4, Int32) },
			} {
				r, err := start()
				if err != nil {
					return err
				}
				if _, err := r.Wait(); err != nil {
					return err
				}
			}
			if err := c.Barrier(); err != nil {
				return err
			}
			slow.Store(false)
			return f.Close()
		})
		if err != nil {
			t.Errorf("%d ranks: %v", n, err)
		}
	}
}

// TestNonblockingCollectiveIOHangReported: marking file work busy does
// not hide a real hang: rank 0 waits for an IwriteAtAll that rank 1
// never makes (it waits in a Barrier), and the job is reported hung.
func TestNonblockingCollectiveIOHangReported(t *testing.T) {
	cfg := DefaultConfig()
	cfg.HangReport = 200 * time.Millisecond
	name := filepath.Join(t.TempDir(), "f")
	done := make(chan error, 1)
	go func() {
		done <- RunConfig(2, cfg, func(c *Comm) error {
			f, err := OpenFile(c, name, ModeCreate|ModeRdwr|ModeDeleteOnClose, nil)
			if err != nil {
				return err
			}
			if c.Rank() == 0 {
				r, err := f.IwriteAtAll(0, []byte{1, 2, 3, 4}, 4, Byte)
				if err != nil {
					return err
				}
				_, err = r.Wait()
				return err
			}
			return c.Barrier()
		})
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "hang") {
			t.Fatalf("Run returned %v, want a hang report", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no hang report 30 s after the job hung")
	}
}
