/* The TMA model (common/model/tma_model.c) against real TMA copies on the H200: for a grid of
 * tensor maps (bf16 and 8-bit elements, every swizzle, inner boxes of the swizzle span and of half
 * of it, box rows 16..256, coordinates inside, partly and wholly out of bounds, negative) and one
 * rank-4 attention map (common/host/fmha_tmaps.c), one box is copied by the hardware into poisoned
 * SMEM and by the model into a poisoned image; the two must agree byte for byte over the box's
 * SMEM span and 1024 bytes past it (tma_grid_region), including every byte the copy must leave
 * alone. The answers go to build/reports/tma_conformance.csv (one row per case with both images'
 * FNV-1a hashes; tests/unit/test_tma_recorded.c replays the committed copy in CI) and the hardware
 * images to build/reports/tma_hw_images.bin (per case: u32 index, u32 bytes, the bytes), for
 * reading a disagreement. The copy kernel owns 32 KiB of SMEM more than the region, so a copy that
 * writes far past the model's span is a difference, not an illegal address. sm100 runs the same
 * PTX; compiled only. */
#include <criterion/criterion.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "gpu/kernels/tma_copy.h"
#include "tma_grid.h"
#include "host/attention.h"
#include "host/csv.h"
#include "host/fmha_tmaps.h"
#include "host/tmap_encode.h"
#include "host/watchdog.h"
#include "model/tma_model.h"
#include "test_util.h"

#define REPORT_CSV "build/reports/tma_conformance.csv"
#define REPORT_IMAGES "build/reports/tma_hw_images.bin"

Test(tma_conformance, model_matches_hardware_byte_for_byte, .timeout = 120)
{
    SKIP_WITHOUT_GPU(9);
    tma_case *c = calloc(TMA_GRID_MAX, sizeof *c);
    const int n = tma_grid_cases(c, TMA_GRID_MAX);
    cr_assert_lt(n, TMA_GRID_MAX);
    uint8_t *host = tma_grid_tensor(), *dev = NULL;
    const size_t gbytes = TMA_GRID_TENSOR_BYTES;
    CUDA_ASSERT(cudaMalloc((void **)&dev, gbytes));
    CUDA_ASSERT(cudaMemcpy(dev, host, gbytes, cudaMemcpyHostToDevice));
    fmha_watchdog *wh, *wd;
    cr_assert_eq(watchdog_alloc(&wh, &wd), 0);
    int cc = 0;
    CUDA_ASSERT(cudaDeviceGetAttribute(&cc, cudaDevAttrComputeCapabilityMajor, 0));

    mkdir("build", 0777);
    mkdir("build/reports", 0777);
    remove(REPORT_CSV);
    static const char *const cols[] = {"label", "params", "coords", "tx_bytes", "model_hash", "hw_hash", "agree"};
    FILE *csv = csv_open(REPORT_CSV, cols, 7), *images = fopen(REPORT_IMAGES, "wb");
    int disagree = 0, ran = 0;
    for (int i = 0; i < n; i++) {
        const tmap_params *p = &c[i].p;
        CUtensorMap map;
        char err[600] = "";
        const int enc = tmap_encode(p, dev, cc, &map, err, sizeof err);
        cr_expect_eq(enc, 0, "%s: every set of the grid is one the checker and the driver accept: %s", c[i].label, err);
        if (enc) continue;
        const uint32_t box = tma_box_bytes(p), span = tma_grid_region(p);
        uint8_t *hw = malloc(span), *model = malloc(span);
        uint32_t tx = 0;
        cr_assert_eq(tma_grid_model_image(&c[i], host, model, &tx, err, sizeof err), 0, "%s: %s", c[i].label, err);
        const int rc = tma_copy_launch(&map, (int)p->rank, c[i].coords, box, span, span + 32768u, hw, 1u << 20, wd);
        cr_assert_eq(rc, 0, "%s: launch: %s%s", c[i].label, cudaGetErrorString((cudaError_t)rc),
                     watchdog_fired(wh) ? " (the watchdog fired: fewer bytes completed than the box)" : "");
        ran++;
        if (images) {
            const uint32_t head[2] = {(uint32_t)i, span};
            fwrite(head, sizeof head, 1, images);
            fwrite(hw, 1, span, images);
        }
        size_t diff = 0, first = span;
        for (uint32_t b = 0; b < span; b++)
            if (hw[b] != model[b]) { diff++; if (first == span) first = b; }
        if (diff) {
            disagree++;
            printf("TMA DISAGREE %s: %zu of %u bytes, first at %zu (hw 0x%02x, model 0x%02x)\n", c[i].label, diff, span,
                   first, hw[first], model[first]);
        }
        if (csv) {
            char params[512], coords[64], txs[16], mh[20], hh[20];
            tmap_format_params(p, params, sizeof params);
            snprintf(coords, sizeof coords, "%d %d %d %d", c[i].coords[0], c[i].coords[1], c[i].coords[2], c[i].coords[3]);
            snprintf(txs, sizeof txs, "%u", tx);
            snprintf(mh, sizeof mh, "%016" PRIx64, tma_grid_hash(model, span));
            snprintf(hh, sizeof hh, "%016" PRIx64, tma_grid_hash(hw, span));
            const char *row[7] = {c[i].label, params, coords, txs, mh, hh, diff ? "0" : "1"};
            csv_row(csv, row, 7);
        }
        free(hw); free(model);
    }
    if (csv) fclose(csv);
    if (images) fclose(images);
    printf("TMA conformance: %d cases run, %d disagreements (rows in %s)\n", ran, disagree, REPORT_CSV);
    cr_expect_eq(disagree, 0, "%d of %d cases: the model and the hardware disagree", disagree, ran);
    cr_expect_gt(ran, 300, "the grid ran (%d cases)", ran);
    cudaFree(dev);
    free(host); free(c);
}
