//go:build !linux

package device

// realtime reports whether this process runs under a real-time scheduling
// policy; only Linux is asked.
func realtime() bool { return false }
