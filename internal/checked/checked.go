// Package checked does the arithmetic of sizes, counts and displacements
// that users (or bytes from outside) control: a product or sum that does
// not fit reports failure instead of wrapping around. Every count × size
// in the module goes through Mul or Mul64.
package checked

import (
	"math"
	"math/bits"
)

// Mul64 returns a*b and whether the product fits in an int64.
func Mul64(a, b int64) (int64, bool) {
	hi, lo := bits.Mul64(abs(a), abs(b))
	if hi != 0 {
		return 0, false
	}
	if (a < 0) != (b < 0) {
		if lo > 1<<63 {
			return 0, false
		}
		return -int64(lo), true // lo == 1<<63 is math.MinInt64
	}
	if lo > math.MaxInt64 {
		return 0, false
	}
	return int64(lo), true
}

// Mul returns a*b and whether the product fits in an int.
func Mul(a, b int) (int, bool) {
	c, ok := Mul64(int64(a), int64(b))
	if !ok || int64(int(c)) != c {
		return 0, false
	}
	return int(c), true
}

// Add64 returns a+b and whether the sum fits in an int64.
func Add64(a, b int64) (int64, bool) {
	c := a + b
	if (a > 0 && b > 0 && c < 0) || (a < 0 && b < 0 && c >= 0) {
		return 0, false
	}
	return c, true
}

// Add returns a+b and whether the sum fits in an int.
func Add(a, b int) (int, bool) {
	c, ok := Add64(int64(a), int64(b))
	if !ok || int64(int(c)) != c {
		return 0, false
	}
	return int(c), true
}

// MulAdd64 returns a*b+c and whether every step fits in an int64.
func MulAdd64(a, b, c int64) (int64, bool) {
	p, ok := Mul64(a, b)
	if !ok {
		return 0, false
	}
	return Add64(p, c)
}

func abs(a int64) uint64 {
	if a < 0 {
		return uint64(-a) // math.MinInt64 gives 1<<63, its magnitude
	}
	return uint64(a)
}
