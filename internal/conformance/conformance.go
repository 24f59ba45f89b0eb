// Package conformance is the shared harness of the black-box conformance
// tests under conformance/ (pt2pt, coll, datatype, ...), which are
// modelled on the directories of MPICH's test/mpi suite and use only the
// public API of github.com/mpigo/mpi.
//
// Every test runs its ranks once per transport configuration of the
// matrix: goroutine ranks over inproc (with its default protocols, with
// rendezvous for every message, and with the streamed rendezvous of the
// byte-stream transports), over loopback TCP, and over shared-memory
// rings (with cross-memory attach, and with every large message streamed
// through the rings). MPIGO_CONFORMANCE=name,name... runs only the named
// configurations (for example MPIGO_CONFORMANCE=inproc,tcp).
//
// A test that does not finish within the harness's time limit fails with
// a report of the hang instead of running into the package's timeout.
package conformance

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mpigo/mpi"
)

// Transport is one configuration of the matrix.
type Transport struct {
	Name   string
	Config mpi.Config
}

// Matrix returns every transport configuration of the matrix, which the
// conformance tests and the root package's tests (matrix_test.go) share,
// so that a new transport is tested by adding one line here. The inproc
// variants force each protocol path: the default (eager, then single-copy
// rendezvous), rendezvous for every message ("inproc-rendezvous"), and
// the streamed CTS/Data rendezvous that byte-stream transports use
// ("inproc-stream"); "inproc-spin" lets waiting ranks watch their
// requests before they park (Config.Spin; with 2 ranks or fewer on 2
// processors, where the ranks have one each); "ucx" (in builds with
// -tags mpigo_ucx) runs them over UCX with the transports UCX_TLS names;
// "ofi" (in builds with -tags mpigo_ofi) over libfabric with the provider
// FI_PROVIDER names; "tcp" runs the ranks over loopback TCP, as separate
// processes would talk; "shm" runs them over shared-memory rings with
// large messages copied by cross-memory attach, and "shm-ring" with every
// large message streamed through the rings (the fallback where the kernel
// refuses cross-memory attach).
func Matrix() []Transport {
	d := mpi.DefaultConfig()
	rndv := d
	rndv.EagerLimit = 0
	stream := d
	stream.EagerLimit = 64
	stream.NoDirectRead = true
	spin := d
	spin.Spin = 50 * time.Microsecond
	tcp := d
	tcp.Transport = "tcp"
	shm := d
	shm.Transport = "shm"
	shmRing := shm
	shmRing.EagerLimit = 64
	shmRing.NoDirectRead = true
	m := []Transport{
		{"inproc", d},
		{"inproc-rendezvous", rndv},
		{"inproc-stream", stream},
		{"inproc-spin", spin},
		{"tcp", tcp},
		{"shm", shm},
		{"shm-ring", shmRing},
	}
	for _, fabric := range fabrics {
		m = append(m, fabric(Transport{Config: d})...)
	}
	return m
}

// fabrics, filled in builds with fabric transports (fabric_ucx.go,
// fabric_ofi.go), return the matrix's configurations over each, made from
// the default one.
var fabrics []func(d Transport) []Transport

// unusable says why fabrics of the build were left out of the matrix (their
// library offers nothing here); TestFabricsUsable skips with it.
var unusable []string

// Transports returns the configurations of the matrix, filtered by
// MPIGO_CONFORMANCE when it is set.
func Transports() []Transport {
	all := Matrix()
	sel := os.Getenv("MPIGO_CONFORMANCE")
	if sel == "" {
		return all
	}
	var out []Transport
	for _, tr := range all {
		for _, name := range strings.Split(sel, ",") {
			if strings.TrimSpace(name) == tr.Name {
				out = append(out, tr)
			}
		}
	}
	return out
}

// Limit is how long one run of a test on one transport may take before
// it is reported as a hang: 60 s, or MPIGO_CONFORMANCE_LIMIT (a
// time.Duration such as 10s).
var Limit = func() time.Duration {
	if d, err := time.ParseDuration(os.Getenv("MPIGO_CONFORMANCE_LIMIT")); err == nil && d > 0 {
		return d
	}
	return 60 * time.Second
}()

// Run runs f on n ranks (goroutines of this process) over every
// transport of the matrix, as subtests named after the transports. A run
// fails with the ranks' errors, or when it takes longer than Limit.
func Run(t *testing.T, n int, f func(world *mpi.Comm) error) {
	t.Helper()
	for _, tr := range Transports() {
		t.Run(tr.Name, func(t *testing.T) {
			t.Helper()
			if err := RunOne(tr, n, f); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// RunOnly is Run over the named transports of the matrix only, for
// variants of a test that add little on the others (a second size).
func RunOnly(t *testing.T, names []string, n int, f func(world *mpi.Comm) error) {
	t.Helper()
	for _, tr := range Transports() {
		for _, name := range names {
			if name != tr.Name {
				continue
			}
			t.Run(tr.Name, func(t *testing.T) {
				t.Helper()
				if err := RunOne(tr, n, f); err != nil {
					t.Fatal(err)
				}
			})
		}
	}
}

// RunOne runs f on n ranks over one transport, within Limit.
func RunOne(tr Transport, n int, f func(world *mpi.Comm) error) error {
	done := make(chan error, 1)
	go func() { done <- mpi.RunConfig(n, tr.Config, f) }()
	select {
	case err := <-done:
		return err
	case <-time.After(Limit):
		msg := fmt.Sprintf("%s: %d ranks did not finish within %v (a hang)", tr.Name, n, Limit)
		if s, _ := note.Load().(string); s != "" {
			msg += "; last step noted: " + s
		}
		return errors.New(msg)
	}
}

var note atomic.Value // string

// Note records what a test is doing, for the report of a hang.
func Note(format string, args ...any) { note.Store(fmt.Sprintf(format, args...)) }

// Check returns nil if ok, else an error naming c's rank and the
// formatted message.
func Check(c *mpi.Comm, ok bool, format string, args ...any) error {
	if ok {
		return nil
	}
	return fmt.Errorf("rank %d: %s", c.Rank(), fmt.Sprintf(format, args...))
}

// Errs collects the failures of the checks of a rank that must go on
// (collective tests, where a rank that returned early would leave the
// others waiting).
type Errs struct{ list []error }

// Add records err if it is not nil.
func (e *Errs) Add(err error) {
	if err != nil {
		e.list = append(e.list, err)
	}
}

// Addf records a failure if ok is false.
func (e *Errs) Addf(c *mpi.Comm, ok bool, format string, args ...any) {
	e.Add(Check(c, ok, format, args...))
}

// Err returns the recorded failures joined, or nil.
func (e *Errs) Err() error { return errors.Join(e.list...) }

// IsClass reports whether err is an *mpi.Error of class class.
func IsClass(err, class error) bool {
	var e *mpi.Error
	return errors.As(err, &e) && errors.Is(err, class)
}
