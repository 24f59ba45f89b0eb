//go:build !windows

package sockerr

import "syscall"

var (
	resetErrnos       = []error{syscall.ECONNRESET}
	brokenErrnos      = []error{syscall.EPIPE}
	unreachableErrnos = []error{syscall.ENETUNREACH, syscall.EHOSTUNREACH}
)
