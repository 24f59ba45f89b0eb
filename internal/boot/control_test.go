package boot

import (
	"strings"
	"testing"
)

// A store without a spawner says so; with a name service it publishes,
// finds and withdraws names, and refuses what it cannot do.
func TestControlRequests(t *testing.T) {
	secret := []byte("0123456789abcdef0123456789abcdef")
	s, err := NewServer("127.0.0.1:0", 1, secret)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	info := &Info{KVSAddr: s.Addr(), Secret: secret}
	ask := func(req string) string {
		t.Helper()
		c, r, err := DialControl(info)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if _, err := c.Write([]byte(req + "\n")); err != nil {
			t.Fatal(err)
		}
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(line)
	}
	if got := ask("spawn {}"); got != "err this launcher cannot spawn" {
		t.Errorf("spawn without a spawner: %q", got)
	}
	if got := ask("lookup x"); !strings.HasPrefix(got, "err") {
		t.Errorf("lookup without names: %q", got)
	}
	s.SetNames(NewNames())
	for _, c := range []struct{ req, want string }{
		{"publish P1 svc one", "ok"},
		{"publish P2 svc one", `err the name "svc one" is already published`},
		{"lookup svc one", "val P1"},
		{"unpublish P2 svc one", `err the name "svc one" is not published with that port`},
		{"unpublish P1 svc one", "ok"},
		{"lookup svc one", `err the name "svc one" is not published`},
	} {
		if got := ask(c.req); got != c.want {
			t.Errorf("%s: %q, want %q", c.req, got, c.want)
		}
	}
}

func TestParseNameServer(t *testing.T) {
	secret := make([]byte, 32)
	good := FormatNameServer("127.0.0.1:4000", secret)
	for _, tt := range []struct {
		v  string
		ok bool
	}{
		{good, true},
		{" " + good + "\n", true},
		{"", false},
		{"127.0.0.1:4000", false},
		{"127.0.0.1/00", false},
		{"127.0.0.1:4000/zz", false},
		{"127.0.0.1:4000/0011", false},               // too short a secret
		{"/" + good[len("127.0.0.1:4000/"):], false}, // no address
		{"127.0.0.1:4000/" + string(make([]byte, 200)), false},
	} {
		addr, s, err := ParseNameServer(tt.v)
		if (err == nil) != tt.ok {
			t.Errorf("ParseNameServer(%q): %v, want ok %v", tt.v, err, tt.ok)
		}
		if tt.ok && (addr != "127.0.0.1:4000" || len(s) != 32) {
			t.Errorf("ParseNameServer(%q) = %q, %d bytes", tt.v, addr, len(s))
		}
	}
}
