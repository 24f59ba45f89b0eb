package boot

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// A fake PMI launcher in this process: it serves the PMI-1 or PMI-2 wire
// protocol on one end of a socket pair per rank, as Hydra's proxy and
// Slurm's slurmstepd do on PMI_FD. bad, when set, may replace the reply to
// a request (to test malformed, truncated and missing replies).
type fakePMI struct {
	version int // 1 or 2
	size    int
	mapping string // PMI_process_mapping; "" for none
	vallen  int

	mu      sync.Mutex
	kvs     map[string]string
	waiting int
	release chan struct{}
	calls   []string

	// bad returns the raw bytes to send instead of the normal reply to
	// cmd (nil: the normal reply), and whether to close the connection
	// after them.
	bad func(cmd string) (raw []byte, hangup bool)
}

func newFakePMI(version, size int, mapping string) *fakePMI {
	return &fakePMI{version: version, size: size, mapping: mapping, vallen: 1024, kvs: map[string]string{}, release: make(chan struct{})}
}

func (f *fakePMI) fence() {
	f.mu.Lock()
	wait := f.release
	f.waiting++
	if f.waiting == f.size {
		close(f.release)
		f.release = make(chan struct{})
		f.waiting = 0
	}
	f.mu.Unlock()
	<-wait
}

func (f *fakePMI) serve(c net.Conn) {
	defer c.Close()
	r := bufio.NewReader(c)
	v2 := false
	for {
		var req string
		if !v2 {
			line, err := r.ReadString('\n')
			if err != nil {
				return
			}
			req = strings.TrimRight(line, "\n")
		} else {
			var hdr [6]byte
			if _, err := io.ReadFull(r, hdr[:]); err != nil {
				return
			}
			n, _ := strconv.Atoi(strings.TrimSpace(string(hdr[:])))
			body := make([]byte, n)
			if _, err := io.ReadFull(r, body); err != nil {
				return
			}
			req = string(body)
		}
		var m map[string]string
		var err error
		if v2 {
			m, err = ParsePMI2(req)
		} else {
			m, err = ParsePMI1(req)
		}
		if err != nil {
			panic(fmt.Sprintf("fake PMI: bad request %q: %v", req, err))
		}
		cmd := m["cmd"]
		f.mu.Lock()
		f.calls = append(f.calls, cmd)
		f.mu.Unlock()
		if f.bad != nil {
			if raw, hangup := f.bad(cmd); raw != nil || hangup {
				c.Write(raw)
				if hangup {
					return
				}
				continue
			}
		}
		reply := f.reply(cmd, m)
		if cmd == "init" && m["pmi_version"] == "2" {
			v2 = true
		}
		if reply == "" {
			continue
		}
		if v2 && cmd != "init" {
			reply = fmt.Sprintf("%-6d%s", len(reply), reply)
		} else {
			reply += "\n"
		}
		if _, err := c.Write([]byte(reply)); err != nil {
			return
		}
		if cmd == "finalize" {
			return
		}
	}
}

func (f *fakePMI) reply(cmd string, m map[string]string) string {
	get := func(key string) (string, bool) {
		if key == "PMI_process_mapping" && f.mapping != "" {
			return f.mapping, true
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		v, ok := f.kvs[key]
		return v, ok
	}
	switch cmd {
	// PMI-1
	case "init":
		return fmt.Sprintf("cmd=response_to_init rc=0 pmi_version=%s pmi_subversion=%s", m["pmi_version"], m["pmi_subversion"])
	case "get_maxes":
		return fmt.Sprintf("cmd=maxes rc=0 kvsname_max=256 keylen_max=64 vallen_max=%d", f.vallen)
	case "get_appnum":
		return "cmd=appnum rc=0 appnum=0"
	case "get_my_kvsname":
		return "cmd=my_kvsname rc=0 kvsname=kvs_4242_0"
	case "put":
		if len(m["value"]) >= f.vallen || strings.ContainsAny(m["value"], " =;") {
			panic(fmt.Sprintf("fake PMI: value %q breaks the limits", m["value"]))
		}
		f.mu.Lock()
		f.kvs[m["key"]] = m["value"]
		f.mu.Unlock()
		return "cmd=put_result rc=0 msg=success"
	case "barrier_in":
		f.fence()
		return "cmd=barrier_out rc=0"
	case "get":
		if v, ok := get(m["key"]); ok {
			return "cmd=get_result rc=0 msg=success value=" + v
		}
		return "cmd=get_result rc=-1 msg=key " + m["key"] + " not found"
	case "finalize":
		if f.version == 2 {
			return "cmd=finalize-response;rc=0;"
		}
		return "cmd=finalize_ack rc=0"
	case "abort":
		return ""
	// PMI-2
	case "fullinit":
		return fmt.Sprintf("cmd=fullinit-response;rc=0;pmi-version=2;pmi-subversion=0;rank=%s;size=%d;appnum=-1;debugged=FALSE;pmiverbose=FALSE;", m["pmirank"], f.size)
	case "job-getid":
		return "cmd=job-getid-response;rc=0;jobid=77.0;"
	case "info-getjobattr":
		if v, ok := get(m["key"]); ok {
			return "cmd=info-getjobattr-response;rc=0;found=TRUE;value=" + v + ";"
		}
		return "cmd=info-getjobattr-response;rc=0;found=FALSE;"
	case "kvs-put":
		if len(m["value"]) >= 1024 || strings.ContainsAny(m["value"], ";") { // Slurm: PMI2_MAX_VALLEN
			panic(fmt.Sprintf("fake PMI: value %q breaks the limits", m["value"]))
		}
		f.mu.Lock()
		f.kvs[m["key"]] = m["value"]
		f.mu.Unlock()
		return "cmd=kvs-put-response;rc=0;"
	case "kvs-fence":
		f.fence()
		return "cmd=kvs-fence-response;rc=0;"
	case "kvs-get":
		if v, ok := get(m["key"]); ok {
			return "cmd=kvs-get-response;rc=0;found=TRUE;value=" + v + ";"
		}
		return "cmd=kvs-get-response;rc=0;found=FALSE;"
	}
	if f.version == 2 {
		return "cmd=" + cmd + "-response;rc=1;errmsg=unknown;"
	}
	return "cmd=" + cmd + "_result rc=-1"
}

// rankEnv is the environment the fake launcher gives a rank.
func (f *fakePMI) rankEnv(t *testing.T, rank int, extra ...string) lookupFunc {
	env := map[string]string{
		"PMI_FD":   strconv.Itoa(f.socketPair(t)),
		"PMI_RANK": strconv.Itoa(rank),
		"PMI_SIZE": strconv.Itoa(f.size),
	}
	if f.version == 2 {
		env["PMI_JOBID"] = "77.0"
		env["SLURM_STEP_ID"] = "0"
	} else {
		env["MPI_LOCALNRANKS"] = "2"
	}
	for i := 0; i+1 < len(extra); i += 2 {
		env[extra[i]] = extra[i+1]
	}
	return func(k string) (string, bool) { v, ok := env[k]; return v, ok }
}

func detectWith(version int, env lookupFunc) (*Info, error) {
	if version == 2 {
		return detectPMI2(env)
	}
	return detectPMI1(env)
}

// A whole job of four ranks on two nodes of the fake launcher: ranks,
// nodes, secret, job id, and values that must be encoded (spaces, '=',
// ';', newlines) and split (longer than vallen_max).
func TestPMIJob(t *testing.T) {
	for _, version := range []int{1, 2} {
		t.Run(fmt.Sprintf("PMI-%d", version), func(t *testing.T) {
			const n = 4
			f := newFakePMI(version, n, "(vector,(0,2,2))")
			f.vallen = 64
			infos := make([]*Info, n)
			errs := make([]error, n)
			envs := make([]lookupFunc, n)
			for r := range n {
				envs[r] = f.rankEnv(t, r)
			}
			long := strings.Repeat("a b=c;d\n%é", 40)
			var wg sync.WaitGroup
			for r := range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					info, err := detectWith(version, envs[r])
					if err != nil {
						errs[r] = err
						return
					}
					infos[r] = info
					if err := info.KV.Put("long."+strconv.Itoa(r), long+strconv.Itoa(r)); err != nil {
						errs[r] = err
						return
					}
					if err := info.KV.Fence(); err != nil {
						errs[r] = err
						return
					}
					// Concurrently, as goroutines of a rank look up peers.
					gerrs := make([]error, n)
					var gw sync.WaitGroup
					for p := range n {
						gw.Add(1)
						go func() {
							defer gw.Done()
							v, err := info.KV.Get("long." + strconv.Itoa(p))
							if err != nil || v != long+strconv.Itoa(p) {
								gerrs[p] = fmt.Errorf("get long.%d: %q, %v", p, v, err)
							}
						}()
					}
					gw.Wait()
					if err := errors.Join(gerrs...); err != nil {
						errs[r] = err
						return
					}
					if _, err := info.KV.Get("missing"); err == nil {
						errs[r] = fmt.Errorf("a missing key was found")
						return
					}
					errs[r] = info.KV.Close()
				}()
			}
			wg.Wait()
			for r, err := range errs {
				if err != nil {
					t.Fatalf("rank %d: %v", r, err)
				}
			}
			for r, info := range infos {
				wantNode := []int{0, 1}
				if r >= 2 {
					wantNode = []int{2, 3}
				}
				if info.Rank != r || info.Size != n || info.RanksHere != 1 || !slices.Equal(info.NodeRanks, wantNode) || info.LocalRank != r%2 || info.LocalSize != 2 {
					t.Errorf("rank %d: %+v", r, info)
				}
				if string(info.Secret) != string(infos[0].Secret) || len(info.Secret) != 32 || info.JobID != infos[0].JobID {
					t.Errorf("rank %d: secret or job id differs from rank 0's", r)
				}
				if info.Addr == "" {
					t.Errorf("rank %d: a job on two nodes needs an address peers can reach", r)
				}
			}
			want := map[int]string{1: "PMI-1 (MPICH Hydra)", 2: "PMI-2 (Slurm)"}[version]
			if infos[0].Launcher != want {
				t.Errorf("launcher %q, want %q", infos[0].Launcher, want)
			}
			if !slices.Contains(f.calls, "finalize") {
				t.Errorf("no finalize: %v", f.calls)
			}
		})
	}
}

// Without PMI_process_mapping, ranks tell each other their host: all on
// this machine.
func TestPMINoMapping(t *testing.T) {
	for _, version := range []int{1, 2} {
		const n = 3
		f := newFakePMI(version, n, "")
		envs := make([]lookupFunc, n)
		for r := range n {
			envs[r] = f.rankEnv(t, r)
		}
		infos := make([]*Info, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		for r := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				infos[r], errs[r] = detectWith(version, envs[r])
			}()
		}
		wg.Wait()
		for r := range n {
			if errs[r] != nil {
				t.Fatalf("PMI-%d rank %d: %v", version, r, errs[r])
			}
			if !slices.Equal(infos[r].NodeRanks, []int{0, 1, 2}) || infos[r].LocalRank != r || infos[r].Addr != "" {
				t.Errorf("PMI-%d rank %d: %+v", version, r, infos[r])
			}
			infos[r].KV.Close()
		}
	}
}

// PMI_PORT and PMI_ID instead of PMI_FD: the process dials the launcher
// and learns its rank and size from the initack exchange.
func TestPMI1Port(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	f := newFakePMI(1, 1, "")
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		r := bufio.NewReader(c)
		line, _ := r.ReadString('\n')
		if line != "cmd=initack pmiid=5\n" {
			c.Close()
			return
		}
		io.WriteString(c, "cmd=initack rc=0\ncmd=set size=1\ncmd=set rank=0\ncmd=set debug=0\n")
		// The rest of the conversation: hand the connection to the fake.
		pr, pw := net.Pipe()
		go f.serve(pr)
		go io.Copy(pw, r)
		io.Copy(c, pw)
	}()
	env := map[string]string{"PMI_PORT": ln.Addr().String(), "PMI_ID": "5"}
	info, err := detectPMI1(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	if err != nil {
		t.Fatal(err)
	}
	if info.Rank != 0 || info.Size != 1 || info.Launcher != "PMI-1" {
		t.Errorf("%+v", info)
	}
	info.KV.Close()
}

// Malformed, truncated, unexpected and missing replies to every request
// end start-up with an error that names the launcher and the request,
// within the timeout, and never hang or panic.
func TestPMIBadReplies(t *testing.T) {
	type bad struct {
		cmd    string
		raw    string
		hangup bool
		want   string
	}
	cases := map[int][]bad{
		1: {
			{"init", "garbage\n", false, "bad reply to init"},
			{"init", "cmd=response_to_init rc=0 pmi_version=2 pmi_subversion=0\n", false, "not 1"},
			{"get_maxes", "cmd=maxes kvsname_max=256 keylen_max=64\n", false, "bad reply to get_maxes: no vallen_max"},
			{"get_maxes", "cmd=maxes vallen_max=ten\n", false, "not a number"},
			{"get_maxes", "cmd=maxes vallen_max=3\n", false, "too small"},
			{"get_appnum", "cmd=wrong appnum=0\n", false, "want cmd=appnum"},
			{"get_my_kvsname", "cmd=my_kvsname rc=0 kvsname=a=b c\n", false, "bad reply to get_my_kvsname"},
			{"get_my_kvsname", "cmd=my_kvsname rc=0 kvsname=", true, "connection closed in the middle"},
			{"get", "cmd=get_result rc=0 msg=success\n", false, "bad reply to get: no value"},
			{"get", "cmd=get_result rc=0 value=x", false, "truncated reply"},
			{"get", "", false, "no reply within 300ms"},
			{"put", "", true, "connection closed"},
			{"put", "cmd=put_result rc=-1 msg=full\n", false, "put failed"},
			{"barrier_in", "cmd=barrier_out rc=1\n", false, "barrier_in failed"},
			{"barrier_in", "cmd=barrier_in\n", false, "want cmd=barrier_out"},
			{"get", strings.Repeat("x", maxLine+10), false, "longer than"},
		},
		2: {
			{"init", "cmd=response_to_init rc=0 pmi_version=1 pmi_subversion=1\n", false, "want pmi_version=2"},
			{"init", "cmd=response_to_init rc=-1 pmi_version=2\n", false, "refused"},
			{"fullinit", "30    cmd=fullinit", false, "truncated reply"},
			{"fullinit", "abcdefcmd=x;", false, "bad length field"},
			{"fullinit", "19    cmd=fullinit-response", false, "not terminated"},
			{"fullinit", m2("cmd=fullinit-response;rank;"), false, "bad reply to fullinit"},
			{"fullinit", m2("cmd=fullinit-response;rc=0;rank=0;size=x;"), false, "size=\"x\" is not a number"},
			{"fullinit", m2("cmd=fullinit-response;rc=0;rank=5;size=1;"), false, "rank 5 of 1"},
			{"fullinit", "999999", true, "connection closed"},
			{"job-getid", m2("cmd=job-getid-response;rc=0;"), false, "no jobid"},
			{"info-getjobattr", m2("cmd=info-getjobattr-response;rc=0;found=TRUE;value=(x);"), false, "bad PMI_process_mapping"},
			{"info-getjobattr", m2("cmd=info-getjobattr-response;rc=0;found=x;"), false, "found=\"x\""},
			{"kvs-put", "", false, "no reply within 300ms"},
			{"kvs-put", m2("cmd=kvs-put-response;rc=3;errmsg=no;"), false, "kvs-put failed with rc=3: no"},
			{"kvs-fence", m2("cmd=kvs-get-response;rc=0;"), false, "want cmd=kvs-fence-response"},
			{"kvs-get", m2("cmd=kvs-get-response;rc=0;found=TRUE;"), false, "no value"},
		},
	}
	for version, cs := range cases {
		for _, c := range cs {
			name := fmt.Sprintf("PMI-%d/%s/%q", version, c.cmd, c.raw)
			if len(name) > 80 {
				name = name[:80]
			}
			t.Run(name, func(t *testing.T) {
				f := newFakePMI(version, 1, "")
				f.bad = func(cmd string) ([]byte, bool) {
					if cmd == c.cmd {
						return []byte(c.raw), c.hangup
					}
					return nil, false
				}
				env := f.rankEnv(t, 0, "MPIGO_PMI_TIMEOUT", "300ms")
				done := make(chan error, 1)
				start := time.Now()
				go func() {
					info, err := detectWith(version, env)
					if err == nil {
						// Requests after start-up: a KV call.
						err = info.KV.Put("k", "v")
						if err == nil {
							_, err = info.KV.Get("k")
						}
					}
					done <- err
				}()
				select {
				case err := <-done:
					if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), fmt.Sprintf("PMI-%d", version)) {
						t.Errorf("error %v, want one naming PMI-%d and saying %q", err, version, c.want)
					}
				case <-time.After(10 * time.Second):
					t.Fatalf("hangs")
				}
				if time.Since(start) > 5*time.Second {
					t.Errorf("took %v", time.Since(start))
				}
			})
		}
	}
}

// m2 frames a PMI-2 message.
func m2(body string) string { return fmt.Sprintf("%-6d%s", len(body), body) }

func TestProcessMapping(t *testing.T) {
	for _, tc := range []struct {
		s    string
		size int
		want []int
	}{
		{"(vector,(0,1,4))", 4, []int{0, 0, 0, 0}},
		{"(vector,(0,2,2))", 4, []int{0, 0, 1, 1}},
		{"(vector,(0,2,1))", 5, []int{0, 1, 0, 1, 0}},
		{"(vector,(0,1,3),(1,2,1))", 5, []int{0, 0, 0, 1, 2}},
		{" (vector,(2,1,2),(0,2,1)) ", 4, []int{2, 2, 0, 1}},
	} {
		got, err := ParseProcessMapping(tc.s, tc.size)
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("%s for %d ranks: %v %v, want %v", tc.s, tc.size, got, err, tc.want)
		}
	}
	for _, bad := range []string{"", "(vector)", "(vector,(0,1))", "(vector,(0,0,1))", "(vector,(a,1,1))", "(vector,(0,1,1)", "(list,(0,1,1))", "(vector,(0,1,-1))", "(vector,0,1,1)"} {
		if _, err := ParseProcessMapping(bad, 4); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestValueEncoding(t *testing.T) {
	for _, s := range []string{"", "127.0.0.1:4000", "[::1]:80", "a b=c;d%e\n\x00\xff", strings.Repeat("%", 10)} {
		e := encodeValue(s)
		if strings.ContainsAny(e, " =;\n\x00") {
			t.Errorf("encodeValue(%q) = %q holds a forbidden byte", s, e)
		}
		if d, err := decodeValue(e); err != nil || d != s {
			t.Errorf("decode(encode(%q)) = %q, %v", s, d, err)
		}
	}
	for _, bad := range []string{"%", "%4", "%zz", "a%g0"} {
		if _, err := decodeValue(bad); err == nil {
			t.Errorf("decodeValue(%q) accepted", bad)
		}
	}
}

// Probe's order: mpigo, PMI-2, PMI-1, PMIx, Open MPI, refusals, singleton.
func TestProbe(t *testing.T) {
	vars := []string{EnvRank, EnvSize, EnvKVS, "PMI_FD", "PMI_PORT", "PMI_ID", "PMI_RANK", "PMI_SIZE", "PMI_JOBID", "PMI_VERSION",
		"MPIGO_PMI", "SLURM_STEP_ID", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "SLURM_STEP_NUM_TASKS",
		"PMIX_NAMESPACE", "PMIX_SERVER_URI41", "PMIX_SERVER_URI4", "PMIX_SERVER_URI3", "PMIX_SERVER_URI21", "PMIX_SERVER_URI2", "MPIGO_PMIX", "MPIGO_PMIX_BFROPS"}
	uri := "srv.0;tcp4://127.0.0.1:4000"
	for _, tc := range []struct {
		env  []string
		want string
		err  string
	}{
		{nil, LauncherSingleton, ""},
		{[]string{EnvRank, "0", EnvSize, "2", EnvKVS, "x", "PMI_FD", "3"}, LauncherMpigo, ""},
		{[]string{"PMI_FD", "3", "PMI_JOBID", "1.0"}, LauncherPMI2, ""},
		{[]string{"PMI_FD", "3", "SLURM_STEP_ID", "0"}, LauncherPMI2, ""},
		{[]string{"PMI_FD", "3", "PMI_VERSION", "2"}, LauncherPMI2, ""},
		{[]string{"PMI_FD", "3", "PMI_JOBID", "1.0", "MPIGO_PMI", "1"}, LauncherPMI1, ""},
		{[]string{"PMI_FD", "3", "MPIGO_PMI", "2"}, LauncherPMI2, ""},
		{[]string{"PMI_FD", "3", "PMI_RANK", "1", "PMI_SIZE", "4"}, LauncherPMI1, ""},
		{[]string{"PMI_PORT", "h:1", "PMI_ID", "0"}, LauncherPMI1, ""},
		{[]string{"OMPI_COMM_WORLD_SIZE", "2", "OMPI_COMM_WORLD_RANK", "1", "PMIX_RANK", "1"}, LauncherOMPI, ""},
		{[]string{"PMIX_RANK", "1"}, LauncherSingleton, "PMIx"},
		{[]string{"PMIX_RANK", "1", "PMIX_NAMESPACE", "n", "PMIX_SERVER_URI41", uri, "SLURM_STEP_NUM_TASKS", "4"}, LauncherPMIx, ""},
		{[]string{"PMIX_RANK", "1", "PMIX_NAMESPACE", "n", "PMIX_SERVER_URI21", uri}, LauncherPMIx, ""},
		{[]string{"OMPI_COMM_WORLD_SIZE", "2", "PMIX_RANK", "1", "PMIX_SERVER_URI3", uri}, LauncherPMIx, ""},
		{[]string{"OMPI_COMM_WORLD_SIZE", "2", "PMIX_RANK", "1", "PMIX_SERVER_URI3", uri, "MPIGO_PMIX", "0"}, LauncherOMPI, ""},
		{[]string{"PMI_FD", "3", "PMI_JOBID", "1.0", "PMIX_RANK", "1", "PMIX_SERVER_URI41", uri}, LauncherPMI2, ""},
		{[]string{"PMIX_RANK", "1", "PMIX_SERVER_URI41", "nonsense"}, LauncherPMIx, "want SERVERNSPACE.RANK;ADDRESS"},
		{[]string{"PMIX_RANK", "1", "PMIX_SERVER_URI2", uri}, LauncherPMIx, "only PMIx 2.0"},
		{[]string{"SLURM_STEP_NUM_TASKS", "4"}, LauncherSingleton, "--mpi=pmi2"},
		{[]string{"SLURM_STEP_NUM_TASKS", "1"}, LauncherSingleton, ""},
	} {
		for _, v := range vars {
			unset(t, v)
		}
		for i := 0; i < len(tc.env); i += 2 {
			t.Setenv(tc.env[i], tc.env[i+1])
		}
		p := Probe(os.LookupEnv)
		if p.Launcher != tc.want || (tc.err == "") != (p.Err == nil) || (p.Err != nil && !strings.Contains(p.Err.Error(), tc.err)) {
			t.Errorf("%v: %+v, want %s (error %q)", tc.env, p, tc.want, tc.err)
		}
	}
}

// memConn is a pmiConn held in memory with a small value limit.
type memConn struct {
	lim int
	m   map[string]string
}

func (c *memConn) put(key, value string) error {
	if len(value) > c.lim || strings.ContainsAny(value, " =;\n") {
		return fmt.Errorf("value %q breaks the limits", value)
	}
	c.m[key] = value
	return nil
}
func (c *memConn) fence() error { return nil }
func (c *memConn) get(key string) (string, bool, error) {
	v, ok := c.m[key]
	return v, ok, nil
}
func (c *memConn) maxValue() int     { return c.lim }
func (c *memConn) finalize() error   { return nil }
func (c *memConn) abort(int, string) {}
func (c *memConn) close() error      { return nil }

// Values of every length, full of bytes that need escapes, survive being
// split into pieces of every limit, and no piece breaks an escape.
func TestPMIKVSplit(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for lim := 8; lim < 40; lim++ {
		for n := 0; n < 200; n += 1 + n/4 {
			const alphabet = "a% =;\n\x00\xffZ"
			b := make([]byte, n)
			for i := range b {
				b[i] = alphabet[rng.IntN(len(alphabet))]
			}
			kv := &pmiKV{c: &memConn{lim: lim, m: map[string]string{}}}
			if err := kv.Put("k", string(b)); err != nil {
				t.Fatalf("lim %d, %d bytes: %v", lim, n, err)
			}
			v, err := kv.Get("k")
			if err != nil || v != string(b) {
				t.Fatalf("lim %d, %d bytes: got %q %v, want %q", lim, n, v, err, b)
			}
		}
	}
}
