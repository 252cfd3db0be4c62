/* A fixed grid of cuTensorMapEncodeTiled parameter sets, valid and invalid, each with a short
 * label: the input of the checker's known-answer tests and of the driver conformance run
 * (tests/gpu/test_tmap_conformance.c). Deterministic, so a recorded conformance CSV stays
 * comparable from run to run.
 *
 * global_address in a grid set is an offset from a 256-byte aligned base: the conformance run adds
 * it to a cudaMalloc'd pointer, the checker only looks at its alignment. */
#ifndef FMHA_TMAP_GRID_H
#define FMHA_TMAP_GRID_H

#include "model/tmap_check.h"

#define TMAP_GRID_LABEL_LEN 48
#define TMAP_GRID_CAPACITY  1024 /* more than the grid holds; tmap_grid's return value is exact */

typedef struct {
    char label[TMAP_GRID_LABEL_LEN];
    tmap_params p;
} tmap_grid_case;

/* Writes at most max sets into out (out may be NULL when max is 0) and returns how many sets the
 * grid holds, like snprintf, so a caller can size its array (-1: out of memory). */
int tmap_grid(tmap_params *out, int max);
int tmap_grid_cases(tmap_grid_case *out, int max);

#endif
