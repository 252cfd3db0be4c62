/* Host emulator of the tensor-core MMAs, reading operands out of an SMEM byte image through the
 * descriptors exactly as the hardware addresses them (model/canonical.h), so a wrong descriptor, a
 * wrong fill or a wrong K advance gives the same wrong answer here as on the GPU.
 *
 * sm100: tcgen05.mma (cta_group::1, dense), shape, majors and types from the instruction
 *   descriptor; A from SMEM (SS) or from TMEM (TS); D in the TMEM model (f32), layout D for M=128
 *   (row i -> lane i) and layout F for M=64 (rows 16w..16w+15 -> lanes 32w..32w+15, +16 when the
 *   address's lane is 16) (PTX 9.7.16.10.5); accumulate = the enable-input-d predicate.
 * sm90: wgmma.mma_async m64nNk16 (bf16/f16) / m64nNk32 (e4m3/e5m2), SS form, D in the per-thread
 *   register fragments of the warpgroup (model/frag_map.h), scale-d = accumulate.
 * Products are summed in double and rounded to f32 once per MMA: for the integer inputs of the
 * exact tests this equals the hardware bit for bit. */
#ifndef FMHA_MODEL_MMA_EMU_H
#define FMHA_MODEL_MMA_EMU_H

#include <stddef.h>
#include <stdint.h>

#include "model/canonical.h"
#include "model/idesc.h"
#include "model/smem_desc.h"
#include "model/tmem_model.h"

typedef struct {
    const uint8_t *bytes; /* SMEM image; byte 0 is SMEM address `base` */
    uint32_t base;
    uint32_t size;
} smem_image;

typedef enum {
    EMU_OK = 0,
    EMU_ERR_IDESC,   /* illegal instruction descriptor */
    EMU_ERR_DESC,    /* illegal SMEM descriptor (bit 46, swizzle code, base offset, ...) */
    EMU_ERR_BOUNDS,  /* an operand element lies outside the SMEM image */
    EMU_ERR_TMEM,    /* TMEM rule broken (see the TMEM model's message) */
    EMU_ERR_FORMAT,  /* element format not modelled */
    EMU_ERR_COUNT
} emu_err;

typedef struct {
    emu_err code;
    char msg[320];
} emu_status;

const char *emu_err_name(emu_err e);

/* Operand element formats for the readers (kind and code as in model/idesc.h). */
double emu_decode(int kind, unsigned fmt, const uint8_t *p);
int emu_elem_bytes(int kind, unsigned fmt); /* 2 or 1; 0 if not modelled */

/* Element (mn, k) of one MMA operand read through decoded descriptor fields. */
emu_err emu_read_operand(const smem_image *img, const smem_desc_fields *d, operand_major major,
                         int kind, unsigned fmt, int mn, int k, double *out, emu_status *st);

/* sm100 tcgen05.mma. a_tmem is used when a_from_tmem (TS form), adesc otherwise. */
emu_err emu_tcgen05_mma(tmem_model *tm, const smem_image *img, uint32_t d_tmem, int a_from_tmem,
                        uint32_t a_tmem, uint64_t adesc, uint64_t bdesc, uint32_t idesc, int kind,
                        int accumulate, emu_status *st);

/* sm90 wgmma, SS form: acc is [128 threads][n/2] f32 registers of the warpgroup. */
emu_err emu_wgmma_ss(float *acc, const smem_image *img, uint64_t adesc, uint64_t bdesc, int n,
                     int kind, unsigned fmt, int trans_a, int trans_b, int scale_d, emu_status *st);

/* sm90 wgmma, RS form (bf16/f16 only): a_regs is [128 threads][4] b32 registers holding the A
 * fragment of one k16 step (model/frag_map.h wgmma_a_map), B from SMEM. */
emu_err emu_wgmma_rs(float *acc, const uint32_t *a_regs, const smem_image *img, uint64_t bdesc, int n,
                     unsigned fmt, int trans_b, int scale_d, emu_status *st);

#endif
