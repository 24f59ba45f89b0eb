//go:build unix

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
// The state of one Read lives in the reader, so that a Read allocates
// nothing (a protected connection reads a large frame record by record).
type pollReader struct {
	rc    syscall.RawConn
	conn  net.Conn
	try   func(fd uintptr) bool // made once: reads into p
	p     []byte
	n     int
	err   error
	polls int
	pfd   [1]unix.PollFd
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
	r := &pollReader{rc: rc, conn: c}
	r.try = r.tryRead
	return r
}

// tryRead reads into r.p from fd, polling it for data up to pollIters
// times; it returns false to park in the poller until fd is readable.
func (r *pollReader) tryRead(fd uintptr) bool {
	r.pfd[0] = unix.PollFd{Fd: int32(fd), Events: unix.POLLIN}
	for {
		r.n, r.err = syscall.Read(int(fd), r.p)
		if r.err == syscall.EINTR {
			continue
		}
		if r.err != syscall.EAGAIN {
			return true
		}
		// Wait for data with poll(2), which looks at the socket
		// without locking it: reading an empty socket in a loop takes
		// the socket's lock, which the kernel needs to deliver the
		// very segment being waited for.
		for {
			if r.polls >= pollIters {
				r.polls = 0
				return false // park in the poller until readable
			}
			r.polls++
			runtime.Gosched()
			if k, _ := unix.Poll(r.pfd[:], 0); k > 0 {
				break
			}
		}
	}
}

func (r *pollReader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	r.p, r.n, r.err, r.polls = p, 0, nil, 0
	// The frames just handed over may have woken a rank's goroutine that
	// will answer at once: let it run before this reader spends a system
	// call finding the socket empty.
	runtime.Gosched()
	err := r.rc.Read(r.try)
	n, rerr := r.n, r.err
	r.p = nil
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
