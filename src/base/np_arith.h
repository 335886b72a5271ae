/*
 * np_arith.h - numpy 1.24 / pandas 1.5 arithmetic that TraceLens's tables
 * show to the last digit: Series.sum() (numpy's pairwise add.reduce) and
 * argsort(kind="quicksort") with numpy's order of ties.
 */
#ifndef XPROFS_NP_ARITH_H
#define XPROFS_NP_ARITH_H

#include <stddef.h>
#include <stdint.h>

/* Series.sum() / numpy.sum() of a float array v[0..n): numpy 1.24's
 * add.reduce, the pairwise sum of every element (blocks of 8 accumulators,
 * halves above 128 elements, a plain loop below 8). 0 when n is 0. */
double np_sum(const double *v, size_t n);

/* numpy 1.24's argsort(kind="quicksort") of v[0..n) into idx: introsort
 * with median-of-3 partitions and insertion sort below 17 elements. Its
 * order of equal values is what pandas' sort_values then shows. */
void np_argsort(const double *v, size_t *idx, size_t n);

/* numpy.percentile(v, 100 * p) of the sorted v[0..n), n > 0: linear
 * interpolation between the two nearest ranks (p from 0 to 1). */
double np_percentile_sorted(const int64_t *v, size_t n, double p);

/* pandas' sort_values(ascending=False) order of v[0..n) into order (nargsort:
 * numpy's argsort of the reversed column, reversed back). Returns 0 or
 * -ENOMEM. */
int np_order_desc(const double *v, size_t n, size_t *order);

#endif
