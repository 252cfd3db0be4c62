/* .npy writer: the header bytes (format 1.0, 64-byte aligned data) and the data bytes. The
 * expected header is what numpy.save writes for the same array (checked with NumPy 1.24). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "host/npy.h"

Test(npy, header_layout)
{
    char h[256];
    int shape[2] = {2, 3};
    size_t n = npy_header(h, sizeof h, "<f4", shape, 2);
    cr_assert_eq(n, 128, "preamble + header is padded to a multiple of 64 bytes, got %zu", n);
    cr_expect(memcmp(h, "\x93NUMPY\x01\x00", 8) == 0);
    cr_expect_eq((unsigned char)h[8] | ((unsigned char)h[9] << 8), 118, "header length field");
    const char *dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
    cr_expect(memcmp(h + 10, dict, strlen(dict)) == 0, "dict text: %.*s", 118, h + 10);
    for (size_t i = 10 + strlen(dict); i < 127; i++) cr_expect_eq(h[i], ' ');
    cr_expect_eq(h[127], '\n');
}

Test(npy, one_dimensional_shape_has_trailing_comma)
{
    char h[256];
    int shape[1] = {5};
    size_t n = npy_header(h, sizeof h, "<u2", shape, 1);
    cr_assert(n > 0);
    cr_expect(strstr(h + 10, "'shape': (5,), }") != NULL, "%.*s", (int)n - 10, h + 10);
}

Test(npy, file_bytes)
{
    char path[] = "/tmp/fmha_npy_testXXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    close(fd);
    float data[6] = {1, 2, 3, 4, 5, -6.5f};
    int shape[2] = {3, 2};
    cr_assert_eq(npy_write(path, "<f4", shape, 2, data, 4), 0);
    FILE *f = fopen(path, "rb");
    cr_assert(f);
    unsigned char buf[256];
    size_t got = fread(buf, 1, sizeof buf, f);
    fclose(f);
    unlink(path);
    cr_assert_eq(got, 128 + 24, "file size %zu", got);
    cr_expect(memcmp(buf + 10, "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 2), }", 59) == 0);
    cr_expect(memcmp(buf + 128, data, 24) == 0, "data follows the header unchanged (little-endian f32)");
    /* -6.5f = 0xC0D00000, little-endian on disk */
    cr_expect(buf[128 + 20] == 0x00 && buf[128 + 22] == 0xD0 && buf[128 + 23] == 0xC0);
}
