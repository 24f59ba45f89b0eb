package main

import (
	"bytes"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

func TestBenchOutput(t *testing.T) {
	tests := []struct {
		args  []string
		sizes []int
	}{
		{[]string{"bench", "latency", "-sizes", "8,70000", "-iters", "20"}, []int{8, 70000}},
		{[]string{"bench", "latency", "-api", "raw", "-sizes", "1:4", "-iters", "20"}, []int{1, 2, 4}},
		{[]string{"bench", "bw", "-sizes", "1024", "-iters", "3"}, []int{1024}},
		{[]string{"bench", "sendrecv", "-n", "3", "-sizes", "8,100000", "-iters", "20"}, []int{8, 100000}},
		{[]string{"bench", "sendrecv", "-api", "raw", "-transport", "shm", "-sizes", "64", "-iters", "20"}, []int{64}},
		{[]string{"bench", "sendrecv", "-api", "object", "-sizes", "300", "-iters", "5"}, []int{300}},
		{[]string{"bench", "latency", "-api", "object", "-sizes", "8,100000", "-iters", "5"}, []int{8, 100000}},
		{[]string{"bench", "bw", "-api", "object", "-sizes", "5000", "-iters", "2"}, []int{5000}},
		{[]string{"bench", "latency", "-api", "object", "-transport", "tcp", "-sizes", "300", "-iters", "5"}, []int{300}},
		{[]string{"bench", "bibw", "-sizes", "100000", "-iters", "2", "-api", "raw"}, []int{100000}},
		{[]string{"bench", "bw", "-api", "set", "-transport", "shm", "-sizes", "8,100000", "-iters", "20"}, []int{8, 100000}},
		{[]string{"bench", "bibw", "-api", "set", "-sizes", "8", "-iters", "20"}, []int{8}},
		{[]string{"bench", "allreduce", "-n", "3", "-sizes", "8,64", "-iters", "10"}, []int{8, 64}},
		{[]string{"bench", "bcast", "-n", "4", "-sizes", "16", "-iters", "10"}, []int{16}},
		{[]string{"bench", "barrier", "-n", "5", "-iters", "10"}, []int{0}},
		{[]string{"bench", "latency", "-transport", "tcp", "-sizes", "8,100000", "-iters", "20"}, []int{8, 100000}},
		{[]string{"bench", "allgather", "-n", "3", "-sizes", "8,4096", "-iters", "5"}, []int{8, 4096}},
		{[]string{"bench", "alltoall", "-n", "3", "-sizes", "8", "-iters", "5", "-api", "raw"}, []int{8}},
		{[]string{"bench", "reduce", "-n", "3", "-sizes", "64", "-iters", "5"}, []int{64}},
		{[]string{"bench", "reduce_scatter", "-n", "3", "-sizes", "96", "-iters", "5", "-api", "raw"}, []int{96}},
		{[]string{"bench", "scan", "-n", "3", "-sizes", "8", "-iters", "5"}, []int{8}},
		{[]string{"bench", "iallreduce", "-n", "2", "-sizes", "8", "-iters", "5"}, []int{8}},
		{[]string{"bench", "ialltoall", "-n", "3", "-sizes", "8,1024", "-iters", "5", "-yield"}, []int{8, 1024}},
		{[]string{"bench", "ibarrier", "-n", "3", "-iters", "5"}, []int{0}},
		{[]string{"bench", "put_latency", "-sizes", "8,100000", "-iters", "20"}, []int{8, 100000}},
		{[]string{"bench", "get_latency", "-transport", "tcp", "-sizes", "8", "-iters", "20"}, []int{8}},
		{[]string{"bench", "acc_latency", "-sizes", "64", "-iters", "20"}, []int{64}},
		{[]string{"bench", "fop_latency", "-n", "3", "-iters", "20"}, []int{8}},
		{[]string{"bench", "cas_latency", "-transport", "shm", "-iters", "20"}, []int{8}},
		{[]string{"bench", "put_bw", "-sizes", "4096", "-iters", "3"}, []int{4096}},
		{[]string{"bench", "get_bw", "-sizes", "1024", "-iters", "3"}, []int{1024}},
	}
	for _, tt := range tests {
		var out, errb bytes.Buffer
		if code := run(tt.args, &out, &errb); code != 0 {
			t.Fatalf("%v: exit %d: %s", tt.args, code, errb.String())
		}
		var sizes []int
		for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
			if strings.HasPrefix(line, "#") {
				continue
			}
			f := strings.Fields(line)
			// SIZE MEDIAN MIN MAX, or for the non-blocking tests SIZE
			// OVERALL COMPUTE PURE OVERLAP MIN MAX.
			if len(f) != 4 && (len(f) != 7 || !strings.HasPrefix(tt.args[1], "i")) {
				t.Fatalf("%v: bad data line %q", tt.args, line)
			}
			size, err1 := strconv.Atoi(f[0])
			v, err2 := strconv.ParseFloat(f[1], 64)
			if err1 != nil || err2 != nil || v <= 0 {
				t.Fatalf("%v: bad data line %q", tt.args, line)
			}
			sizes = append(sizes, size)
		}
		if len(sizes) != len(tt.sizes) {
			t.Fatalf("%v: sizes %v, want %v\n%s", tt.args, sizes, tt.sizes, out.String())
		}
		if !strings.HasPrefix(out.String(), "# mpigo bench "+tt.args[1]) {
			t.Errorf("%v: header missing:\n%s", tt.args, out.String())
		}
	}
}

func TestUsageErrors(t *testing.T) {
	tests := []struct {
		args []string
		code int
		msg  string
	}{
		{nil, 2, "Usage"},
		{[]string{"frobnicate"}, 2, `unknown command "frobnicate"`},
		{[]string{"bench"}, 2, "Tests"},
		{[]string{"bench", "nosuch"}, 1, `unknown test "nosuch"`},
		{[]string{"bench", "latency", "-transport", "carrier-pigeon"}, 1, `transport "carrier-pigeon" is not available`},
		{[]string{"bench", "latency", "-sizes", "9:3"}, 2, "MIN:MAX"},
		{[]string{"bench", "latency", "-n", "1"}, 1, "at least 2 ranks"},
		{[]string{"bench", "latency", "-api", "fancy"}, 1, "want raw, typed, set or object"},
	}
	for _, tt := range tests {
		var out, errb bytes.Buffer
		code := run(tt.args, &out, &errb)
		if code != tt.code || !strings.Contains(errb.String(), tt.msg) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and %q", tt.args, code, errb.String(), tt.code, tt.msg)
		}
	}
}

func TestInfo(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"info"}, &out, &errb); code != 0 {
		t.Fatal(errb.String())
	}
	for _, want := range []string{"mpigo 0.", "inproc", "MPIGO_EAGER_LIMIT", "tag upper bound", "MPIGO_COLL_ALLREDUCE", "recursive_doubling", "MPIGO_COLL_SEGMENT"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("info lacks %q:\n%s", want, out.String())
		}
	}
}

// TestInfoListsEveryTunable checks that `mpigo info` shows every MPIGO_*
// variable the library's config.go reads (the one place the library reads
// its environment), so a user who asks the tool what can be tuned is not
// left to find a variable in the source. The exceptions say why.
func TestInfoListsEveryTunable(t *testing.T) {
	src, err := os.ReadFile("../../config.go")
	if err != nil {
		t.Fatal(err)
	}
	notShown := map[string]string{
		"MPIGO_TRACE_DIR": "set by mpigo run for its ranks, not by users",
	}
	var out, errb bytes.Buffer
	if code := run([]string{"info"}, &out, &errb); code != 0 {
		t.Fatal(errb.String())
	}
	read := regexp.MustCompile(`(?:getenv|envInt|lookupEnv)\("(MPIGO_[A-Z0-9_]+)"\)`)
	found := 0
	for _, m := range read.FindAllStringSubmatch(string(src), -1) {
		found++
		name := m[1]
		if _, ok := notShown[name]; ok {
			continue
		}
		if !strings.Contains(out.String(), name) {
			t.Errorf("config.go reads %s but mpigo info does not list it", name)
		}
	}
	if found < 10 {
		t.Fatalf("found only %d reads of MPIGO_* variables in config.go: has the reading moved?", found)
	}
}
