//go:build cgo && mpigo_ofi && linux

package ofi

/*
#cgo LDFLAGS: -ldl
#define _GNU_SOURCE
#include <dlfcn.h>
#include <signal.h>
#include <string.h>

// libfabric's PSM provider links libinfinipath, whose constructor, unless
// IPATH_NO_BACKTRACE is set, installs handlers for SIGINT, SIGTERM,
// SIGSEGV and others that print a backtrace and call exit(). The Go
// runtime starts after the libraries' constructors and forwards to the
// handlers it found there: a SIGTERM (mpigo run stopping a job) then ran
// exit() from a signal handler instead of killing the rank, and when it
// came during libfabric's start, with the loader's lock held, the rank
// deadlocked in exit() for ever (one stop in three of a job whose other
// host failed). This constructor runs after the libraries' and before the
// Go runtime, and puts the default back for every signal whose handler
// lives in libinfinipath; other libraries' handlers stay.
static int mg_sigs_reset;

__attribute__((constructor)) static void mg_reset_ipath_signals(void) {
	for (int s = 1; s < 32; s++) {
		struct sigaction old;
		if (sigaction(s, NULL, &old) != 0) continue;
		void *h = (old.sa_flags & SA_SIGINFO) ? (void *)old.sa_sigaction : (void *)old.sa_handler;
		if (h == (void *)SIG_DFL || h == (void *)SIG_IGN) continue;
		Dl_info di;
		if (dladdr(h, &di) && di.dli_fname && strstr(di.dli_fname, "libinfinipath")) {
			struct sigaction dfl;
			memset(&dfl, 0, sizeof dfl);
			dfl.sa_handler = SIG_DFL;
			if (sigaction(s, &dfl, NULL) == 0) mg_sigs_reset |= 1 << s;
		}
	}
}

static int mg_signals_reset(void) { return mg_sigs_reset; }
*/
import "C"

// signalsReset returns the set of signals (bit s for signal s) whose
// handler the package's constructor took back from libinfinipath.
func signalsReset() uint32 { return uint32(C.mg_signals_reset()) }
