#include "host/check_rows.h"

#include <stdlib.h>

#include "host/rng.h"

size_t check_rows_select(size_t nrows_all, double ref_macs_per_row, uint64_t seed, size_t **rows)
{
    size_t n = nrows_all;
    if ((double)nrows_all * ref_macs_per_row > (double)CHECK_FULL_MACS && nrows_all > CHECK_SAMPLE_ROWS)
        n = CHECK_SAMPLE_ROWS;
    *rows = malloc(sizeof(size_t) * (n ? n : 1));
    if (!*rows) abort();
    if (n == nrows_all) {
        for (size_t i = 0; i < n; i++) (*rows)[i] = i;
        return n;
    }
    rng_t r;
    rng_seed(&r, seed ^ 0x5EEDC0DEull);
    for (size_t i = 0; i < n; i++) (*rows)[i] = (size_t)(rng_next(&r) % nrows_all);
    (*rows)[0] = nrows_all - 1;
    return n;
}
