package mpi_test

import (
	"os"
	"strconv"
	"testing"

	"github.com/mpigo/mpi"
)

func BenchmarkZZStridedWriteColl(b *testing.B) {
	for _, coll := range []bool{true, false} {
		name := "ind"
		if coll {
			name = "coll"
		}
		b.Run(name, func(b *testing.B) {
			size, n := zzSize(), 2
			fn := b.TempDir() + "/f"
			err := mpi.Run(n, func(c *mpi.Comm) error {
				r := c.Rank()
				f, err := mpi.OpenFile(c, fn, mpi.ModeCreate|mpi.ModeRdwr, nil)
				if err != nil {
					return err
				}
				defer f.Close()
				ft, _ := mpi.NewVector(16, size, size*n, mpi.Byte)
				ft.Commit()
				if err := f.SetView(int64(r*size), mpi.Byte, ft, "native", nil); err != nil {
					return err
				}
				buf := make([]byte, 16*size)
				mpi.Barrier(c)
				for i := 0; i < b.N; i++ {
					if os.Getenv("ZZREAD") != "" {
						_, err = f.ReadAtAll(0, buf, len(buf), mpi.Byte)
					} else if coll {
						_, err = f.WriteAtAll(0, buf, len(buf), mpi.Byte)
					} else {
						_, err = f.WriteAt(0, buf, len(buf), mpi.Byte)
					}
					if err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				b.Fatal(err)
			}
		})
	}
	_ = os.Remove
}

func zzSize() int {
	if v := os.Getenv("ZZSIZE"); v != "" {
		n, _ := strconv.Atoi(v)
		return n
	}
	return 1 << 20
}
