//go:build !unix

package main

import (
	"os/exec"
	"time"
)

func ownGroup(c *exec.Cmd) {}

func stopTree(c *exec.Cmd, done <-chan error, grace time.Duration) { c.Process.Kill() }
