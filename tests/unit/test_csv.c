/* CSV writer: header only for a new file, RFC 4180 quoting. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "host/csv.h"

Test(csv, header_once_and_quoting)
{
    char path[] = "/tmp/fmha_csv_testXXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    close(fd);
    const char *cols[] = {"gpu", "value"};
    const char *row1[] = {"NVIDIA H200", "1.5"};
    const char *row2[] = {"a,b", "say \"hi\""};
    FILE *f = csv_open(path, cols, 2);
    cr_assert(f);
    csv_row(f, row1, 2);
    fclose(f);
    f = csv_open(path, cols, 2); /* second open: file not empty, no second header */
    cr_assert(f);
    csv_row(f, row2, 2);
    fclose(f);
    char buf[256] = {0};
    f = fopen(path, "r");
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    unlink(path);
    buf[n] = '\0';
    cr_expect_str_eq(buf, "gpu,value\nNVIDIA H200,1.5\n\"a,b\",\"say \"\"hi\"\"\"\n");
}
