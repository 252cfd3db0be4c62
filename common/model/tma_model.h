/* A host model of what one TMA tile load (`cp.async.bulk.tensor`, tile mode, no interleave)
 * writes into SMEM: the box of the tensor map at the given coordinates, out-of-bounds elements
 * filled (zeros, or NaN with CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA for float types),
 * laid out densely with dim 0 innermost and then swizzled on the SMEM address (the same XOR as
 * model/canonical.h's swizzle_apply: 16-byte chunk bits [4, 7) ^= bits [7, 10) for 128B). The
 * transaction bytes a copy credits to its mbarrier are the whole box, out-of-bounds elements
 * included (PTX ISA 9.7.9.25 cp.async.bulk.tensor; notes/hardware.md section 10).
 *
 * Modelled from the PTX ISA and the CUDA driver documentation; the byte-for-byte comparison with
 * a real TMA copy on the H200 is stage E's conformance test. The project's tiles use an inner box
 * of exactly the swizzle span (64 bf16 = 128 bytes with 128B swizzle): such a box is one
 * swizzle-atom column of a canonical K-major tile (Q, K) or MN-major tile (V), which
 * tests/unit/test_tma_model.c checks against the thread fill. */
#ifndef FMHA_MODEL_TMA_MODEL_H
#define FMHA_MODEL_TMA_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "model/tmap_check.h"

/* Bytes of one box: prod(boxDim) * element size (what expect_tx must announce for this copy). */
uint32_t tma_box_bytes(const tmap_params *p);

/* The SMEM bytes a load of the box at coords[0 .. rank-1] (elements; negative or past the end
 * allowed) writes at smem + dst; `global` is the host copy of the tensor p describes (p's
 * global_address is not dereferenced). dst must be aligned to the swizzle's repeat (1024 bytes
 * for 128B). Returns 0 with *tx_bytes set, or 2 with a message when the map is one the driver
 * would refuse (tmap_check's rule; cc_major as there) or this model does not cover (interleave,
 * elementStrides other than 1, packed types, the 128B_ATOM swizzles), or dst is misaligned. */
int tma_model_load(const tmap_params *p, int cc_major, const void *global, const int32_t *coords, uint8_t *smem,
                   uint32_t dst, uint32_t *tx_bytes, char *err, size_t len);

#endif
