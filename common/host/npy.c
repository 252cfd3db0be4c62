#include "host/npy.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* Layout: "\x93NUMPY", major 1, minor 0, uint16 LE header length, then an ASCII dict padded with
 * spaces and ending in '\n' so that the data starts at a multiple of 64 bytes. */
size_t npy_header(char *buf, size_t len, const char *descr, const int *shape, int rank)
{
    char dict[512];
    int n = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (", descr);
    for (int i = 0; i < rank; i++)
        n += snprintf(dict + n, sizeof dict - (size_t)n, "%d%s", shape[i],
                      (rank == 1 || i < rank - 1) ? ", " : "");
    if (rank == 1) n -= 1; /* "(5,)" not "(5, )" */
    n += snprintf(dict + n, sizeof dict - (size_t)n, "), }");
    size_t total = 10 + (size_t)n + 1;
    size_t padded = (total + 63) / 64 * 64;
    size_t hlen = padded - 10;
    if (padded > len) return 0;
    memcpy(buf, "\x93NUMPY\x01\x00", 8);
    buf[8] = (char)(hlen & 0xFF);
    buf[9] = (char)(hlen >> 8);
    memcpy(buf + 10, dict, (size_t)n);
    memset(buf + 10 + n, ' ', padded - 10 - (size_t)n - 1);
    buf[padded - 1] = '\n';
    return padded;
}

int npy_write(const char *path, const char *descr, const int *shape, int rank, const void *data,
              size_t elem_bytes)
{
    char header[640];
    size_t hl = npy_header(header, sizeof header, descr, shape, rank);
    size_t count = 1;
    for (int i = 0; i < rank; i++) count *= (size_t)shape[i];
    FILE *f = fopen(path, "wb");
    if (!f || hl == 0) {
        fprintf(stderr, "npy: cannot write %s\n", path);
        if (f) fclose(f);
        return 1;
    }
    int ok = fwrite(header, 1, hl, f) == hl && fwrite(data, elem_bytes, count, f) == count;
    ok = (fclose(f) == 0) && ok;
    if (!ok) fprintf(stderr, "npy: short write to %s\n", path);
    return ok ? 0 : 1;
}
