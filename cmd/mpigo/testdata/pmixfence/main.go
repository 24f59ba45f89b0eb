// Command pmixfence times PMIx itself under a PMIx launcher: every rank
// puts 1 KiB, all fence (collecting the data), then every rank gets every
// other rank's value. Rank 0 prints the times.
package main

import (
	"bytes"
	"fmt"
	"os"
	"time"

	"github.com/mpigo/mpi/internal/boot"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "pmixfence:", err)
		os.Exit(1)
	}
}

func run() error {
	c, err := boot.DialPMIx(os.LookupEnv)
	if err != nil {
		return err
	}
	_, rank := c.Me()
	size, err := c.JobUint(-1, boot.PMIxJobSize)
	if err != nil {
		return err
	}
	val := bytes.Repeat([]byte{byte(rank)}, 1024)
	// A first fence so that every rank is connected before timing.
	if err := c.Fence(false); err != nil {
		return err
	}
	start := time.Now()
	if err := c.Put(boot.PMIxGlobal, "bench", val); err != nil {
		return err
	}
	if err := c.Fence(true); err != nil {
		return err
	}
	fence := time.Since(start)
	start = time.Now()
	for r := 0; r < int(size); r++ {
		v, err := c.Get(r, "bench")
		if err != nil {
			return err
		}
		if len(v) != 1024 || v[0] != byte(r) {
			return fmt.Errorf("rank %d's value is wrong", r)
		}
	}
	gets := time.Since(start)
	if rank == 0 {
		fmt.Printf("fence of %d ranks with 1 KiB each: %.2f ms; then %d gets: %.2f ms\n", size, float64(fence.Microseconds())/1e3, size, float64(gets.Microseconds())/1e3)
	}
	return c.Finalize()
}
