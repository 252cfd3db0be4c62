/* A host model of what one TMA tile load (`cp.async.bulk.tensor`, tile mode, no interleave)
 * writes into SMEM: the box of the tensor map at the given coordinates, out-of-bounds elements
 * filled (zeros, or NaN with CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA for float types:
 * 0x7FF7 in every 16 bits, as the H200 writes it),
 * laid out with dim 0 innermost, one box row (dim 0's extent) after the other, then swizzled on the
 * SMEM address (the same XOR as model/canonical.h's swizzle_apply: 16-byte chunk bits [4, 7) ^=
 * bits [7, 10) for 128B). With a swizzle, a box row narrower than the swizzle span still takes
 * the whole span in SMEM (tma_smem_row_bytes: the rest of the span is left alone); the H200 showed
 * it (a 16-byte row under 32B swizzle lands 32 bytes after the previous one). The
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

/* SMEM bytes between consecutive box rows: dim 0's extent in bytes, at least the swizzle span
 * when there is a swizzle. And the SMEM the box spans: that times the other box dims. */
uint32_t tma_smem_row_bytes(const tmap_params *p);
uint32_t tma_smem_bytes(const tmap_params *p);

/* The SMEM bytes a load of the box at coords[0 .. rank-1] (elements; negative or past the end
 * allowed) writes at smem + dst; `global` is the host copy of the tensor p describes (p's
 * global_address is not dereferenced). dst must be aligned to the swizzle's repeat (1024 bytes
 * for 128B). Returns 0 with *tx_bytes set, or 2 with a message when the map is one the driver
 * would refuse (tmap_check's rule; cc_major as there) or this model does not cover (interleave,
 * elementStrides other than 1, packed types, the 128B_ATOM swizzles), or dst is misaligned. */
int tma_model_load(const tmap_params *p, int cc_major, const void *global, const int32_t *coords, uint8_t *smem,
                   uint32_t dst, uint32_t *tx_bytes, char *err, size_t len);

/* The global bytes one TMA tile store (cp.async.bulk.tensor global.shared::cta) writes: the box
 * at coords from the (swizzled) SMEM image at smem + src into `global`; elements of the box that
 * fall outside the tensor are not written (stores clip). Same coverage and errors as the load.
 * When the store reads its SMEM is the caller's question (footgun FG22): not before a
 * fence.proxy.async makes the generic writes visible to it, and at any time up to the
 * bulk-group wait, so SMEM must not be reused before `wait_group.read`. */
int tma_model_store(const tmap_params *p, int cc_major, void *global, const int32_t *coords, const uint8_t *smem,
                    uint32_t src, char *err, size_t len);

/* The ordering rule of TMA stores as the model plays it (the latest the PTX ISA allows, so a
 * protocol that works here works on any timing): SMEM written by ordinary stores reaches the async
 * proxy only at a fence.proxy.async (tma_queue_fence copies the CTA's SMEM into the view the
 * copies read), and a committed store reads that view not when it is issued but when the bulk
 * group is waited for (tma_queue_wait_read). So a store issued without the fence writes stale data,
 * and SMEM overwritten (and fenced) before the wait is what an earlier store writes (FG22). */
#define TMA_QUEUE_MAX 64
typedef struct {
    uint8_t *view;   /* SMEM as the async proxy sees it */
    uint32_t bytes;
    int n;           /* stores issued, not yet read */
    tmap_params p[TMA_QUEUE_MAX];
    int32_t coords[TMA_QUEUE_MAX][5];
    uint32_t src[TMA_QUEUE_MAX];
} tma_store_queue;

/* view: caller-owned, bytes long, its initial contents what the async proxy saw before (poison,
 * an earlier tile). */
void tma_queue_init(tma_store_queue *q, uint8_t *view, uint32_t bytes);
void tma_queue_fence(tma_store_queue *q, const uint8_t *smem);
/* 0, or 2 when the queue is full. */
int tma_queue_store(tma_store_queue *q, const tmap_params *p, const int32_t *coords, uint32_t src);
/* Every pending store reads the view now and writes global (tma_model_store); 0, or 2 as there. */
int tma_queue_wait_read(tma_store_queue *q, int cc_major, void *global, char *err, size_t len);

#endif
