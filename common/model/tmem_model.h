/* Host model of Tensor Memory (sm100): 128 lanes x 512 columns of 32-bit cells, the allocator and
 * tcgen05.ld / tcgen05.st with their warp-quadrant rule. Every rule violation returns a named
 * error instead of doing something undefined; the message says which rule and where.
 * Rules (PTX 9.7.16.1, 9.7.16.7.1, 9.7.16.8; notes/hardware.md section 4; PTX only, unconfirmed on
 * hardware): allocation in powers of two from 32 to 512 columns, all 128 lanes; no allocation after
 * relinquish; a warp touches only its 32-lane quadrant; ld/st move 32-bit words. */
#ifndef FMHA_MODEL_TMEM_MODEL_H
#define FMHA_MODEL_TMEM_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "model/frag_map.h"

#define TMEM_LANES 128
#define TMEM_COLS 512

typedef enum {
    TMEM_OK = 0,
    TMEM_ERR_ALLOC_SIZE,      /* nCols not a power of two in [32, 512] */
    TMEM_ERR_ALLOC_EXHAUSTED, /* not enough free columns: the real tcgen05.alloc blocks forever */
    TMEM_ERR_RELINQUISHED,    /* alloc after relinquish_alloc_permit */
    TMEM_ERR_DEALLOC,         /* dealloc of a range that is not one allocation */
    TMEM_ERR_LEAK,            /* columns still allocated at kernel exit */
    TMEM_ERR_QUADRANT,        /* a warp touched a lane outside its 32-lane quadrant */
    TMEM_ERR_UNALLOCATED,     /* access to a column that is not allocated */
    TMEM_ERR_SHAPE,           /* bad shape / .num / alignment */
    TMEM_ERR_ELEM_WIDTH,      /* ld/st of 16-bit elements: the instructions move 32-bit words */
    TMEM_ERR_COUNT
} tmem_err;

typedef struct {
    uint32_t cell[TMEM_LANES][TMEM_COLS];
    uint32_t alloc_start[TMEM_COLS / 32]; /* per allocation unit: start column of its allocation */
    uint16_t alloc_cols[TMEM_COLS / 32];  /* per allocation unit: its allocation's size, 0 = free */
    int relinquished;
    tmem_err last_err;
    char msg[256];
} tmem_model;

tmem_model *tmem_model_new(void);            /* cells hold a poison pattern */
void tmem_model_free(tmem_model *t);
const char *tmem_err_name(tmem_err e);

#define TMEM_POISON 0x7FBADBADu

/* Allocate / free like tcgen05.alloc / dealloc / relinquish_alloc_permit (cta_group::1). The
 * returned address has lane 0 and the first column of the allocation. */
tmem_err tmem_alloc(tmem_model *t, int ncols, uint32_t *addr);
tmem_err tmem_dealloc(tmem_model *t, uint32_t addr, int ncols);
void tmem_relinquish(tmem_model *t);
tmem_err tmem_check_released(tmem_model *t); /* at "kernel exit": TMEM_ERR_LEAK if anything is held */

/* The next CTA on the same SM: everything must have been freed (TMEM_ERR_LEAK otherwise); the
 * permit comes back; the cells keep their contents (nothing clears TMEM between CTAs, which is
 * what makes a first MMA with accumulate on read stale data: footgun FG05). */
tmem_err tmem_next_cta(tmem_model *t);

/* Is column col allocated? */
int tmem_col_allocated(const tmem_model *t, int col);

/* tcgen05.ld / tcgen05.st by one warp (warp = warp index in the CTA) at taddr. regs is
 * [32 threads][tmem_regs_per_thread(shape, num)] 32-bit words, row-major. elem_bits is the
 * width of the data type the caller asks the instruction to move: anything but 32 is
 * TMEM_ERR_ELEM_WIDTH (the seed's St32x32bOp(BFloat16) crash, footgun FG07). half_off is the
 * 16x32bx2 immediate. unpack16 models tcgen05.st's .unpack::16b: each 32-bit register is split
 * into two 16-bit values, each written to the low half of its own column (so the row of 32-bit
 * registers covers twice the columns). */
tmem_err tmem_ld(tmem_model *t, int warp, tmem_shape shape, int num, int half_off, uint32_t taddr,
                 int elem_bits, uint32_t *regs);
tmem_err tmem_st(tmem_model *t, int warp, tmem_shape shape, int num, int half_off, uint32_t taddr,
                 int elem_bits, int unpack16, const uint32_t *regs);

#endif
