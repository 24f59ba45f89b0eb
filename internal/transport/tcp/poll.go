package tcp

import (
	"io"
	"net"
	"runtime"
	"syscall"
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
	err := r.rc.Read(func(fd uintptr) bool {
		for {
			n, rerr = syscall.Read(int(fd), p)
			if rerr == syscall.EINTR {
				continue
			}
			if rerr != syscall.EAGAIN {
				return true
			}
			if polls >= pollIters {
				polls = 0
				return false // park in the poller until readable
			}
			polls++
			runtime.Gosched()
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
