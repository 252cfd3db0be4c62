/* Minimal .npy writer (NumPy format version 1.0) for --dump: inputs and outputs can be loaded with
 * numpy.load() and compared in Python. bf16 has no NumPy dtype: dump it as "<u2" (raw bits) or
 * convert to f32 first. */
#ifndef FMHA_NPY_H
#define FMHA_NPY_H

#include <stddef.h>

/* descr: "<f4", "<f8", "<u2", "<i4", "|u1", ... Returns 0 on success, 1 on an I/O error. */
int npy_write(const char *path, const char *descr, const int *shape, int rank, const void *data,
              size_t elem_bytes);

/* The header bytes npy_write emits (for tests); returns their length. */
size_t npy_header(char *buf, size_t len, const char *descr, const int *shape, int rank);

#endif
