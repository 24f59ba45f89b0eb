//go:build unix

package mpi

import (
	"os"
	"os/signal"
	"syscall"
	"time"
)

// onQuit calls report on SIGQUIT while hang diagnosis is on, instead of
// the Go runtime's dump-and-exit; a second SIGQUIT within two seconds gets
// the runtime's behaviour back (goroutine dump, exit). The returned
// function stops it.
func onQuit(report func(), cfg Config) func() {
	if cfg.HangReport <= 0 {
		return func() {}
	}
	ch := make(chan os.Signal, 1)
	stop := make(chan struct{})
	done := make(chan struct{})
	signal.Notify(ch, syscall.SIGQUIT)
	go func() {
		defer close(done)
		var last time.Time
		for {
			select {
			case <-stop:
				return
			case <-ch:
				if !last.IsZero() && time.Since(last) < 2*time.Second {
					signal.Reset(syscall.SIGQUIT)
					syscall.Kill(os.Getpid(), syscall.SIGQUIT)
					return
				}
				last = time.Now()
				report()
			}
		}
	}()
	return func() {
		signal.Stop(ch)
		close(stop)
		<-done
	}
}
