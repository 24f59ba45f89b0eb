package boot

import (
	"bytes"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// needMunged returns the socket of a munged that answers, or skips (fails
// under MPIGO_REQUIRE_INTEGRATION=1).
func needMunged(t *testing.T) string {
	t.Helper()
	sock := mungeSocket(getenvOS)
	if _, err := mungeEncode(sock, nil, mungeAny, 5*time.Second); err != nil {
		if os.Getenv("MPIGO_REQUIRE_INTEGRATION") == "1" {
			t.Fatalf("munged does not answer (%v), and MPIGO_REQUIRE_INTEGRATION=1 (apt-get install munge; .ci/slurm-setup.sh starts it)", err)
		}
		t.Skipf("munged does not answer (%v): apt-get install munge and start munged (.ci/slurm-setup.sh); MPIGO_REQUIRE_INTEGRATION=1 makes this a failure", err)
	}
	return sock
}

func getenvOS(k string) (string, bool) { return os.LookupEnv(k) }

// unmunge checks cred with the munge package's own tool and returns what
// it reports (UID:, GID:, ...) and the payload.
func unmunge(t *testing.T, sock, cred string) (map[string]string, []byte) {
	t.Helper()
	if _, err := exec.LookPath("unmunge"); err != nil {
		t.Skip("unmunge is not installed (apt-get install munge)")
	}
	meta := filepath.Join(t.TempDir(), "meta")
	cmd := exec.Command("unmunge", "--socket", sock, "--metadata", meta)
	cmd.Stdin = strings.NewReader(cred)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("unmunge refuses our credential: %v", err)
	}
	m, err := os.ReadFile(meta)
	if err != nil {
		t.Fatal(err)
	}
	fields := map[string]string{}
	for _, line := range strings.Split(string(m), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok {
			fields[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	return fields, out
}

// A credential made through our client is one munge's own tools accept,
// with our uid, gid and payload; our decoder reads the same; a replay and
// a forgery are refused.
func TestMungeRoundTrip(t *testing.T) {
	sock := needMunged(t)
	payload := []byte("mpigo payload \x00\xff")
	cred, err := mungeEncode(sock, payload, mungeAny, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(cred, "MUNGE:") || !strings.HasSuffix(cred, ":") {
		t.Fatalf("credential %q", cred)
	}
	fields, out := unmunge(t, sock, cred)
	uid, gid := strconv.Itoa(os.Geteuid()), strconv.Itoa(os.Getegid())
	if !strings.HasSuffix(fields["UID"], "("+uid+")") || !strings.HasSuffix(fields["GID"], "("+gid+")") {
		t.Errorf("unmunge says UID %q GID %q, want %s and %s", fields["UID"], fields["GID"], uid, gid)
	}
	if !bytes.Equal(out, payload) {
		t.Errorf("unmunge payload %q, want %q", out, payload)
	}

	// Our own decoder, on a fresh credential (the first was used up).
	cred, err = mungeEncode(sock, payload, uint32(os.Geteuid()), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	c, err := mungeDecode(sock, cred, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if c.UID != uint32(os.Geteuid()) || c.GID != uint32(os.Getegid()) || c.AuthUID != uint32(os.Geteuid()) || !bytes.Equal(c.Payload, payload) {
		t.Errorf("decoded %+v", c)
	}
	if d := time.Since(c.Encoded); d < -time.Minute || d > time.Minute {
		t.Errorf("encoded at %v", c.Encoded)
	}
	var me *mungeError
	if _, err := mungeDecode(sock, cred, 5*time.Second); !errors.As(err, &me) || me.Num != 17 || !strings.Contains(err.Error(), "replayed") {
		t.Errorf("replay: %v", err)
	}
	forged := cred[:len(cred)/2] + "A" + cred[len(cred)/2+1:]
	if forged == cred {
		forged = cred[:len(cred)/2] + "B" + cred[len(cred)/2+1:]
	}
	if _, err := mungeDecode(sock, forged, 5*time.Second); !errors.As(err, &me) {
		t.Errorf("forgery: %v", err)
	}
}

// A munged that is not there, or a socket that speaks something else,
// gives an error naming munged and the socket, within the time allowed.
func TestMungeFailures(t *testing.T) {
	dir := t.TempDir()
	if _, err := mungeEncode(filepath.Join(dir, "none"), nil, mungeAny, time.Second); err == nil || !strings.Contains(err.Error(), "is munged running?") {
		t.Errorf("no socket: %v", err)
	}
	for _, tc := range []struct {
		name  string
		reply []byte // nil: never answer
		want  string
	}{
		{"garbage", []byte("HTTP/1.1 400 Bad Request\r\n\r\n"), "not munged"},
		{"silent", nil, "no reply in time"},
		{"short", mungeHeader(mungeEncRsp, 100), "closed after 0 bytes"},
		{"huge", mungeHeader(mungeEncRsp, 1<<30), "at most"},
		{"type", mungeHeader(mungeDecRsp, 0), "type 5"},
		{"refused", append(mungeHeader(mungeEncRsp, 8), 6, 2, 'x', 0, 0, 0, 0, 0), "socket error (x)"},
	} {
		sock := filepath.Join(dir, tc.name)
		ln, err := net.Listen("unix", sock)
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close()
			if tc.reply == nil {
				time.Sleep(2 * time.Second)
				return
			}
			readMungeMsg(c, mungeEncReq)
			c.Write(tc.reply)
		}()
		start := time.Now()
		_, err = mungeEncode(sock, []byte("p"), mungeAny, 500*time.Millisecond)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), sock) {
			t.Errorf("%s: %v, want %q and the socket", tc.name, err, tc.want)
		}
		if d := time.Since(start); d > 1500*time.Millisecond {
			t.Errorf("%s: took %v", tc.name, d)
		}
		ln.Close()
	}
}

// The decoders read what the encoders of munged's format write.
func TestMungeWire(t *testing.T) {
	// A decode reply as munged sends it.
	b := []byte{0, 0, 1, 2, 0, 0} // ok, no message, cipher/mac/zip, no realm
	b = append(b, 0, 0, 1, 44)    // ttl 300
	b = append(b, 4, 10, 0, 0, 1) // address
	b = append(b, 0, 0, 0, 100, 0, 0, 0, 101)
	b = append(b, 0, 0, 3, 232, 0, 0, 3, 233, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff)
	b = append(b, 0, 0, 0, 2, 'h', 'i')
	c, err := parseMungeDecodeRsp(b)
	if err != nil || c.UID != 1000 || c.GID != 1001 || c.AuthUID != mungeAny || string(c.Payload) != "hi" || c.Addr.String() != "10.0.0.1" || c.Encoded.Unix() != 100 {
		t.Errorf("%+v %v", c, err)
	}
	for i := range b {
		if _, err := parseMungeDecodeRsp(b[:i]); err == nil || !strings.Contains(err.Error(), "early") {
			t.Errorf("cut at %d: %v", i, err)
		}
	}
	req := mungeEncodeReq([]byte("xy"), 7)
	if want := []byte{1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 7, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 2, 'x', 'y'}; !bytes.Equal(req, want) {
		t.Errorf("encode request % x", req)
	}
	if h := mungeHeader(mungeDecReq, 5); !bytes.Equal(h, []byte{0, 0x60, 0x6d, 0x4b, 4, 4, 0, 0, 0, 0, 5}) {
		t.Errorf("header % x", h)
	}
}
