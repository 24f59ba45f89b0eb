package coll

import (
	"encoding/binary"
	"fmt"
	"testing"
)

func TestAllreduceInPlace(t *testing.T) {
	sum := func(inout, in []byte) {
		for i := 0; i+8 <= len(inout); i += 8 {
			a := binary.LittleEndian.Uint64(inout[i:])
			b := binary.LittleEndian.Uint64(in[i:])
			binary.LittleEndian.PutUint64(inout[i:], a+b)
		}
	}
	for _, p := range []int{1, 2, 3, 4, 5, 7, 8, 13, 16} {
		t.Run(fmt.Sprint(p), func(t *testing.T) {
			run(t, p, func(c Comm) error {
				const n = 5
				buf := make([]byte, 8*n)
				for i := 0; i < n; i++ {
					binary.LittleEndian.PutUint64(buf[8*i:], uint64(c.Rank()*10+i))
				}
				if err := AllreduceInPlace(c, buf, make([]byte, len(buf)), sum, tagBase); err != nil {
					return err
				}
				for i := 0; i < n; i++ {
					want := uint64(10*p*(p-1)/2 + p*i)
					if got := binary.LittleEndian.Uint64(buf[8*i:]); got != want {
						return fmt.Errorf("element %d: %d, want %d", i, got, want)
					}
				}
				return nil
			})
		})
	}
}

func TestAllreduceInPlaceArgs(t *testing.T) {
	run(t, 2, func(c Comm) error {
		err := AllreduceInPlace(c, make([]byte, 8), make([]byte, 4), func(a, b []byte) {}, tagBase)
		if err == nil {
			return fmt.Errorf("short scratch accepted")
		}
		return nil
	})
}
