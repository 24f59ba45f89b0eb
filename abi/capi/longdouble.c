//go:build cgo

/* MPI's predefined operations on the numbers Go has no type of (mpigo
 * moves them as opaque data, internal/cnum holds their kernels):
 *   C's long double: MPI_SUM, MPI_PROD, MPI_MIN, MPI_MAX; its complex:
 *   MPI_SUM, MPI_PROD; MPI_LONG_DOUBLE_INT: MPI_MINLOC, MPI_MAXLOC;
 *   Fortran's REAL*2 (IEEE binary16) and REAL*16 (IEEE binary128):
 *   MPI_SUM, MPI_PROD, MPI_MIN, MPI_MAX; COMPLEX*4 and COMPLEX*32 (two of
 *   them): MPI_SUM, MPI_PROD; INTEGER*16: those and the logical and
 *   bitwise operations.
 * inout[i] = in[i] op inout[i], as MPI defines a reduction's order. The
 * buffers may be unaligned (packed data in the middle of a message), so
 * every element is copied into a local variable and back. Binary16 is
 * computed in double and rounded once (exact for a sum or product of two
 * of them); binary128 needs the compiler's __float128 (or a long double
 * of that format), INTEGER*16 its __int128: without them those kinds have
 * no operations (MPI_ERR_OP). */

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <float.h>

enum {
	OP_SUM, OP_PROD, OP_MIN, OP_MAX, OP_MINLOC, OP_MAXLOC,
	OP_LAND, OP_LOR, OP_LXOR, OP_BAND, OP_BOR, OP_BXOR
};

/* The kinds: internal/cnum's Kind values. */
enum {
	K_LD = 1, K_LD_COMPLEX, K_LD_INT, K_REAL2, K_REAL16, K_INTEGER16,
	K_COMPLEX4, K_COMPLEX32
};

struct mpigo_ld_int {
	long double v;
	int i;
};

size_t mpigo_ld_size(void) { return sizeof(long double); }
size_t mpigo_ld_int_size(void) { return sizeof(struct mpigo_ld_int); }
size_t mpigo_ld_int_loc(void) { return offsetof(struct mpigo_ld_int, i); }

/* REAL (the element type), reading and writing one element at a time. */
#define LOOP(T, n, body)                                                       \
	for (int64_t k = 0; k < (n); k++) {                                    \
		T a, b;                                                        \
		memcpy(&a, (char *)in + k * sizeof(T), sizeof(T));             \
		memcpy(&b, (char *)inout + k * sizeof(T), sizeof(T));          \
		body;                                                          \
		memcpy((char *)inout + k * sizeof(T), &b, sizeof(T));          \
	}

/* REAL_OPS handles MPI_SUM, MPI_PROD, MPI_MIN and MPI_MAX on T. */
#define REAL_OPS(T)                                                            \
	switch (op) {                                                          \
	case OP_SUM:                                                           \
		LOOP(T, n, b = a + b);                                         \
		return 0;                                                      \
	case OP_PROD:                                                          \
		LOOP(T, n, b = a * b);                                         \
		return 0;                                                      \
	case OP_MIN:                                                           \
		LOOP(T, n, if (a < b) b = a);                                  \
		return 0;                                                      \
	case OP_MAX:                                                           \
		LOOP(T, n, if (a > b) b = a);                                  \
		return 0;                                                      \
	}                                                                      \
	return -1;

/* COMPLEX_OPS handles MPI_SUM and MPI_PROD on pairs of T (real then
 * imaginary part). */
#define COMPLEX_OPS(T)                                                         \
	typedef struct { T re, im; } cplx;                                     \
	switch (op) {                                                          \
	case OP_SUM:                                                           \
		LOOP(cplx, n, b.re = a.re + b.re; b.im = a.im + b.im);         \
		return 0;                                                      \
	case OP_PROD:                                                          \
		LOOP(cplx, n, {                                                \
			T re = a.re * b.re - a.im * b.im;                      \
			T im = a.re * b.im + a.im * b.re;                      \
			b.re = re;                                             \
			b.im = im;                                             \
		});                                                            \
		return 0;                                                      \
	}                                                                      \
	return -1;

#if defined(__SIZEOF_FLOAT128__) && (defined(__x86_64__) || defined(__i386__))
typedef __float128 quad;
#define HAVE_QUAD 1
#elif LDBL_MANT_DIG == 113
typedef long double quad;
#define HAVE_QUAD 1
#endif

#if defined(__FLT16_MANT_DIG__)
#define HAVE_HALF 1
typedef _Float16 half;
#endif

static int ld_real(int op, void *in, void *inout, int64_t n) { REAL_OPS(long double) }
static int ld_complex(int op, void *in, void *inout, int64_t n) { COMPLEX_OPS(long double) }

static int ld_pair(int op, void *in, void *inout, int64_t n)
{
	switch (op) {
	case OP_MINLOC:
		LOOP(struct mpigo_ld_int, n, if (a.v < b.v || (a.v == b.v && a.i < b.i)) b = a);
		return 0;
	case OP_MAXLOC:
		LOOP(struct mpigo_ld_int, n, if (a.v > b.v || (a.v == b.v && a.i < b.i)) b = a);
		return 0;
	}
	return -1;
}

#ifdef HAVE_QUAD
static int quad_real(int op, void *in, void *inout, int64_t n) { REAL_OPS(quad) }
static int quad_complex(int op, void *in, void *inout, int64_t n) { COMPLEX_OPS(quad) }
#endif

#ifdef HAVE_HALF
/* Binary16 is computed in double: a sum or product of two of them is
 * exact there, so the one rounding back is the correct one. */
static int half_real(int op, void *in, void *inout, int64_t n)
{
	switch (op) {
	case OP_SUM:
		LOOP(half, n, b = (half)((double)a + (double)b));
		return 0;
	case OP_PROD:
		LOOP(half, n, b = (half)((double)a * (double)b));
		return 0;
	case OP_MIN:
		LOOP(half, n, if ((double)a < (double)b) b = a);
		return 0;
	case OP_MAX:
		LOOP(half, n, if ((double)a > (double)b) b = a);
		return 0;
	}
	return -1;
}

static int half_complex(int op, void *in, void *inout, int64_t n)
{
	typedef struct { half re, im; } cplx;
	switch (op) {
	case OP_SUM:
		LOOP(cplx, n, b.re = (half)((double)a.re + (double)b.re); b.im = (half)((double)a.im + (double)b.im));
		return 0;
	case OP_PROD:
		LOOP(cplx, n, {
			double re = (double)a.re * (double)b.re - (double)a.im * (double)b.im;
			double im = (double)a.re * (double)b.im + (double)a.im * (double)b.re;
			b.re = (half)re;
			b.im = (half)im;
		});
		return 0;
	}
	return -1;
}
#endif

#ifdef __SIZEOF_INT128__
/* Sums and products wrap around, as Go's integer kernels do (in unsigned
 * arithmetic, where C defines it). */
static int int128_ops(int op, void *in, void *inout, int64_t n)
{
	typedef __int128 s128;
	typedef unsigned __int128 u128;
	switch (op) {
	case OP_SUM:
		LOOP(u128, n, b = a + b);
		return 0;
	case OP_PROD:
		LOOP(u128, n, b = a * b);
		return 0;
	case OP_MIN:
		LOOP(s128, n, if (a < b) b = a);
		return 0;
	case OP_MAX:
		LOOP(s128, n, if (a > b) b = a);
		return 0;
	case OP_LAND:
		LOOP(s128, n, b = (a != 0) && (b != 0));
		return 0;
	case OP_LOR:
		LOOP(s128, n, b = (a != 0) || (b != 0));
		return 0;
	case OP_LXOR:
		LOOP(s128, n, b = (a != 0) != (b != 0));
		return 0;
	case OP_BAND:
		LOOP(u128, n, b = a & b);
		return 0;
	case OP_BOR:
		LOOP(u128, n, b = a | b);
		return 0;
	case OP_BXOR:
		LOOP(u128, n, b = a ^ b);
		return 0;
	}
	return -1;
}
#endif

/* mpigo_num_reduce applies op to n elements of kind; it returns 0, or -1
 * for an operation the kind does not have here. With n == 0 it only
 * says whether it has it. */
int mpigo_num_reduce(int op, int kind, void *in, void *inout, int64_t n)
{
	switch (kind) {
	case K_LD:
		return ld_real(op, in, inout, n);
	case K_LD_COMPLEX:
		return ld_complex(op, in, inout, n);
	case K_LD_INT:
		return ld_pair(op, in, inout, n);
#ifdef HAVE_QUAD
	case K_REAL16:
		return quad_real(op, in, inout, n);
	case K_COMPLEX32:
		return quad_complex(op, in, inout, n);
#endif
#ifdef HAVE_HALF
	case K_REAL2:
		return half_real(op, in, inout, n);
	case K_COMPLEX4:
		return half_complex(op, in, inout, n);
#endif
#ifdef __SIZEOF_INT128__
	case K_INTEGER16:
		return int128_ops(op, in, inout, n);
#endif
	}
	return -1;
}
