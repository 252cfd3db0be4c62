/* Encoding a tensor map for real: the project's checker first (model/tmap_check.h: a set it
 * refuses is a bad argument, exit 2, with the rule's name, and the driver is never called), then
 * cuTensorMapEncodeTiled, reached through the runtime's entry-point query (nothing links libcuda;
 * CI has no driver). A driver refusal the checker did not predict is a checker bug and says so. */
#ifndef FMHA_HOST_TMAP_ENCODE_H
#define FMHA_HOST_TMAP_ENCODE_H

#include <stddef.h>

#include <cuda.h>

#include "model/tmap_check.h"

#ifdef __cplusplus
extern "C" { /* stage D's sm90 launcher (C++) encodes its TMA gather's maps */
#endif

/* cuda.h's PFN_cuTensorMapEncodeTiled_v12000, spelt out. */
typedef CUresult (*tmap_encode_tiled_fn)(CUtensorMap *tensorMap, CUtensorMapDataType tensorDataType,
                                         cuuint32_t tensorRank, void *globalAddress, const cuuint64_t *globalDim,
                                         const cuuint64_t *globalStrides, const cuuint32_t *boxDim,
                                         const cuuint32_t *elementStrides, CUtensorMapInterleave interleave,
                                         CUtensorMapSwizzle swizzle, CUtensorMapL2promotion l2Promotion,
                                         CUtensorMapFloatOOBfill oobFill);

/* The driver's cuTensorMapEncodeTiled (NULL with a message when there is no driver). */
tmap_encode_tiled_fn tmap_driver_encode_fn(char *err, size_t len);

/* Encode p with global_address taken from `global` (p->global_address is ignored). Returns 0, 2 when
 * the checker refuses the set (err: "<rule>: <message>"), or 1 when the driver refuses what the
 * checker accepted, or there is no driver (err says which). */
int tmap_encode(const tmap_params *p, void *global, int cc_major, CUtensorMap *out, char *err, size_t len);

/* The driver alone, the checker skipped: what cuTensorMapEncodeTiled answers for p (at address
 * global), for showing that a set the checker refuses is one the driver refuses too (footgun
 * FG13). Returns the CUresult, or -1 with err set when there is no driver. */
int tmap_encode_unchecked(const tmap_params *p, void *global, CUtensorMap *out, char *err, size_t len);

#ifdef __cplusplus
}
#endif

#endif
