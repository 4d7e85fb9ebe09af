/* MONet-open STREAM: the four kernels and the validation, shared by the Linux/host program (stream.c) and
 * the soft CPU's console (firmware/app, command `stream`).
 *
 * STREAM's rules, as we apply them: three arrays a, b, c of n elements, initialised to 2, 2, 0; each
 * repetition runs Copy (c = a), Scale (b = q c), Add (c = a + b) and Triad (a = b + q c) with q = 3 over
 * the whole arrays; the first repetition is not timed; a kernel's rate is its bytes (2 or 3 arrays) over
 * its best time. Validation replays the same arithmetic on one element and compares every element.
 *
 * STREAM_TYPE is double by default. The soft CPU (rv32im, no FPU) builds with uint32_t and STREAM_EXACT:
 * unsigned arithmetic wraps modulo 2^32, so every element must match exactly.
 */
#ifndef MONET_STREAM_KERNELS_H
#define MONET_STREAM_KERNELS_H

#include <stddef.h>

#ifndef STREAM_TYPE
#define STREAM_TYPE double
#endif
#ifndef STREAM_EXACT
#define STREAM_EXACT 0
#endif

#define STREAM_SCALAR 3
#define STREAM_EPSILON (sizeof(STREAM_TYPE) == 4 ? 1e-6 : 1e-13)  /* relative, floating types only */

enum { STREAM_COPY, STREAM_SCALE, STREAM_ADD, STREAM_TRIAD, STREAM_KERNELS };

static const char *const stream_kernel_names[STREAM_KERNELS] = {"Copy", "Scale", "Add", "Triad"};
/* Arrays each kernel reads or writes once per element: its bytes are this x n x sizeof(STREAM_TYPE). */
static const unsigned stream_kernel_arrays[STREAM_KERNELS] = {2, 2, 3, 3};

static inline void stream_init(STREAM_TYPE *a, STREAM_TYPE *b, STREAM_TYPE *c, size_t lo, size_t hi)
{
    for (size_t j = lo; j < hi; j++) {
        a[j] = 2;
        b[j] = 2;
        c[j] = 0;
    }
}

/* One kernel over elements [lo, hi): threads split the arrays, the soft CPU runs them whole. */
static inline void stream_kernel(int kernel, STREAM_TYPE *restrict a, STREAM_TYPE *restrict b,
                                 STREAM_TYPE *restrict c, size_t lo, size_t hi)
{
    const STREAM_TYPE q = STREAM_SCALAR;
    switch (kernel) {
    case STREAM_COPY:  for (size_t j = lo; j < hi; j++) c[j] = a[j];            break;
    case STREAM_SCALE: for (size_t j = lo; j < hi; j++) b[j] = q * c[j];        break;
    case STREAM_ADD:   for (size_t j = lo; j < hi; j++) c[j] = a[j] + b[j];     break;
    case STREAM_TRIAD: for (size_t j = lo; j < hi; j++) a[j] = b[j] + q * c[j]; break;
    }
}

struct stream_check {
    STREAM_TYPE expected[3];  /* the value every element of a, b, c must hold */
    unsigned long bad[3];     /* elements that do not */
    double rel_error[3];      /* mean |x - expected| / |expected| (floating types; 0 when exact) */
    int validates;
};

/* Replays `repetitions` rounds of the four kernels on one element and checks all three arrays. */
static inline int stream_validate(const STREAM_TYPE *a, const STREAM_TYPE *b, const STREAM_TYPE *c, size_t n,
                                  unsigned repetitions, struct stream_check *r)
{
    const STREAM_TYPE q = STREAM_SCALAR;
    STREAM_TYPE ea = 2, eb = 2, ec = 0;
    for (unsigned k = 0; k < repetitions; k++) {
        ec = ea;
        eb = q * ec;
        ec = ea + eb;
        ea = eb + q * ec;
    }
    const STREAM_TYPE *arrays[3] = {a, b, c};
    r->expected[0] = ea;
    r->expected[1] = eb;
    r->expected[2] = ec;
    r->validates = 1;
    for (int i = 0; i < 3; i++) {
        const STREAM_TYPE e = r->expected[i];
        double sum = 0;
        r->bad[i] = 0;
        for (size_t j = 0; j < n; j++) {
            const STREAM_TYPE x = arrays[i][j];
#if STREAM_EXACT
            r->bad[i] += x != e;
#else
            const double d = x > e ? (double)x - (double)e : (double)e - (double)x;
            sum += d;
            r->bad[i] += d > STREAM_EPSILON * (e < 0 ? -(double)e : (double)e);
#endif
        }
#if STREAM_EXACT
        (void)sum;
        r->rel_error[i] = 0;
        if (r->bad[i]) r->validates = 0;
#else
        const double mag = e < 0 ? -(double)e : (double)e;
        r->rel_error[i] = sum / (double)n / (mag > 0 ? mag : 1);
        if (r->rel_error[i] > STREAM_EPSILON) r->validates = 0;
#endif
    }
    return r->validates;
}

#endif
