package checked

import (
	"math"
	"math/big"
	"testing"
)

func TestMul64(t *testing.T) {
	vals := []int64{0, 1, -1, 2, -2, 3, 8, -8, 1 << 31, -(1 << 31), 1 << 32, 1 << 61, 1<<61 + 1, 1 << 62, -(1 << 62),
		math.MaxInt64 / 4, math.MaxInt64 / 2, math.MaxInt64/2 + 1, math.MaxInt64, math.MinInt64, math.MinInt64 + 1, math.MinInt64 / 2}
	lim := [2]*big.Int{big.NewInt(math.MinInt64), big.NewInt(math.MaxInt64)}
	for _, a := range vals {
		for _, b := range vals {
			want := new(big.Int).Mul(big.NewInt(a), big.NewInt(b))
			fits := want.Cmp(lim[0]) >= 0 && want.Cmp(lim[1]) <= 0
			got, ok := Mul64(a, b)
			if ok != fits || ok && got != want.Int64() {
				t.Errorf("Mul64(%d, %d) = %d, %v; want %v, %v", a, b, got, ok, want, fits)
			}
			wantSum := new(big.Int).Add(big.NewInt(a), big.NewInt(b))
			fits = wantSum.Cmp(lim[0]) >= 0 && wantSum.Cmp(lim[1]) <= 0
			sum, ok := Add64(a, b)
			if ok != fits || ok && sum != wantSum.Int64() {
				t.Errorf("Add64(%d, %d) = %d, %v; want %v, %v", a, b, sum, ok, wantSum, fits)
			}
		}
	}
}

func TestMul(t *testing.T) {
	if _, ok := Mul(math.MaxInt/4, 8); ok {
		t.Error("MaxInt/4 * 8 fits")
	}
	big := int64(1<<61 + 1) // an int on 64-bit machines only
	if _, ok := Mul(int(big), 8); ok && math.MaxInt == math.MaxInt64 {
		t.Error("(1<<61+1) * 8 fits")
	}
	if n, ok := Mul(1000, 8); !ok || n != 8000 {
		t.Errorf("Mul(1000, 8) = %d, %v", n, ok)
	}
	if _, ok := Add(math.MaxInt, 1); ok {
		t.Error("MaxInt + 1 fits")
	}
	if n, ok := MulAdd64(3, 4, 5); !ok || n != 17 {
		t.Errorf("MulAdd64(3, 4, 5) = %d, %v", n, ok)
	}
}
