package main

import (
	"encoding/binary"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Slurm's PMIx server (slurmstepd, libpmix) accepts security mode munge:
// ranks that introduce themselves with a credential from munged
// (MPIGO_PMIX_SECURITY=munge) run the ring; ranks whose "munged" hands
// out a forged credential are refused by the server, and say so.
func TestSrunPMIxMunge(t *testing.T) {
	srun := needSlurmPMIx(t)
	dir := testProgs(t)
	ring := filepath.Join(dir, "ring")

	c := exec.Command(srun, append(srunPMIxArgs(2), ring)...)
	c.Env = append(os.Environ(), "MPIGO_PMIX_SECURITY=munge")
	out, errs, code := runLaunched(t, c, 60*time.Second)
	if code != 0 || !strings.Contains(out, "token is 20 after 10 laps of 2 ranks") {
		t.Errorf("munge: exit %d\nstdout: %s\nstderr: %s", code, out, errs)
	}

	// A forger: a socket that answers every encode request with a
	// credential munged never made.
	sock := filepath.Join(t.TempDir(), "forged.socket")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				conn.SetDeadline(time.Now().Add(10 * time.Second))
				var h [11]byte
				if _, err := io.ReadFull(conn, h[:]); err != nil {
					return
				}
				io.CopyN(io.Discard, conn, int64(binary.BigEndian.Uint32(h[7:])))
				cred := "MUNGE:AwQFAACbm90IGEgY3JlZGVudGlhbCBmcm9tIG11bmdlZCBhdCBhbGwK:\x00"
				body := binary.BigEndian.AppendUint32([]byte{0, 0}, uint32(len(cred)))
				body = append(body, cred...)
				hdr := []byte{0, 0x60, 0x6d, 0x4b, 4, 3, 0}
				hdr = binary.BigEndian.AppendUint32(hdr, uint32(len(body)))
				conn.Write(append(hdr, body...))
			}()
		}
	}()
	c = exec.Command(srun, append(srunPMIxArgs(1), ring)...)
	c.Env = append(os.Environ(), "MPIGO_PMIX_SECURITY=munge", "MPIGO_MUNGE_SOCKET="+sock, "MPIGO_PMI_TIMEOUT=10s")
	start := time.Now()
	out, errs, code = runLaunched(t, c, 60*time.Second)
	t.Logf("forged: %v: %s", time.Since(start), errs)
	if code == 0 || !strings.Contains(errs, "security mode munge") || !strings.Contains(errs, "PMIx server at") {
		t.Errorf("forged credential: exit %d\nstdout: %s\nstderr: %s", code, out, errs)
	}
}
