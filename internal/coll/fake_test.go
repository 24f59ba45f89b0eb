package coll

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"
)

// fakeNet is an in-memory network of p ranks for tests. Messages are kept in
// FIFO queues per (src, dst, tag). In eager mode a send completes as soon as
// its data is copied; in rendezvous mode it completes only when the receiver
// has taken the message, which exposes algorithms that would deadlock on a
// transport without buffering.
type fakeNet struct {
	p          int
	rendezvous bool

	mu     sync.Mutex
	cond   *sync.Cond
	queues map[fkey]*fqueue
	tags   map[int]bool // every tag used
	closed bool
}

type fkey struct{ src, dst, tag int }

// fqueue holds, for one (src, dst, tag), either messages waiting for a
// receive or receives waiting for a message (never both).
type fqueue struct {
	msgs []*fmsg
	recv []*frecv
}

type fmsg struct {
	data  []byte
	taken bool
}

// frecv is a posted receive. alloc receives into a new buffer (RecvAlloc).
type frecv struct {
	buf   []byte
	alloc bool
	data  []byte // alloc: the message
	n     int
	err   error
	done  bool
}

var errClosed = errors.New("fake: network closed")

func newFakeNet(p int, rendezvous bool) *fakeNet {
	n := &fakeNet{p: p, rendezvous: rendezvous, queues: map[fkey]*fqueue{}, tags: map[int]bool{}}
	n.cond = sync.NewCond(&n.mu)
	return n
}

func (n *fakeNet) comm(rank int) *fakeComm { return &fakeComm{net: n, rank: rank} }

// close wakes every blocked operation with errClosed.
func (n *fakeNet) close() {
	n.mu.Lock()
	n.closed = true
	n.cond.Broadcast()
	n.mu.Unlock()
}

func (n *fakeNet) queue(k fkey) *fqueue {
	q := n.queues[k]
	if q == nil {
		q = &fqueue{}
		n.queues[k] = q
	}
	return q
}

func (n *fakeNet) check(peer, tag int) error {
	if peer < 0 || peer >= n.p {
		return fmt.Errorf("fake: peer %d out of range", peer)
	}
	if tag < 0 {
		return fmt.Errorf("fake: negative tag %d", tag)
	}
	return nil
}

// deliver completes receive rv with message m. Called with n.mu held.
func (n *fakeNet) deliver(rv *frecv, m *fmsg) {
	switch {
	case rv.alloc:
		rv.data, rv.n = m.data, len(m.data)
	case len(m.data) > len(rv.buf):
		rv.err = fmt.Errorf("fake: message of %d bytes truncated to %d", len(m.data), len(rv.buf))
	default:
		rv.n = copy(rv.buf, m.data)
	}
	rv.done, m.taken = true, true
	n.cond.Broadcast()
}

// leftovers describes messages sent but never received, or receives never
// completed.
func (n *fakeNet) leftovers() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	var out []string
	for k, q := range n.queues {
		if len(q.msgs) > 0 || len(q.recv) > 0 {
			out = append(out, fmt.Sprintf("%d->%d tag %d: %d unreceived, %d pending receives",
				k.src, k.dst, k.tag, len(q.msgs), len(q.recv)))
		}
	}
	return out
}

type fakeComm struct {
	net  *fakeNet
	rank int
}

type fakeReq func() (int, error)

func (f fakeReq) Wait() (int, error) { return f() }

func (c *fakeComm) Rank() int { return c.rank }
func (c *fakeComm) Size() int { return c.net.p }

// post sends a copy of buf: to the oldest posted receive, or to the queue.
func (c *fakeComm) post(buf []byte, dst, tag int) (*fmsg, error) {
	n := c.net
	if err := n.check(dst, tag); err != nil {
		return nil, err
	}
	m := &fmsg{data: append([]byte(nil), buf...)}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return nil, errClosed
	}
	n.tags[tag] = true
	q := n.queue(fkey{c.rank, dst, tag})
	if len(q.recv) > 0 {
		n.deliver(q.recv[0], m)
		q.recv = q.recv[1:]
	} else {
		q.msgs = append(q.msgs, m)
	}
	return m, nil
}

// waitTaken blocks until m was received (rendezvous mode only).
func (c *fakeComm) waitTaken(m *fmsg) (int, error) {
	n := c.net
	if !n.rendezvous {
		return 0, nil
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	for !m.taken {
		if n.closed {
			return 0, errClosed
		}
		n.cond.Wait()
	}
	return 0, nil
}

func (c *fakeComm) Send(buf []byte, dst, tag int) error {
	m, err := c.post(buf, dst, tag)
	if err != nil {
		return err
	}
	_, err = c.waitTaken(m)
	return err
}

func (c *fakeComm) Isend(buf []byte, dst, tag int) (Request, error) {
	m, err := c.post(buf, dst, tag)
	if err != nil {
		return nil, err
	}
	return fakeReq(func() (int, error) { return c.waitTaken(m) }), nil
}

// postRecv posts a receive: it takes the oldest queued message or waits in
// line, so receives match in the order they were posted.
func (c *fakeComm) postRecv(rv *frecv, src, tag int) error {
	n := c.net
	if err := n.check(src, tag); err != nil {
		return err
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return errClosed
	}
	n.tags[tag] = true
	q := n.queue(fkey{src, c.rank, tag})
	if len(q.msgs) > 0 {
		n.deliver(rv, q.msgs[0])
		q.msgs = q.msgs[1:]
	} else {
		q.recv = append(q.recv, rv)
	}
	return nil
}

// wait blocks until rv is done.
func (c *fakeComm) wait(rv *frecv) (int, error) {
	n := c.net
	n.mu.Lock()
	defer n.mu.Unlock()
	for !rv.done {
		if n.closed {
			return 0, errClosed
		}
		n.cond.Wait()
	}
	return rv.n, rv.err
}

func (c *fakeComm) Recv(buf []byte, src, tag int) (int, error) {
	rv := &frecv{buf: buf}
	if err := c.postRecv(rv, src, tag); err != nil {
		return 0, err
	}
	return c.wait(rv)
}

func (c *fakeComm) Irecv(buf []byte, src, tag int) (Request, error) {
	rv := &frecv{buf: buf}
	if err := c.postRecv(rv, src, tag); err != nil {
		return nil, err
	}
	return fakeReq(func() (int, error) { return c.wait(rv) }), nil
}

func (c *fakeComm) RecvAlloc(src, tag int) ([]byte, error) {
	rv := &frecv{alloc: true}
	if err := c.postRecv(rv, src, tag); err != nil {
		return nil, err
	}
	if _, err := c.wait(rv); err != nil {
		return nil, err
	}
	return rv.data, nil // already a private copy
}

// The tag base most tests use; collectives must stay in tagBase..tagBase+7.
const tagBase = 40

const runTimeout = 20 * time.Second

// run runs body on p ranks, once in eager and once in rendezvous mode, and
// fails the test if any rank returns an error, a rank is still blocked after
// runTimeout, a message is left over, or a tag outside tagBase..tagBase+7
// was used. body may call t.Errorf.
func run(t *testing.T, p int, body func(c Comm) error) {
	t.Helper()
	runTags(t, p, tagBase, tagBase+7, body)
}

// runTags is run with the allowed tag range lo..hi.
func runTags(t *testing.T, p, lo, hi int, body func(c Comm) error) {
	t.Helper()
	for _, rv := range []bool{false, true} {
		net := newFakeNet(p, rv)
		errs := runNet(net, func(r int) Comm { return net.comm(r) }, body)
		mode := map[bool]string{false: "eager", true: "rendezvous"}[rv]
		for r, err := range errs {
			if err != nil {
				t.Errorf("%s: rank %d: %v", mode, r, err)
			}
		}
		if t.Failed() {
			return
		}
		for _, s := range net.leftovers() {
			t.Errorf("%s: leftover: %s", mode, s)
		}
		for tag := range net.tags {
			if tag < lo || tag > hi {
				t.Errorf("%s: tag %d outside %d..%d", mode, tag, lo, hi)
			}
		}
	}
}

// runNet runs body on every rank of net, each with the Comm mk returns. The
// first rank to fail closes the network so the others return too; so does
// the timeout.
func runNet(net *fakeNet, mk func(r int) Comm, body func(c Comm) error) []error {
	errs := make([]error, net.p)
	var wg sync.WaitGroup
	for r := range net.p {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if errs[r] = body(mk(r)); errs[r] != nil {
				net.close()
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(runTimeout):
		net.close()
		<-done
		for r := range errs {
			if errs[r] == nil {
				errs[r] = errors.New("finished only after timeout")
			} else {
				errs[r] = fmt.Errorf("timeout (deadlock?): %w", errs[r])
			}
		}
	}
	return errs
}

// failComm fails the n-th (0-based) communication call of its rank.
type failComm struct {
	Comm
	mu sync.Mutex
	n  int
}

var errInjected = errors.New("injected failure")

func (c *failComm) fail() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n--
	return c.n == -1
}

func (c *failComm) Send(buf []byte, dst, tag int) error {
	if c.fail() {
		return errInjected
	}
	return c.Comm.Send(buf, dst, tag)
}

func (c *failComm) Recv(buf []byte, src, tag int) (int, error) {
	if c.fail() {
		return 0, errInjected
	}
	return c.Comm.Recv(buf, src, tag)
}

func (c *failComm) RecvAlloc(src, tag int) ([]byte, error) {
	if c.fail() {
		return nil, errInjected
	}
	return c.Comm.RecvAlloc(src, tag)
}

func (c *failComm) Isend(buf []byte, dst, tag int) (Request, error) {
	if c.fail() {
		return nil, errInjected
	}
	return c.Comm.Isend(buf, dst, tag)
}

func (c *failComm) Irecv(buf []byte, src, tag int) (Request, error) {
	if c.fail() {
		return nil, errInjected
	}
	return c.Comm.Irecv(buf, src, tag)
}

// TestFake checks the fake itself: FIFO order, Irecv posting order,
// truncation and rendezvous completion.
func TestFake(t *testing.T) {
	run(t, 2, func(c Comm) error {
		if c.Rank() == 0 {
			for i := range 3 {
				if err := c.Send([]byte{byte(i)}, 1, tagBase); err != nil {
					return err
				}
			}
			if err := c.Send(make([]byte, 4), 1, tagBase+1); err != nil {
				return err
			}
			return nil
		}
		b0, b1 := make([]byte, 1), make([]byte, 1)
		q0, _ := c.Irecv(b0, 0, tagBase)
		q1, _ := c.Irecv(b1, 0, tagBase)
		if _, err := q1.Wait(); err != nil {
			return err
		}
		if _, err := q0.Wait(); err != nil {
			return err
		}
		b2, err := c.RecvAlloc(0, tagBase)
		if err != nil {
			return err
		}
		if b0[0] != 0 || b1[0] != 1 || b2[0] != 2 {
			t.Errorf("order: %v %v %v", b0, b1, b2)
		}
		if _, err := c.Recv(make([]byte, 3), 0, tagBase+1); err == nil {
			t.Errorf("truncation not reported")
		}
		return nil
	})
}
