/* median.h — sorting, medians and minima of small sample arrays (pure
 * code, tested on the host). Insertion sort: the arrays hold at most a
 * few hundred samples and are sorted once per result. */
#ifndef LIB_MEDIAN_H
#define LIB_MEDIAN_H
#include <stdint.h>

void sort_u64(uint64_t *v, unsigned n);
/* Sorts v and returns its median (the mean of the middle two when n is
 * even, rounded down); 0 when n is 0. */
uint64_t median_u64(uint64_t *v, unsigned n);
/* The smallest of v[0..n); 0 when n is 0. */
uint64_t min_u64(const uint64_t *v, unsigned n);

#endif
