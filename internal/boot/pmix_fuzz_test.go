package boot

import (
	"encoding/binary"
	"io"
	"net"
	"testing"
	"time"
)

// pmixSeedJobInfo is a reply to REQ like the servers send: the namespace,
// job-level keys, a rank's blob, a node array.
func pmixSeedJobInfo(flex bool) []byte {
	e := &pmixEnc{flex: flex}
	e.count(1)
	e.str("slurm.pmix.187.0")
	e.count(1)
	e.kval(PMIxJobSize, pmixVal{Type: pmixUint32, V: uint32(2)})
	e.count(1)
	e.kval("pmix.nlist", pmixVal{Type: pmixString, V: "vm"})
	b := &pmixEnc{flex: flex}
	b.count(1)
	b.u32(1)
	b.count(1)
	b.str(PMIxLocalRank)
	b.u16(pmixUint16)
	b.u16(1)
	e.count(1)
	e.kval("pmix.pblob", pmixVal{Type: pmixByteObject, V: b.b})
	e.count(1)
	e.str("pmix.node.arr")
	e.u16(pmixDataArray)
	e.u16(pmixTInfo)
	e.size(2)
	e.info(pmixInfo{Key: PMIxHostname, Val: pmixVal{Type: pmixString, V: "vm"}})
	e.info(pmixInfo{Key: PMIxLocalPeers, Val: pmixVal{Type: pmixString, V: "0,1"}})
	return e.b
}

// pmixSeedGetReply is a reply to GET: status 0, one byte object.
func pmixSeedGetReply(flex bool) []byte {
	e := &pmixEnc{flex: flex}
	e.count(1)
	e.i32(0)
	b := &pmixEnc{flex: flex}
	b.count(1)
	b.proc(pmixProcID{"slurm.pmix.187.0", 1})
	b.count(1)
	b.kval("mpigo.tcp.1", pmixVal{Type: pmixByteObject, V: []byte("127.0.0.1:4000")})
	e.count(1)
	e.size(len(b.b))
	return append(e.b, b.b...)
}

// The decoder turns any bytes into values or an error: no panic, no
// allocation beyond what the bytes justify.
func FuzzPMIxDecode(f *testing.F) {
	for _, flex := range []bool{true, false} {
		f.Add(pmixSeedJobInfo(flex), flex)
		f.Add(pmixSeedGetReply(flex), flex)
	}
	f.Add([]byte("\x02\x22slurm.pmix.187.0\x00\x02\x1apmix.job.size\x00\x27\x0e\x08\xff\xff\xff\xff\x0f"), true)
	f.Add([]byte{}, false)
	f.Fuzz(func(t *testing.T, b []byte, flex bool) {
		c := newPMIxClient(PMIxServer{Flex: flex}, pmixProcID{"slurm.pmix.187.0", 0}, time.Second, time.Second)
		if err := c.readJobInfo(&pmixDec{b: b, flex: flex}); err == nil {
			c.LocalPeers(1 << 10)
		}
		d := &pmixDec{b: b, flex: flex}
		if _, err := d.status(); err == nil {
			readGetReply(d)
		}
		d = &pmixDec{b: b, flex: flex}
		for d.more() {
			if _, err := d.typed(0); err != nil {
				break
			}
		}
	})
}

// The client's start (handshake, then the job info) with a server that
// answers anything: an error or a client, within the timeout.
func FuzzPMIxHandshake(f *testing.F) {
	ok := []byte{0, 0, 0, 0, 0, 0, 0, 3}
	for _, flex := range []bool{true, false} {
		body := pmixSeedJobInfo(flex)
		h := make([]byte, 16)
		binary.BigEndian.PutUint32(h[4:], 101)
		binary.BigEndian.PutUint32(h[8:], uint32(len(body)))
		f.Add(append(append(append([]byte{}, ok...), h...), body...), flex)
	}
	f.Add(ok, true)
	f.Add([]byte{0xff, 0xff, 0xff, 0xd2}, true)
	f.Add([]byte("HTTP/1.1 400 Bad Request\r\n\r\n"), false)
	f.Add(append(append([]byte{}, ok...), 0, 0, 0, 0, 0, 0, 0, 101, 0xff, 0xff, 0xff, 0xff), true)
	f.Fuzz(func(t *testing.T, reply []byte, flex bool) {
		a, b := net.Pipe()
		defer b.Close()
		srv := PMIxServer{URI: "s.0;tcp4://127.0.0.1:1", Var: "PMIX_SERVER_URI41", Network: "tcp", Version: "4.1.0", Bfrops: "v41", Flex: flex}
		if !flex {
			srv.Version, srv.Bfrops = "3.1.0", "v3"
		}
		c := newPMIxClient(srv, pmixProcID{"slurm.pmix.187.0", 0}, 100*time.Millisecond, 100*time.Millisecond)
		go func() {
			if _, _, err := readHandshake(b); err != nil {
				t.Errorf("the client's handshake: %v", err)
			}
			b.SetWriteDeadline(time.Now().Add(time.Second))
			b.Write(reply)
			io.Copy(io.Discard, b)
		}()
		start := time.Now()
		if err := c.start(a); err == nil {
			c.Close()
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("start took %v", d)
		}
	})
}
