package boot

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// ompiEnv is what Open MPI's mpirun puts in the environment of rank r (the
// part mpigo reads), plus extra NAME, VALUE pairs.
func ompiEnv(r, size int, job string, extra ...string) lookupFunc {
	env := map[string]string{
		"OMPI_COMM_WORLD_RANK":       strconv.Itoa(r),
		"OMPI_COMM_WORLD_SIZE":       strconv.Itoa(size),
		"OMPI_COMM_WORLD_LOCAL_SIZE": strconv.Itoa(size),
		"OMPI_MCA_ess_base_jobid":    job,
		"PMIX_NAMESPACE":             job,
	}
	for i := 0; i+1 < len(extra); i += 2 {
		env[extra[i]] = extra[i+1]
	}
	return func(k string) (string, bool) { v, ok := env[k]; return v, ok }
}

// ompiJob starts size ranks' detection at once and checks what they agree
// on; it returns their Infos.
func ompiJob(t *testing.T, size int, env func(r int) lookupFunc) []*Info {
	t.Helper()
	infos := make([]*Info, size)
	errs := make([]error, size)
	var wg sync.WaitGroup
	for r := range size {
		wg.Add(1)
		go func() {
			defer wg.Done()
			info, err := detectOMPI(env(r))
			if err != nil {
				errs[r] = err
				return
			}
			infos[r] = info
			if err := info.KV.Put("addr."+strconv.Itoa(r), fmt.Sprintf("host %d", r)); err != nil {
				errs[r] = err
				return
			}
			if err := info.KV.Fence(); err != nil {
				errs[r] = err
				return
			}
			for p := range size {
				if v, err := info.KV.Get("addr." + strconv.Itoa(p)); err != nil || v != fmt.Sprintf("host %d", p) {
					errs[r] = fmt.Errorf("get addr.%d: %q %v", p, v, err)
					return
				}
			}
			errs[r] = info.KV.Fence() // nobody closes the store while others read
		}()
	}
	wg.Wait()
	for r, err := range errs {
		if err != nil {
			t.Fatalf("rank %d: %v", r, err)
		}
	}
	all := make([]int, size)
	for i := range all {
		all[i] = i
	}
	for r, info := range infos {
		if info.Rank != r || info.Size != size || info.Launcher != LauncherOMPI || !slices.Equal(info.NodeRanks, all) || info.LocalRank != r {
			t.Errorf("rank %d: %+v", r, info)
		}
		if string(info.Secret) != string(infos[0].Secret) || len(info.Secret) != 32 || info.JobID != infos[0].JobID {
			t.Errorf("rank %d: secret or job id differs from rank 0's", r)
		}
	}
	for r := size - 1; r >= 0; r-- { // rank 0, which serves the store, last
		infos[r].KV.Close()
	}
	return infos
}

// One node: rank 0 publishes its store's address in the session directory.
func TestOMPIOneNode(t *testing.T) {
	dir := t.TempDir()
	job := fmt.Sprintf("%d", time.Now().UnixNano())
	ompiJob(t, 3, func(r int) lookupFunc {
		return ompiEnv(r, 3, job, "OMPI_MCA_orte_num_nodes", "1", "OMPI_MCA_orte_jobfam_session_dir", dir)
	})
	if left, _ := filepath.Glob(filepath.Join(dir, "mpigo-kvs-*")); len(left) > 0 {
		t.Errorf("rank 0 left %v", left)
	}
}

// Several nodes: rank 0 serves on a port derived from the job id; a
// store of another job already on that port is passed over. The store is
// authenticated by MPIGO_JOB_SECRET, else by munge.
func TestOMPISeveralNodes(t *testing.T) {
	for _, mode := range []string{"secret", "munge"} {
		t.Run(mode, func(t *testing.T) {
			extra := []string{"OMPI_MCA_orte_num_nodes", "2", "OMPI_COMM_WORLD_LOCAL_SIZE", "2",
				"OMPI_MCA_orte_hnp_uri", "1.0;tcp://127.0.0.1:1;tcp6://[::1]:2"}
			if mode == "munge" {
				needMunged(t)
			} else {
				extra = append(extra, EnvJobSecret, "correct horse battery staple")
			}
			job := fmt.Sprintf("%s%d", mode, time.Now().UnixNano())
			port0 := ompiPortBase + int(jobIDOf("ompi/"+job)%ompiPortRange)
			if other, err := NewServer("127.0.0.1:"+strconv.Itoa(port0), 1, nil); err == nil {
				other.Preset("mpigo.job", "another job")
				defer other.Close()
			}
			ompiJob(t, 3, func(r int) lookupFunc { return ompiEnv(r, 3, job, extra...) })
		})
	}
	if h, err := ompiHost(ompiEnv(0, 1, "j", "OMPI_MCA_orte_hnp_uri", "1097269248.0;tcp://192.0.2.2,10.0.0.1:50563;tcp6://[fd00::2]:43457")); h != "192.0.2.2" || err != nil {
		t.Errorf("host from hnp_uri: %q %v", h, err)
	}
	if _, err := ompiHost(ompiEnv(0, 1, "j")); err == nil || !strings.Contains(err.Error(), "MPIGO_OMPI_HOST") {
		t.Errorf("no host: %v", err)
	}
	several := []string{"OMPI_MCA_orte_num_nodes", "2", "MPIGO_OMPI_HOST", "127.0.0.1"}
	for _, tc := range []struct {
		env  []string
		want string
	}{
		{append(several, EnvJobSecret, "short"), "MPIGO_JOB_SECRET is 5 characters long"},
		{append(several, "MPIGO_MUNGE_SOCKET", filepath.Join(t.TempDir(), "none")), "set MPIGO_JOB_SECRET to the same secret for every rank"},
	} {
		if _, err := detectOMPI(ompiEnv(0, 2, "nosecret", tc.env...)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want %q", tc.env, err, tc.want)
		}
	}
}

// findStore finds the store rank 0 of job serves on one of its ports, by
// its greeting.
func findStore(t *testing.T, job, greeting string) string {
	t.Helper()
	port0 := ompiPortBase + int(jobIDOf("ompi/"+job)%ompiPortRange)
	for try := 0; try < 500; try++ {
		for i := range ompiPortTries {
			addr := "127.0.0.1:" + strconv.Itoa(port0+i)
			c, err := net.DialTimeout("tcp", addr, time.Second)
			if err != nil {
				continue
			}
			c.SetDeadline(time.Now().Add(2 * time.Second))
			line, _ := bufio.NewReader(c).ReadString('\n')
			c.Close()
			if strings.HasPrefix(line, greeting) {
				return addr
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("rank 0 serves no store")
	return ""
}

// strangerSays sends the store at addr one handshake line and returns
// the store's answer.
func strangerSays(t *testing.T, addr string, line func(greeting string) string) string {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(15 * time.Second))
	r := bufio.NewReader(c)
	g, err := r.ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(c, line(strings.TrimSpace(g))+"\n")
	ans, _ := r.ReadString('\n')
	if strings.HasPrefix(ans, "ok") {
		// Let in: does it answer requests?
		io.WriteString(c, "get mpigo.job\n")
		v, _ := r.ReadString('\n')
		ans += v
	}
	return strings.TrimSpace(ans)
}

// Several nodes: the store rank 0 serves refuses a stranger's connection,
// whatever it offers: nothing, a wrong secret, a rank's handshake relayed
// from another port, a forged munge credential, one made for another
// greeting, or (when the test runs as root) the credential of another
// user made for this very exchange.
func TestOMPISeveralNodesStranger(t *testing.T) {
	for _, mode := range []string{"secret", "munge"} {
		t.Run(mode, func(t *testing.T) {
			extra := []string{"OMPI_MCA_orte_num_nodes", "2", "MPIGO_OMPI_HOST", "127.0.0.1"}
			greeting := kvsGreeting + " munge "
			sock := ""
			if mode == "munge" {
				sock = needMunged(t)
			} else {
				extra = append(extra, EnvJobSecret, "correct horse battery staple")
				greeting = kvsGreeting + " "
			}
			job := fmt.Sprintf("stranger%s%d", mode, time.Now().UnixNano())
			env := func(r int) lookupFunc { return ompiEnv(r, 2, job, extra...) }
			done := make(chan error, 1)
			var info0 *Info
			go func() {
				var err error
				info0, err = detectOMPI(env(0))
				done <- err
			}()
			addr := findStore(t, job, greeting)
			_, port, _ := net.SplitHostPort(addr)
			nonce := strings.Repeat("ab", 32)
			refused := func(what, ans string) {
				if !strings.HasPrefix(ans, "err") {
					t.Errorf("%s: the store answered %q", what, ans)
				}
			}
			refused("no secret", strangerSays(t, addr, func(string) string { return "auth -" }))
			refused("wrong secret", strangerSays(t, addr, func(g string) string {
				sn := g[strings.LastIndexByte(g, ' ')+1:]
				return "auth " + nonce + " " + storeMAC([]byte("guess"), "client", sn, nonce)
			}))
			for _, secret := range [][]byte{nil, []byte("correct horse battery staple")} {
				if kv, err := DialTimeout(addr, 1, secret, 2*time.Second); err == nil {
					if _, err := kv.Get("mpigo.job"); err == nil {
						t.Errorf("secret %q: the store answered", secret)
					}
					kv.Close()
				}
			}
			// A stranger who took another port relays what an honest
			// rank sends it to the store: the store is for another port.
			relay, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer relay.Close()
			go func() {
				for {
					c, err := relay.Accept()
					if err != nil {
						return
					}
					s, err := net.Dial("tcp", addr)
					if err != nil {
						c.Close()
						return
					}
					go func() { io.Copy(s, c); s.Close() }()
					go func() { io.Copy(c, s); c.Close() }()
				}
			}()
			auth, err := ompiSeveralNodesAuth(env(1), job)
			if err != nil {
				t.Fatal(err)
			}
			if kv, err := auth.dial(relay.Addr().String(), 1, 5*time.Second); err == nil {
				t.Errorf("a rank's handshake relayed from another port was let in")
				kv.Close()
			} else if !strings.Contains(err.Error(), "not this job's") && !strings.Contains(err.Error(), "not this user's job") {
				t.Errorf("relayed: %v", err)
			}
			if mode == "munge" {
				refused("forged credential", strangerSays(t, addr, func(string) string {
					return "auth munge " + nonce + " MUNGE:AwQFAACbm90IGEgY3JlZGVudGlhbAo=:"
				}))
				// A credential of ours, but for another exchange.
				refused("credential for another greeting", strangerSays(t, addr, func(string) string {
					cred, err := mungeEncode(sock, mungePayload("client", strings.Repeat("cd", 32), nonce, port), mungeAny, 5*time.Second)
					if err != nil {
						t.Fatal(err)
					}
					return "auth munge " + nonce + " " + cred
				}))
				if os.Geteuid() == 0 {
					if runuser, err := exec.LookPath("runuser"); err == nil {
						refused("another user's credential", strangerSays(t, addr, func(g string) string {
							sn := g[strings.LastIndexByte(g, ' ')+1:]
							cmd := exec.Command(runuser, "-u", "nobody", "--", "munge", "--socket", sock)
							cmd.Stdin = strings.NewReader(string(mungePayload("client", sn, nonce, port)))
							out, err := cmd.Output()
							if err != nil {
								t.Skipf("munge as nobody: %v", err)
							}
							return "auth munge " + nonce + " " + strings.TrimSpace(string(out))
						}))
					}
				}
			}
			info1, err := detectOMPI(env(1))
			if err != nil {
				t.Fatal(err)
			}
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			info1.KV.Close()
			info0.KV.Close()
		})
	}
}

// A rank whose rank 0 never shows up gives up with a clear error.
func TestOMPINoRankZero(t *testing.T) {
	_, err := detectOMPI(ompiEnv(1, 2, "lonely", "OMPI_MCA_orte_jobfam_session_dir", t.TempDir(), "MPIGO_PMI_TIMEOUT", "300ms"))
	if err == nil || !strings.Contains(err.Error(), "Open MPI (mpirun): rank 0 did not publish its store") {
		t.Errorf("%v", err)
	}
	for _, env := range []lookupFunc{
		ompiEnv(2, 2, "j"),
		ompiEnv(0, 2, ""),
		func(k string) (string, bool) { return os.LookupEnv("MPIGO_NO_SUCH_VARIABLE") },
	} {
		if _, err := detectOMPI(env); err == nil || !strings.Contains(err.Error(), "Open MPI (mpirun)") {
			t.Errorf("bad environment accepted: %v", err)
		}
	}
}

// One node: the store rank 0 serves refuses connections that do not prove
// the secret in the rendezvous file.
func TestOMPIOneNodeAuthenticated(t *testing.T) {
	dir := t.TempDir()
	job := fmt.Sprintf("auth%d", time.Now().UnixNano())
	env := func(r int) lookupFunc {
		return ompiEnv(r, 2, job, "OMPI_MCA_orte_num_nodes", "1", "OMPI_MCA_orte_jobfam_session_dir", dir)
	}
	done := make(chan error, 1)
	var info0 *Info
	go func() {
		var err error
		info0, err = detectOMPI(env(0))
		done <- err
	}()
	var b []byte
	for i := 0; ; i++ {
		files, _ := filepath.Glob(filepath.Join(dir, "mpigo-kvs-*"))
		if len(files) == 1 && !strings.HasSuffix(files[0], ".tmp") {
			var err error
			if b, err = os.ReadFile(files[0]); err == nil {
				break
			}
		}
		if i > 500 {
			t.Fatal("rank 0 published no store")
		}
		time.Sleep(10 * time.Millisecond)
	}
	addr, sec, ok := strings.Cut(string(b), "\n")
	if !ok || len(sec) != 64 {
		t.Fatalf("rendezvous file %q", b)
	}
	for _, secret := range [][]byte{nil, make([]byte, 32)} {
		if kv, err := DialTimeout(addr, 1, secret, 2*time.Second); err == nil {
			if _, err := kv.Get("mpigo.job"); err == nil {
				t.Errorf("secret %x: the store answered", secret)
			}
			kv.Close()
		}
	}
	info1, err := detectOMPI(env(1))
	if err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	info1.KV.Close()
	info0.KV.Close()
}
