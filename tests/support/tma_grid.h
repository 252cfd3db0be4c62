/* The grid of TMA copies the TMA model is checked on: the hardware conformance test
 * (tests/gpu/test_tma_conformance.c) and the CPU checks of the same cases (tests/unit/
 * test_tma_grid.c) share it. Every case reads one tensor, tma_grid_tensor(): bytes that are
 * never 0 and never the 0xEE poison, so an unwritten or zero-filled byte is told apart. */
#ifndef FMHA_TEST_TMA_GRID_H
#define FMHA_TEST_TMA_GRID_H

#include <stddef.h>
#include <stdint.h>

#include "model/tmap_check.h"

typedef struct {
    char label[96];
    tmap_params p;   /* global_address 0: the tensor's start */
    int32_t coords[4];
} tma_case;

#define TMA_GRID_TENSOR_BYTES ((size_t)4 << 20)

/* A bf16 map over a row-major [rows x cols] matrix with row pitch ld elements: box {64, box_rows},
 * 128B swizzle, zero fill (the attention tiles' box; the TMA tests build on it). */
tmap_params tma_bf16_map_2d(int cols, int rows, int ld, int box_rows);

/* Fills up to max cases; returns how many the grid has (fewer than TMA_GRID_MAX). */
#define TMA_GRID_MAX 1024
int tma_grid_cases(tma_case *c, int max);

/* The SMEM region a case is compared over, from a 1024-aligned start: the box's SMEM span
 * (tma_smem_bytes) rounded up to 1024 bytes, then 1024 more, so a copy that writes past the span
 * the model expects shows up as a difference. */
uint32_t tma_grid_region(const tmap_params *p);

/* The model's image of case c over its region: poisoned with 0xEE, then the box copied from
 * `tensor`. 0, or 2 with the model's message. */
int tma_grid_model_image(const tma_case *c, const uint8_t *tensor, uint8_t *img, uint32_t *tx, char *err, size_t len);

/* The tensor every case reads (malloc'd, TMA_GRID_TENSOR_BYTES). */
uint8_t *tma_grid_tensor(void);

/* FNV-1a of an SMEM image (what the recorded answers hold). */
uint64_t tma_grid_hash(const uint8_t *p, size_t n);

#endif
