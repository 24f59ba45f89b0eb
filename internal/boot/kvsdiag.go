package boot

import (
	"strconv"
	"strings"
	"time"
)

// KeyNow is a key the launcher's store answers with its clock (Unix
// nanoseconds) instead of a stored value: ranks estimate their clock's
// offset from it (ClockOffset), so that trace timelines of several
// processes line up.
const KeyNow = "mpigo.now"

// Lookup returns the value stored for key, for the launcher itself.
func (s *Server) Lookup(key string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.data[key]
	return v, ok
}

// DeletePrefix removes every key that begins with prefix.
func (s *Server) DeletePrefix(prefix string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, v := range s.data {
		if strings.HasPrefix(k, prefix) {
			s.dataBytes -= len(k) + len(v) + 64
			delete(s.data, k)
		}
	}
}

// ClockOffset estimates how far the store's clock is ahead of this
// process's wall clock, in nanoseconds: a few KeyNow round trips, keeping
// the shortest (its error is at most half that round trip).
func ClockOffset(kv KV) (int64, error) {
	best, off := time.Duration(1<<62), int64(0)
	for i := 0; i < 5; i++ {
		t0 := time.Now()
		v, err := kv.Get(KeyNow)
		t1 := time.Now()
		if err != nil {
			return 0, err
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return 0, err
		}
		if rtt := t1.Sub(t0); rtt < best {
			best = rtt
			mid := t0.UnixNano() + int64(rtt)/2
			off = n - mid
		}
	}
	return off, nil
}
