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
// mask of the thread that starts it, so the start happens on a thread
// of its own whose mask is set first; that thread is never used again
// (the goroutine ends locked to it, so the runtime ends the thread).
func startBound(cmd *exec.Cmd, cpus []int) error {
	var set unix.CPUSet
	for _, c := range cpus {
		set.Set(c)
	}
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread goes with the goroutine
		if err := unix.SchedSetaffinity(0, &set); err != nil {
			done <- err
			return
		}
		done <- cmd.Start()
	}()
	return <-done
}
