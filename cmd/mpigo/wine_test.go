//go:build linux

package main

import (
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestWindowsUnderWine runs mpigo on Windows for real, as far as Wine
// goes: mpigo.exe and test programs cross-built for windows/amd64, a job
// of three ranks over TCP under `mpigo.exe run`, a rank that fails, and a
// launcher killed outright (its Job Object must take the ranks with it)
// or interrupted (Ctrl-C). It skips when Wine is missing (Debian: apt-get
// install wine64 wine), unless MPIGO_REQUIRE_INTEGRATION=1.
func TestWindowsUnderWine(t *testing.T) {
	w := findWine(t)
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	start := time.Now()
	dir := t.TempDir()
	build := exec.Command("go", "build", "-o", dir+"/", ".", "./testdata/collprog", "./testdata/failprog", "./testdata/ring")
	build.Env = append(os.Environ(), "GOOS=windows", "GOARCH=amd64", "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("cross-building for windows/amd64: %v\n%s", err, out)
	}
	t.Logf("cross-built mpigo.exe and 3 programs in %v", time.Since(start).Round(time.Millisecond))
	mark := time.Now()
	w.boot(t)
	t.Logf("Wine prefix %s ready in %v", w.prefix, time.Since(mark).Round(time.Millisecond))

	t.Run("run", func(t *testing.T) {
		// The program is named as on a Windows command line: no path,
		// found in the current folder.
		out, errs, code := w.run(t, dir, 2*time.Minute, "mpigo.exe", "run", "--timeout", "90s", "-n", "3", "collprog.exe")
		want := `collprog: 3 ranks: allreduce 6, bcast "hello from 0", allgather [0 1 4], big allreduce true, alltoall and scan ok` + "\n"
		if code != 0 || out != want {
			t.Fatalf("exit %d, stdout %q, want %q; stderr:\n%s", code, out, want, errs)
		}
	})

	t.Run("fail", func(t *testing.T) {
		// Named as cmd.exe takes it: .\failprog for .\failprog.exe.
		began := time.Now()
		_, errs, code := w.run(t, dir, 2*time.Minute, "mpigo.exe", "run", "--timeout", "90s", "-n", "3", `.\failprog`)
		if code == 0 || code == 124 || !strings.Contains(errs, "rank 1") || !strings.Contains(errs, "on purpose") {
			t.Fatalf("exit %d, stderr does not name the failed rank:\n%s", code, errs)
		}
		if d := time.Since(began); d > 80*time.Second {
			t.Errorf("the job took %v to end", d)
		}
	})

	// A launcher that ends without a word (SIGKILL here, TerminateProcess
	// or the task manager on Windows) or on Ctrl-C leaves no rank running.
	for _, sig := range []syscall.Signal{syscall.SIGKILL, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			pids := t.TempDir()
			winPids := winPath(pids)
			cmd, outb, errb := w.command(context.Background(), dir, "mpigo.exe", "run", "-n", "3", "ring.exe", "-pid", winPids)
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			defer func() {
				cmd.Process.Kill()
				<-done
			}()
			ranks := func() []int { return wineProcs("ring.exe", winPids) }
			t.Cleanup(func() {
				for _, pid := range ranks() {
					syscall.Kill(pid, syscall.SIGKILL)
				}
			})
			deadline := time.Now().Add(90 * time.Second)
			for len(ranks()) < 3 || !filesExist(pids, "pid.0", "pid.1", "pid.2") {
				select {
				case err := <-done:
					done <- err
					t.Fatalf("the launcher ended (%v) before its ranks were running; stderr:\n%s", err, errb)
				case <-time.After(50 * time.Millisecond):
				}
				if time.Now().After(deadline) {
					t.Fatalf("the ranks did not start: %d running; stderr:\n%s", len(ranks()), errb)
				}
			}
			cmd.Process.Signal(sig)
			var err error
			select {
			case err = <-done:
				done <- err
			case <-time.After(60 * time.Second):
				t.Fatalf("the launcher did not end 60 s after %v; stderr:\n%s", sig, errb)
			}
			deadline = time.Now().Add(30 * time.Second)
			for len(ranks()) > 0 {
				if time.Now().After(deadline) {
					t.Fatalf("ranks (Linux pids %v) outlived a launcher ended by %v", ranks(), sig)
				}
				time.Sleep(50 * time.Millisecond)
			}
			if sig == syscall.SIGINT {
				code := cmd.ProcessState.ExitCode()
				if code != 130 || !strings.Contains(errb.String(), "interrupt") {
					t.Errorf("exit %d (%v), want 130 and a word about the interrupt; stdout %q, stderr:\n%s", code, err, outb, errb)
				}
			}
		})
	}
	t.Logf("whole test: %v", time.Since(start).Round(time.Millisecond))
}

// wine is how to run Windows programs here.
type wine struct {
	loader, server, prefix string
}

// findWine finds Wine's loader and server: wine64 (or wine) on PATH, or
// where Debian's wine64 package puts them.
func findWine(t *testing.T) *wine {
	t.Helper()
	first := func(names ...string) string {
		for _, n := range names {
			if p, err := exec.LookPath(n); err == nil {
				return p
			}
		}
		return ""
	}
	w := &wine{
		loader: first("wine64", "wine", "/usr/lib/wine/wine64"),
		server: first("wineserver", "wineserver64", "/usr/lib/wine/wineserver64"),
	}
	if w.loader == "" || w.server == "" {
		why := "Wine is not installed (Debian: apt-get install wine64 wine)"
		if os.Getenv("MPIGO_REQUIRE_INTEGRATION") == "1" {
			t.Fatalf("%s, and MPIGO_REQUIRE_INTEGRATION=1", why)
		}
		t.Skipf("%s; MPIGO_REQUIRE_INTEGRATION=1 makes this a failure", why)
	}
	// A Wine prefix is 700 MB and takes 10-20 s to make: one per user,
	// kept between runs.
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	w.prefix = filepath.Join(cache, "mpigo-test-wine")
	return w
}

// env is the environment Windows programs run in: no debug chatter, and
// no offer to install .NET or a browser engine into a new prefix.
func (w *wine) env() []string {
	return append(os.Environ(), "WINEPREFIX="+w.prefix, "WINEDEBUG=-all", "WINEDLLOVERRIDES=mscoree,mshtml=")
}

// command makes a command that runs a Windows program in dir.
func (w *wine) command(ctx context.Context, dir string, args ...string) (*exec.Cmd, *syncBuf, *syncBuf) {
	cmd := exec.CommandContext(ctx, w.loader, args...)
	cmd.Dir = dir
	cmd.Env = w.env()
	var outb, errb syncBuf
	cmd.Stdout, cmd.Stderr = &outb, &errb
	// Wine's own processes must not keep our pipes open.
	cmd.WaitDelay = 10 * time.Second
	return cmd, &outb, &errb
}

// run runs a Windows program in dir and returns its output and exit code.
func (w *wine) run(t *testing.T, dir string, timeout time.Duration, args ...string) (string, string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd, outb, errb := w.command(ctx, dir, args...)
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("%v did not end within %v; stdout %q, stderr:\n%s", args, timeout, outb, errb)
	}
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		t.Fatalf("%v: %v", args, err)
	}
	return outb.String(), errb.String(), cmd.ProcessState.ExitCode()
}

// boot makes or updates the prefix and starts Wine's server and services
// with no inherited output (so that they hold no test's pipe), and stops
// them all when the test ends.
func (w *wine) boot(t *testing.T) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(w.prefix), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		k := exec.Command(w.server, "-k")
		k.Env = w.env()
		k.Run()
	})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c := exec.CommandContext(ctx, w.loader, "cmd.exe", "/c", "exit 0")
	c.Env = w.env()
	if out, err := c.CombinedOutput(); err != nil {
		t.Fatalf("starting Wine (prefix %s): %v\n%s", w.prefix, err, out)
	}
	// Go programs since Go 1.22 need bcryptprimitives.dll's ProcessPrng,
	// which Windows has had since Windows 10 and Wine since 9.0, not the
	// Wine 8.0 of Debian 12. There, the prefix gets a DLL with that one
	// function, forwarded to advapi32's RtlGenRandom (SystemFunction036),
	// which Wine 8 has; this is Wine's gap, not ours, and nothing in the
	// programs changes.
	dll := filepath.Join(w.prefix, "drive_c", "windows", "system32", "bcryptprimitives.dll")
	if _, err := os.Stat(dll); os.IsNotExist(err) {
		if err := os.WriteFile(dll, processPrngDLL(), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("this Wine has no bcryptprimitives.dll: wrote one that forwards ProcessPrng to advapi32.SystemFunction036")
	}
}

// processPrngDLL returns a PE32+ DLL for amd64 with no code and one export,
// ProcessPrng, forwarded to advapi32.SystemFunction036: the same
// signature for what Go calls (a buffer and its length; a BOOLEAN, of
// which Go reads the low byte).
func processPrngDLL() []byte {
	const (
		fileAlign = 0x200
		secRVA    = 0x1000 // the one section, .edata: the export directory
		pe        = 0x40   // where the PE header starts
	)
	b := make([]byte, 2*fileAlign)
	le := binary.LittleEndian
	copy(b, "MZ")
	le.PutUint32(b[0x3c:], pe)
	copy(b[pe:], "PE\x00\x00")
	coff := b[pe+4:]
	le.PutUint16(coff[0:], 0x8664)  // IMAGE_FILE_MACHINE_AMD64
	le.PutUint16(coff[2:], 1)       // one section
	le.PutUint16(coff[16:], 240)    // size of the PE32+ optional header
	le.PutUint16(coff[18:], 0x2022) // executable image, large address aware, DLL
	opt := coff[20:]
	le.PutUint16(opt[0:], 0x20b)        // PE32+
	le.PutUint64(opt[24:], 0x180000000) // image base
	le.PutUint32(opt[32:], 0x1000)      // section alignment
	le.PutUint32(opt[36:], fileAlign)
	le.PutUint16(opt[40:], 6)         // operating system 6.0
	le.PutUint16(opt[48:], 6)         // subsystem 6.0
	le.PutUint32(opt[56:], 0x2000)    // size of the image
	le.PutUint32(opt[60:], fileAlign) // size of the headers
	le.PutUint16(opt[68:], 3)         // console subsystem
	le.PutUint64(opt[72:], 0x100000)  // stack reserve, commit, heap reserve, commit
	le.PutUint64(opt[80:], 0x1000)
	le.PutUint64(opt[88:], 0x100000)
	le.PutUint64(opt[96:], 0x1000)
	le.PutUint32(opt[108:], 16) // data directories
	e := b[fileAlign:]
	off := 40 // after the export directory
	put := func(n int) uint32 { r := uint32(secRVA + off); off += n; return r }
	str := func(s string) uint32 { r := put(len(s) + 1); copy(e[r-secRVA:], s); return r }
	functions, names, ordinals := put(4), put(4), put(2)
	dllName, name := str("bcryptprimitives.dll"), str("ProcessPrng")
	forward := str("advapi32.SystemFunction036") // inside the directory: a forwarder
	le.PutUint32(e[12:], dllName)
	le.PutUint32(e[16:], 1) // ordinal base
	le.PutUint32(e[20:], 1) // functions
	le.PutUint32(e[24:], 1) // names
	le.PutUint32(e[28:], functions)
	le.PutUint32(e[32:], names)
	le.PutUint32(e[36:], ordinals)
	le.PutUint32(e[functions-secRVA:], forward)
	le.PutUint32(e[names-secRVA:], name)
	le.PutUint32(opt[112:], secRVA) // the export directory and its size
	le.PutUint32(opt[116:], uint32(off))
	sec := opt[240:]
	copy(sec, ".edata")
	le.PutUint32(sec[8:], uint32(off)) // virtual size
	le.PutUint32(sec[12:], secRVA)
	le.PutUint32(sec[16:], fileAlign) // raw size and where
	le.PutUint32(sec[20:], fileAlign)
	le.PutUint32(sec[36:], 0x40000040) // initialized data, readable
	return b
}

// winPath is how Wine's Windows programs name the Linux path p (Wine maps
// drive Z: to /).
func winPath(p string) string { return `Z:` + strings.ReplaceAll(p, "/", `\`) }

// wineProcs returns the Linux pids of the Windows processes running
// program (its first word ends so) with an argument that contains arg.
func wineProcs(program, arg string) []int {
	var pids []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		var pid int
		if _, err := fmt.Sscan(e.Name(), &pid); err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		f := strings.Fields(strings.ReplaceAll(string(b), "\x00", " "))
		if len(f) > 1 && strings.HasSuffix(strings.Trim(f[0], `"`), program) && strings.Contains(string(b), arg) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// filesExist reports whether every name exists in dir.
func filesExist(dir string, names ...string) bool {
	for _, n := range names {
		if _, err := os.Stat(filepath.Join(dir, n)); err != nil {
			return false
		}
	}
	return true
}
