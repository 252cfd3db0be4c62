/* Which output rows to compare with the fp64 reference. Small problems: all of them. Large ones
 * (more than 2^31 multiply-adds of reference work): a seeded random sample of 2048 rows plus the
 * last row (always in the tail tile). Every element is still checked for having been written. */
#ifndef FMHA_CHECK_ROWS_H
#define FMHA_CHECK_ROWS_H

#include <stddef.h>
#include <stdint.h>

#define CHECK_FULL_MACS (1L << 31)
#define CHECK_SAMPLE_ROWS 2048

/* Returns the number of rows chosen and a malloc'd array of flat row indices in *rows. */
size_t check_rows_select(size_t nrows_all, double ref_macs_per_row, uint64_t seed, size_t **rows);

#endif
