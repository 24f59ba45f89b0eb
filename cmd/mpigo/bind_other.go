//go:build !linux

package main

import "os/exec"

// bindSupported says whether --bind-to core pins local processes here:
// only on Linux.
const bindSupported = false

// allowedCPUs is not known here.
func allowedCPUs() []int { return nil }

// startBound starts cmd unpinned: --bind-to core is not supported here
// (mpigo run warns).
func startBound(cmd *exec.Cmd, cpus []int) error { return cmd.Start() }
