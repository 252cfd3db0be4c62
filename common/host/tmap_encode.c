#include "host/tmap_encode.h"

#include <stdio.h>
#include <string.h>

#include <cuda_runtime_api.h>

tmap_encode_tiled_fn tmap_driver_encode_fn(char *err, size_t len)
{
    static tmap_encode_tiled_fn fn;
    if (fn) return fn;
    void *f = NULL;
    enum cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;
    const cudaError_t e = cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &f, 12000, cudaEnableDefault, &q);
    if (e != cudaSuccess || q != cudaDriverEntryPointSuccess || !f) {
        snprintf(err, len, "cuTensorMapEncodeTiled not available (%s, query result %d)", cudaGetErrorName(e), (int)q);
        return NULL;
    }
    fn = (tmap_encode_tiled_fn)f;
    return fn;
}

static CUresult driver_encode(tmap_encode_tiled_fn fn, const tmap_params *q, void *global, CUtensorMap *out)
{
    cuuint64_t dim[5], stride[4];
    cuuint32_t box[5], es[5];
    for (int i = 0; i < 5; i++) {
        dim[i] = q->global_dim[i];
        box[i] = q->box_dim[i];
        es[i] = q->element_strides[i];
        if (i < 4) stride[i] = q->global_strides[i];
    }
    memset(out, 0, sizeof *out);
    return fn(out, (CUtensorMapDataType)q->data_type, (cuuint32_t)q->rank, global, dim, stride, box, es,
              (CUtensorMapInterleave)q->interleave, (CUtensorMapSwizzle)q->swizzle,
              (CUtensorMapL2promotion)q->l2_promotion, (CUtensorMapFloatOOBfill)q->oob_fill);
}

int tmap_encode(const tmap_params *p, void *global, int cc_major, CUtensorMap *out, char *err, size_t len)
{
    tmap_params q = *p;
    q.global_address = (uint64_t)(uintptr_t)global;
    char msg[256];
    const int rule = tmap_check(&q, cc_major, msg, sizeof msg);
    if (rule) {
        snprintf(err, len, "%s: %s", tmap_rule_name(rule), msg);
        return 2;
    }
    tmap_encode_tiled_fn fn = tmap_driver_encode_fn(err, len);
    if (!fn) return 1;
    const CUresult r = driver_encode(fn, &q, global, out);
    if (r != CUDA_SUCCESS) {
        char line[512];
        tmap_format_params(&q, line, sizeof line);
        snprintf(err, len, "the driver refused (CUresult %d) a set the checker accepts: a checker bug: %s", (int)r, line);
        return 1;
    }
    return 0;
}

int tmap_encode_unchecked(const tmap_params *p, void *global, CUtensorMap *out, char *err, size_t len)
{
    tmap_encode_tiled_fn fn = tmap_driver_encode_fn(err, len);
    if (!fn) return -1;
    tmap_params q = *p;
    q.global_address = (uint64_t)(uintptr_t)global;
    return (int)driver_encode(fn, &q, global, out);
}
