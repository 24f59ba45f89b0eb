package tcp

import (
	"io"
	"net"
	"runtime"
	"syscall"

	"golang.org/x/sys/unix"
)

// pollIters is how many times a reader polls its socket, yielding the
// processor between polls, before it parks in the network poller. A reply
// usually arrives within microseconds; parking and being woken by the
// poller costs an epoll wait and a thread wake-up each time.
var pollIters = 200

// pollReader reads a TCP connection by polling it briefly before it parks.
type pollReader struct {
	rc   syscall.RawConn
	conn net.Conn
}

func newPollReader(c net.Conn) io.Reader {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return c
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return c
	}
	return &pollReader{rc: rc, conn: c}
}

func (r *pollReader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	var n int
	var rerr error
	polls := 0
	// The frames just handed over may have woken a rank's goroutine that
	// will answer at once: let it run before this reader spends a system
	// call finding the socket empty.
	runtime.Gosched()
	err := r.rc.Read(func(fd uintptr) bool {
		pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		for {
			n, rerr = syscall.Read(int(fd), p)
			if rerr == syscall.EINTR {
				continue
			}
			if rerr != syscall.EAGAIN {
				return true
			}
			// Wait for data with poll(2), which looks at the socket
			// without locking it: reading an empty socket in a loop takes
			// the socket's lock, which the kernel needs to deliver the
			// very segment being waited for.
			for {
				if polls >= pollIters {
					polls = 0
					return false // park in the poller until readable
				}
				polls++
				runtime.Gosched()
				if k, _ := unix.Poll(pfd, 0); k > 0 {
					break
				}
			}
		}
	})
	if err != nil {
		return 0, err
	}
	if rerr != nil {
		return 0, rerr
	}
	if n == 0 {
		return 0, io.EOF
	}
	return n, nil
}
