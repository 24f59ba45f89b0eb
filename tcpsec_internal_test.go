package mpi

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/mpigo/mpi/internal/device"
	"github.com/mpigo/mpi/internal/testutil"
)

// flipRelay forwards connections to target, flipping one bit in each
// direction once past the first skip bytes (inside the data, past the
// handshake), and returns its address.
func flipRelay(t *testing.T, target string, skip int64) string {
	flip := testutil.FlipAt(skip, 0x10)
	return testutil.StartRelay(t, testutil.RelayConfig{Target: target, Out: flip, Back: flip}).Addr()
}

// A relay between the ranks of a tcp job that flips a bit in the data
// makes the job fail with an integrity error; no rank sees a wrong sum.
// Without protection the same relay makes ranks compute wrong results
// (the control; it may also break the protocol instead).
func TestTCPRelayFlipFailsJob(t *testing.T) {
	relays := map[string]string{}
	var mu sync.Mutex
	device.TCPAddrHook = func(peer int, addr string) string {
		mu.Lock()
		defer mu.Unlock()
		if relays[addr] == "" {
			relays[addr] = flipRelay(t, addr, 300<<10)
		}
		return relays[addr]
	}
	defer func() { device.TCPAddrHook = nil }()
	const n = 1 << 17 // 1 MiB of float64
	allreduce := func(protect string) (wrong bool, err error) {
		cfg := DefaultConfig()
		cfg.Transport = "tcp"
		cfg.TCPProtect = protect
		var bad sync.Map
		err = RunConfig(2, cfg, func(w *Comm) error {
			v := make([]float64, n)
			for i := range v {
				v[i] = float64(i % 1000)
			}
			for round := 0; round < 3; round++ {
				s, err := AllreduceSlice(w, v, Sum[float64]())
				if err != nil {
					return err
				}
				for i, x := range s {
					if x != 2*float64(i%1000) {
						bad.Store(w.Rank(), fmt.Sprintf("rank %d: element %d is %v, want %v", w.Rank(), i, x, 2*float64(i%1000)))
						return nil
					}
				}
			}
			return nil
		})
		bad.Range(func(k, v any) bool { wrong = true; t.Logf("%s: %v", protect, v); return true })
		return wrong, err
	}
	wrong, err := allreduce("on")
	if wrong {
		t.Error("a rank computed a wrong sum through a tampering relay")
	}
	if err == nil || !strings.Contains(err.Error(), "integrity") {
		t.Errorf("the job ended with %v; want an integrity error", err)
	}
	wrong, err = allreduce("off")
	if !wrong && err == nil {
		t.Error("without protection the relay changed nothing: the test proves nothing")
	}
}
