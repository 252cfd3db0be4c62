/* The tensor-map checker against the answers a real driver gave: every parameter set of
 * tests/data/tmap_conformance_h200_driver580.csv was passed to cuTensorMapEncodeTiled on an H200
 * (driver 580.159.04, CUDA 13.0; tests/gpu/test_tmap_conformance.c wrote the file). The checker
 * must accept exactly the sets the driver accepted. This keeps the checker honest in CI, where no
 * driver exists; the GPU test re-asks the live driver. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/tmap_check.h"

#define RECORDED "tests/data/tmap_conformance_h200_driver580.csv"

static int lookup(const char *name, const char *(*namer)(int), int limit)
{
    for (int v = 0; v < limit; v++)
        if (!strcmp(namer(v), name)) return v;
    return -1;
}

/* "a b c" -> up to 5 numbers */
static unsigned parse_list(const char *s, uint64_t *out)
{
    unsigned n = 0;
    char *end;
    while (*s && n < 5) {
        out[n++] = strtoull(s, &end, 10);
        if (end == s) break;
        s = end;
        while (*s == ' ') s++;
    }
    return n;
}

Test(tmap_recorded, checker_agrees_with_the_recorded_h200_driver)
{
    FILE *f = fopen(RECORDED, "r");
    cr_assert(f, "cannot open %s (tests run from the repository root)", RECORDED);
    char line[2048];
    cr_assert(fgets(line, sizeof line, f), "empty file");
    int rows = 0, accepted = 0, disagree = 0;
    while (fgets(line, sizeof line, f)) {
        char *field[24];
        int nf = 0;
        line[strcspn(line, "\n")] = '\0';
        for (char *s = line; nf < 24;) { /* keep empty fields (rank-1 maps have no strides) */
            field[nf++] = s;
            char *comma = strchr(s, ',');
            if (!comma) break;
            *comma = '\0';
            s = comma + 1;
        }
        /* label,type,rank,addr,dims,strides,box,estrides,interleave,swizzle,l2,oob,driver_result,... */
        if (nf < 15) continue;
        tmap_params p;
        memset(&p, 0, sizeof p);
        p.data_type = lookup(field[1], tmap_data_type_name, 32);
        if (p.data_type < 0) p.data_type = atoi(field[1]); /* out-of-range enums are recorded as numbers */
        p.rank = (unsigned)atoi(field[2]);
        p.global_address = strtoull(field[3], NULL, 10);
        uint64_t tmp[5];
        parse_list(field[4], p.global_dim);
        parse_list(field[5], p.global_strides);
        unsigned nb = parse_list(field[6], tmp);
        for (unsigned i = 0; i < nb; i++) p.box_dim[i] = (uint32_t)tmp[i];
        nb = parse_list(field[7], tmp);
        for (unsigned i = 0; i < nb; i++) p.element_strides[i] = (uint32_t)tmp[i];
        p.interleave = lookup(field[8], tmap_interleave_name, 8);
        if (p.interleave < 0) p.interleave = atoi(field[8]);
        p.swizzle = lookup(field[9], tmap_swizzle_name, 16);
        if (p.swizzle < 0) p.swizzle = atoi(field[9]);
        p.l2_promotion = atoi(field[10]);
        p.oob_fill = atoi(field[11]);
        int driver_ok = atoi(field[12]) == 0;
        char msg[256] = "";
        int checker_ok = tmap_check(&p, 9, msg, sizeof msg) == TMAP_OK;
        rows++;
        accepted += driver_ok;
        if (checker_ok != driver_ok) {
            disagree++;
            fprintf(stderr, "%s: driver %s, checker %s %s\n", field[0], driver_ok ? "accepts" : "refuses",
                    checker_ok ? "accepts" : "refuses:", msg);
        }
    }
    fclose(f);
    cr_expect_geq(rows, 300, "%d recorded sets", rows);
    cr_expect(accepted > 50 && rows - accepted > 50, "%d accepted, %d refused", accepted, rows - accepted);
    cr_expect_eq(disagree, 0, "%d of %d recorded driver answers disagree with the checker", disagree, rows);
}
