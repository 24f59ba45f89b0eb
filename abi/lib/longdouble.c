//go:build cgo

/* MPI's predefined operations on C's long double types, which Go cannot
 * compute on (mpigo moves them as opaque 16-byte data): MPI_SUM,
 * MPI_PROD, MPI_MIN and MPI_MAX on MPI_LONG_DOUBLE, MPI_SUM and MPI_PROD
 * on MPI_C_LONG_DOUBLE_COMPLEX, MPI_MINLOC and MPI_MAXLOC on
 * MPI_LONG_DOUBLE_INT. inout[i] = in[i] op inout[i], as MPI defines a
 * reduction's order. */

#include <stddef.h>
#include <stdint.h>
#include <complex.h>

enum { LD_SUM, LD_PROD, LD_MIN, LD_MAX, LD_MINLOC, LD_MAXLOC };
enum { LD_REAL, LD_COMPLEX, LD_PAIR };

struct mpigo_ld_int {
	long double v;
	int i;
};

size_t mpigo_ld_size(void) { return sizeof(long double); }
size_t mpigo_ld_int_size(void) { return sizeof(struct mpigo_ld_int); }
size_t mpigo_ld_int_loc(void) { return offsetof(struct mpigo_ld_int, i); }

/* mpigo_ld_reduce applies op to n elements of kind; it returns 0, or -1
 * for an operation the kind does not have. */
int mpigo_ld_reduce(int op, int kind, void *in, void *inout, int64_t n)
{
	if (kind == LD_REAL) {
		long double *a = in, *b = inout;
		switch (op) {
		case LD_SUM:
			for (int64_t k = 0; k < n; k++)
				b[k] = a[k] + b[k];
			return 0;
		case LD_PROD:
			for (int64_t k = 0; k < n; k++)
				b[k] = a[k] * b[k];
			return 0;
		case LD_MIN:
			for (int64_t k = 0; k < n; k++)
				if (a[k] < b[k])
					b[k] = a[k];
			return 0;
		case LD_MAX:
			for (int64_t k = 0; k < n; k++)
				if (a[k] > b[k])
					b[k] = a[k];
			return 0;
		}
		return -1;
	}
	if (kind == LD_COMPLEX) {
		long double _Complex *a = in, *b = inout;
		switch (op) {
		case LD_SUM:
			for (int64_t k = 0; k < n; k++)
				b[k] = a[k] + b[k];
			return 0;
		case LD_PROD:
			for (int64_t k = 0; k < n; k++)
				b[k] = a[k] * b[k];
			return 0;
		}
		return -1;
	}
	if (kind == LD_PAIR) {
		struct mpigo_ld_int *a = in, *b = inout;
		switch (op) {
		case LD_MINLOC:
			for (int64_t k = 0; k < n; k++)
				if (a[k].v < b[k].v || (a[k].v == b[k].v && a[k].i < b[k].i))
					b[k] = a[k];
			return 0;
		case LD_MAXLOC:
			for (int64_t k = 0; k < n; k++)
				if (a[k].v > b[k].v || (a[k].v == b[k].v && a[k].i < b[k].i))
					b[k] = a[k];
			return 0;
		}
		return -1;
	}
	return -1;
}
