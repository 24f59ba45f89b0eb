package device

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"testing"

	"github.com/mpigo/mpi/internal/transport"
	"github.com/mpigo/mpi/internal/transport/ofi"
	"github.com/mpigo/mpi/internal/transport/ucx"
	"github.com/mpigo/mpi/internal/wire"
)

// A peer's inbox gone after the start-up fence means the peer left the
// job: this rank fails as a consequence (ClassProcFailed, which package
// mpi makes ErrProcFailed, so that the launcher names the rank that
// failed first); other errors of mapping an inbox stay what they are.
func TestAttachError(t *testing.T) {
	gone := fmt.Errorf("shm: rank 2: opening the inbox of rank 3: %w", fs.ErrNotExist)
	var de *Error
	if err := attachError(gone); !errors.As(err, &de) || de.Class != ClassProcFailed {
		t.Errorf("inbox gone: %v, want a peer failure", err)
	}
	other := fmt.Errorf("shm: rank 2: the inbox of rank 3 does not match this job's layout")
	if err := attachError(other); errors.As(err, &de) || err != other {
		t.Errorf("layout mismatch: %v, want it unchanged", err)
	}
}

// MPIGO_FABRIC decides alike in every process: the fabric between nodes
// by default when the build has one (UCX first, then libfabric), never
// with off, on one node only when MPIGO_FABRIC_LOCAL asks; a fabric the
// build lacks, or a bad value, is an argument error that says how to
// build it in.
func TestChooseFabric(t *testing.T) {
	auto := ""
	switch {
	case ucx.Built:
		auto = "ucx"
	case ofi.Built:
		auto = "ofi"
	}
	type tc struct {
		fabric      string
		local, many bool
		want        string
		err         string
	}
	cases := []tc{
		{"", false, true, auto, ""},
		{"auto", false, true, auto, ""},
		{"", false, false, "", ""},
		{"", true, false, auto, ""},
		{"off", true, true, "", ""},
		{"infiniband", false, true, "", "want ucx, ofi or off"},
	}
	for _, f := range []struct {
		names []string
		built bool
		tag   string
	}{{[]string{"ucx"}, ucx.Built, "-tags mpigo_ucx"}, {[]string{"ofi", "libfabric"}, ofi.Built, "-tags mpigo_ofi"}} {
		for _, name := range f.names {
			if f.built {
				cases = append(cases, tc{name, false, true, f.names[0], ""}, tc{name, false, false, "", ""}, tc{name, true, false, f.names[0], ""})
			} else {
				cases = append(cases, tc{name, false, true, "", f.tag})
			}
		}
	}
	for _, c := range cases {
		got, err := chooseFabric(NetConfig{Fabric: c.fabric, FabricLocal: c.local}, c.many)
		var de *Error
		switch {
		case c.err == "" && err != nil:
			t.Errorf("MPIGO_FABRIC=%q local=%v multi-node=%v: %v", c.fabric, c.local, c.many, err)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err) || !errors.As(err, &de) || de.Class != ClassArg):
			t.Errorf("MPIGO_FABRIC=%q: error %v, want an argument error saying %q", c.fabric, err, c.err)
		case got != c.want:
			t.Errorf("MPIGO_FABRIC=%q local=%v multi-node=%v: fabric %q, want %q", c.fabric, c.local, c.many, got, c.want)
		}
	}
}

type named string

func (n named) Send(wire.Frame) error { return nil }
func (n named) Name() string          { return string(n) }

// mpigo run --verbose prints each process's routes as runs of peers.
func TestDescribeRoutes(t *testing.T) {
	route := func(peer int) transport.Transport {
		switch {
		case peer == 1:
			return named("self")
		case peer < 4:
			return named("shm")
		}
		return named("ucx")
	}
	if got, want := describeRoutes(7, route), "shm 0, self 1, shm 2-3, ucx 4-6"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
