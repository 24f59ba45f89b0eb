package main

import (
	"os/exec"
	"runtime"

	"golang.org/x/sys/unix"
)

// bindSupported says whether --bind-to core pins local processes here.
const bindSupported = true

// allowedCPUs returns the CPUs this process may run on (its affinity
// mask: a container's or a batch job's cpuset), in order.
func allowedCPUs() []int {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return nil
	}
	var cpus []int
	for c := 0; c < len(set)*64; c++ {
		if set.IsSet(c) {
			cpus = append(cpus, c)
		}
	}
	return cpus
}

// startBound starts cmd pinned to cpus. A new process inherits the CPU
// mask of the thread that starts it, so the start happens on this thread
// with its mask narrowed for the moment, then put back. (The thread must
// not end instead: a rank's Pdeathsig is tied to the thread that started
// it. The runtime starts no new thread from a locked one, so none
// inherits the narrowed mask.)
func startBound(cmd *exec.Cmd, cpus []int) error {
	var set, old unix.CPUSet
	for _, c := range cpus {
		set.Set(c)
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := unix.SchedGetaffinity(0, &old); err != nil {
		return err
	}
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		return err
	}
	err := cmd.Start()
	unix.SchedSetaffinity(0, &old)
	return err
}
