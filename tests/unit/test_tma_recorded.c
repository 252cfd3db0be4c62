/* The TMA model against what the H200's TMA really wrote: tests/data/tma_conformance_h200.csv
 * holds, for every case of the conformance grid (tests/support/tma_grid.c), the FNV-1a hash of the
 * SMEM image a real cp.async.bulk.tensor produced (tests/gpu/test_tma_conformance.c wrote it). Here,
 * with no GPU, the model rebuilds each image and must hash to the hardware's answer: a change to
 * the model that breaks agreement with the hardware fails in CI. */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/tma_model.h"
#include "tma_grid.h"

#define RECORDED "tests/data/tma_conformance_h200.csv"

/* label,"params",coords,tx_bytes,model_hash,hw_hash,agree: the label is the first field, the hashes
 * the last three (the quoted params hold commas). */
static int parse(char *line, char **label, char **tx, char **hw, char **agree)
{
    line[strcspn(line, "\r\n")] = '\0';
    char *f[4];
    for (int k = 0; k < 4; k++) {
        char *c = strrchr(line, ',');
        if (!c) return 0;
        *c = '\0';
        f[k] = c + 1;
    }
    char *c = strchr(line, ',');
    if (!c) return 0;
    *c = '\0';
    *label = line;
    *agree = f[0];
    *hw = f[1];
    *tx = f[3];
    return 1;
}

Test(tma_recorded, model_reproduces_every_recorded_h200_image)
{
    FILE *f = fopen(RECORDED, "r");
    cr_assert(f, "cannot open %s (tests run from the repository root)", RECORDED);
    tma_case *c = calloc(TMA_GRID_MAX, sizeof *c);
    const int n = tma_grid_cases(c, TMA_GRID_MAX);
    uint8_t *tensor = tma_grid_tensor();
    char line[2048];
    cr_assert(fgets(line, sizeof line, f), "empty file");
    int rows = 0, differ = 0, hw_disagreed = 0;
    while (fgets(line, sizeof line, f)) {
        char *label, *tx, *hw, *agree;
        if (!parse(line, &label, &tx, &hw, &agree)) continue;
        int i = 0;
        while (i < n && strcmp(c[i].label, label)) i++;
        cr_assert_lt(i, n, "recorded case \"%s\" is not in the grid", label);
        rows++;
        hw_disagreed += strcmp(agree, "1") != 0;
        const uint32_t region = tma_grid_region(&c[i].p);
        uint8_t *img = malloc(region);
        uint32_t t = 0;
        char err[256];
        cr_assert_eq(tma_grid_model_image(&c[i], tensor, img, &t, err, sizeof err), 0, "%s: %s", label, err);
        char mine[20];
        snprintf(mine, sizeof mine, "%016" PRIx64, tma_grid_hash(img, region));
        if (strcmp(mine, hw)) {
            differ++;
            printf("TMA model differs from the recorded H200 image: %s (model %s, hardware %s)\n", label, mine, hw);
        }
        cr_expect_eq(t, (uint32_t)strtoul(tx, NULL, 10), "%s: transaction bytes", label);
        free(img);
    }
    fclose(f);
    cr_expect_eq(rows, n, "the recorded file covers the whole grid (%d of %d cases)", rows, n);
    cr_expect_eq(differ, 0, "%d of %d recorded images differ from the model", differ, rows);
    cr_expect_eq(hw_disagreed, 0, "the recording itself has %d disagreements", hw_disagreed);
    free(tensor);
    free(c);
}
