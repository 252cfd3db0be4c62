/* A launch grid as plain C (host, emu and device code alike): each stage's *_grid() says how
 * many CTAs along x, y, z; the launcher turns it into a dim3, the emu flows loop over it, and
 * validate() checks it against CUDA's limits (cli_check_grid). */
#ifndef FMHA_MODEL_GRID_H
#define FMHA_MODEL_GRID_H

typedef struct {
    unsigned x, y, z;
} grid3;

#endif
