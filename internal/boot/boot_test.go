package boot

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
)

func TestKVS(t *testing.T) {
	const n = 8
	secret := []byte("a secret of the test job")
	s, err := NewServer("127.0.0.1:0", n, secret)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var wg sync.WaitGroup
	errs := make([]error, n)
	for r := 0; r < n; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[r] = func() error {
				kv, err := Dial(s.Addr(), r, secret)
				if err != nil {
					return err
				}
				defer kv.Close()
				for round := 0; round < 3; round++ {
					if err := kv.Put(fmt.Sprintf("addr.%d.%d", round, r), fmt.Sprintf("host-%d:%d with spaces", r, round)); err != nil {
						return err
					}
					if err := kv.Fence(); err != nil {
						return err
					}
					for p := 0; p < n; p++ {
						v, err := kv.Get(fmt.Sprintf("addr.%d.%d", round, p))
						if err != nil {
							return err
						}
						if v != fmt.Sprintf("host-%d:%d with spaces", p, round) {
							return fmt.Errorf("got %q", v)
						}
					}
				}
				if _, err := kv.Get("missing"); err == nil || !strings.Contains(err.Error(), "no value for key missing") {
					return fmt.Errorf("get of a missing key: %v", err)
				}
				if err := kv.Put("bad key", "v"); err == nil {
					return fmt.Errorf("a key with a space was accepted")
				}
				return nil
			}()
		}()
	}
	wg.Wait()
	for r, err := range errs {
		if err != nil {
			t.Errorf("rank %d: %v", r, err)
		}
	}
}

func TestDetect(t *testing.T) {
	tests := []struct {
		rank, size, kvs string
		want            string
	}{
		{"0", "2", "", "must be set together"},
		{"x", "2", "127.0.0.1:1", "not a number"},
		{"3", "2", "127.0.0.1:1", "out of range"},
		{"0", "2", "127.0.0.1:1", "cannot reach the launcher"},
	}
	for _, tt := range tests {
		setOrUnset(t, EnvRank, tt.rank)
		setOrUnset(t, EnvSize, tt.size)
		setOrUnset(t, EnvKVS, tt.kvs)
		_, err := Detect(os.LookupEnv)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v: %v, want %q", tt, err, tt.want)
		}
	}
	s, err := NewServer("127.0.0.1:0", 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	setOrUnset(t, EnvRank, "1")
	setOrUnset(t, EnvSize, "2")
	setOrUnset(t, EnvKVS, s.Addr())
	t.Setenv(EnvNode, "n7")
	t.Setenv(EnvJobID, "42")
	info, err := Detect(os.LookupEnv)
	if err != nil {
		t.Fatal(err)
	}
	defer info.KV.Close()
	if info.Rank != 1 || info.Size != 2 || info.Node != "n7" || info.JobID != 42 || info.Launcher != "mpigo" {
		t.Errorf("info %+v", info)
	}
	unset(t, EnvRank)
	unset(t, EnvSize)
	unset(t, EnvKVS)
	info, err = Detect(os.LookupEnv)
	if err != nil || info.Size != 1 || info.Launcher != "singleton" {
		t.Fatalf("singleton: %+v %v", info, err)
	}
	info.KV.Put("k", "v")
	if v, err := info.KV.Get("k"); err != nil || v != "v" {
		t.Errorf("singleton store: %q %v", v, err)
	}
}
