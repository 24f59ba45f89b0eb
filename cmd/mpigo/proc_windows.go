package main

import (
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/windows"
)

// rankGroup is how the launcher keeps hold of its local ranks on Windows,
// which has neither process groups to signal nor a parent-death signal: a
// Job Object that kills every process in it when its last handle closes.
// Only the launcher holds that handle, so when the launcher ends, however
// it ends (killed from the task manager included), the kernel ends every
// rank and whatever the ranks started.
type rankGroup struct {
	job windows.Handle
	mu  sync.Mutex
	h   map[int]windows.Handle // pid -> handle, to terminate it
}

// newRankGroup creates the Job Object ranks are put in.
func newRankGroup() (*rankGroup, error) {
	job, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return nil, fmt.Errorf("creating a job object: %w", err)
	}
	var li windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION
	li.BasicLimitInformation.LimitFlags = windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
	if _, err := windows.SetInformationJobObject(job, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&li)), uint32(unsafe.Sizeof(li))); err != nil {
		windows.CloseHandle(job)
		return nil, fmt.Errorf("setting up a job object: %w", err)
	}
	return &rankGroup{job: job, h: map[int]windows.Handle{}}, nil
}

// prepare sets up cmd, a rank about to start; secret, if not nil, is the
// read end of the pipe that carries the job's secret. It returns what the
// rank finds in MPIGO_SECRET_FD: the handle the secret comes on, which
// the rank inherits (Windows numbers no descriptors beyond the standard
// three).
//
// A rank gets a console process group of its own, so the Ctrl-C of the
// console reaches the launcher only, which decides for the job (as on
// Unix, where ranks are out of the terminal's foreground group).
func (g *rankGroup) prepare(cmd *exec.Cmd, secret *os.File) string {
	attr := &syscall.SysProcAttr{CreationFlags: windows.CREATE_NEW_PROCESS_GROUP}
	cmd.SysProcAttr = attr
	if secret == nil {
		return "" // a remote rank: its shell puts the secret on descriptor 3
	}
	h := windows.Handle(secret.Fd())
	windows.SetHandleInformation(h, windows.HANDLE_FLAG_INHERIT, windows.HANDLE_FLAG_INHERIT)
	attr.AdditionalInheritedHandles = []syscall.Handle{syscall.Handle(h)}
	return strconv.FormatUint(uint64(h), 10)
}

// started puts the rank cmd runs in the job object. A rank that starts a
// process of its own in its first instants, before this, leaves that one
// outside the job; ranks do not.
func (g *rankGroup) started(cmd *exec.Cmd) error {
	h, err := windows.OpenProcess(windows.PROCESS_SET_QUOTA|windows.PROCESS_TERMINATE|windows.SYNCHRONIZE, false, uint32(cmd.Process.Pid))
	if err != nil {
		return fmt.Errorf("opening process %d: %w", cmd.Process.Pid, err)
	}
	if err := windows.AssignProcessToJobObject(g.job, h); err != nil {
		windows.CloseHandle(h)
		return fmt.Errorf("putting process %d in the launcher's job object: %w", cmd.Process.Pid, err)
	}
	g.mu.Lock()
	g.h[cmd.Process.Pid] = h
	g.mu.Unlock()
	return nil
}

// signal stops the rank. Windows cannot deliver SIGTERM or SIGINT to
// another console process group reliably, so every signal terminates the
// rank at once, with exit status 128+sig (what a shell reports for a rank
// killed by sig), which the launcher reads like a Unix signal death.
func (g *rankGroup) signal(cmd *exec.Cmd, sig syscall.Signal) {
	g.mu.Lock()
	h, ok := g.h[cmd.Process.Pid]
	g.mu.Unlock()
	if !ok {
		cmd.Process.Kill()
		return
	}
	windows.TerminateProcess(h, uint32(128+int(sig)))
}

// close closes the job object: any process still in it ends.
func (g *rankGroup) close() {
	g.mu.Lock()
	for pid, h := range g.h {
		windows.CloseHandle(h)
		delete(g.h, pid)
	}
	g.mu.Unlock()
	windows.CloseHandle(g.job)
}

// reaperProcAttr starts the reaper in a console process group of its own,
// outside the job object (it must outlive the launcher).
func reaperProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{CreationFlags: windows.CREATE_NEW_PROCESS_GROUP}
}

// ignoreSignals makes the reaper deaf to the console's Ctrl-C and
// Ctrl-Break.
func ignoreSignals() { signal.Ignore(os.Interrupt, syscall.SIGTERM) }

// processAlive reports whether process pid runs.
func processAlive(pid int) bool {
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pid))
	if err != nil {
		// Gone, or not ours to look at (then it is not a rank of ours).
		return err == windows.ERROR_ACCESS_DENIED
	}
	defer windows.CloseHandle(h)
	var code uint32
	if windows.GetExitCodeProcess(h, &code) != nil {
		return true
	}
	return code == 259 // STILL_ACTIVE
}

// ownedByMe reports whether the file st describes belongs to this
// process's user: the temporary folder on Windows is the user's own.
func ownedByMe(st os.FileInfo) bool { return true }
