/* The tensor maps of the attention tensors (Q, K, V, O) over their real strides, as stage E and
 * later will hand them to cuTensorMapEncodeTiled: rank 4 with dims {D, S, H, B} (innermost
 * first), the byte strides of dims 1..3 from fmha_params' element strides (so BHSD and BSHD both
 * work, and an MQA K/V head stride of 0 becomes a dimension H of 1), box {64, 128, 1, 1}: one
 * 128-byte swizzle-atom column (64 bf16) of one tile (Br or Bc = 128 rows; O: FMHA_O_BOX_ROWS,
 * the rows of one storing warp), 128B swizzle, zero
 * fill. A tile of D columns takes D / 64 boxes, at the tile's atom offsets: K-major for Q, K and
 * O (katom apart), MN-major for V (LBO apart) - the same boxes give both majors because V's rows
 * are the P V MMA's K index (tests/unit/test_fmha_tmaps.c checks both against the thread copies
 * through the TMA model).
 *
 * The mistakes footgun FG13 collects are the same builder with one switch, so the checker
 * (model/tmap_check.h) names the rule each one breaks before any driver is called. */
#ifndef FMHA_HOST_FMHA_TMAPS_H
#define FMHA_HOST_FMHA_TMAPS_H

#include <stdint.h>

#include <stddef.h>

#include "attn/fmha_core.h"
#include "attn/fmha_tma.h"
#include "model/tmap_check.h"

typedef enum { FMHA_TENSOR_Q, FMHA_TENSOR_K, FMHA_TENSOR_V, FMHA_TENSOR_O, FMHA_TENSOR_COUNT } fmha_tensor;

typedef enum {
    FMHA_TMAP_RIGHT = 0,
    FMHA_TMAP_RANK_STRIDES,    /* FG13: rank strides (dim 0's element size included) instead of rank-1 */
    FMHA_TMAP_ELEMENT_STRIDES, /* FG13: strides in elements, not bytes */
    FMHA_TMAP_WIDE_INNER_BOX,  /* FG13: the whole head dim in one box, wider than the 128-byte swizzle span */
    FMHA_TMAP_STRIDE_NOT_16,   /* FG13: a row stride of 8 bytes more than the real one (a padded row) */
    FMHA_TMAP_MISTAKE_COUNT
} fmha_tmap_mistake;

#ifdef __cplusplus
extern "C" {
#endif

/* The map of tensor t of p (global_address: the device pointer, or any 16-byte aligned value for
 * the checker). mistake = FMHA_TMAP_RIGHT for the map a stage uses. */
void fmha_tmap_params(const fmha_params *p, fmha_tensor t, uint64_t global_address, fmha_tmap_mistake mistake,
                      tmap_params *out);

/* The mistake a stage's fault bits ask for (FMHA_FAULT_TMAP_*), FMHA_TMAP_RIGHT without one. */
fmha_tmap_mistake fmha_tmap_mistake_of(unsigned faults);

/* The four maps of p (device pointers) for a GPU of CC cc_major, with p's mistake, into a (a->p
 * = *p). Returns 0; 2 when the checker refuses a map (err: "<tensor> map: <rule>: ..."); 1 when
 * the driver refuses one the checker accepted (a checker bug) or there is no driver. The last
 * successful encoding is kept: the same p encodes nothing again (timing loops launch often). */
int fmha_tmaps_encode(const fmha_params *p, int cc_major, fmha_tma_args *a, char *err, size_t len);

/* The checker's verdict on the four maps of p with its mistake (no driver, no device pointers):
 * 0, or the first refused map's tmap_rule with "<tensor> map: <rule>: ..." in err. */
int fmha_tmaps_check(const fmha_params *p, int cc_major, char *err, size_t len);

/* "q", "k", "v", "o"; "rank strides", ... */
const char *fmha_tensor_name(fmha_tensor t);
const char *fmha_tmap_mistake_name(fmha_tmap_mistake m);

#ifdef __cplusplus
}
#endif

#endif
