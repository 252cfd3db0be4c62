/* The tensor-map checker against the real driver: every set of the grid (tests/support/tmap_grid.c)
 * goes through cuTensorMapEncodeTiled on the Hopper machine and through tmap_check, and the two
 * verdicts must agree. Each row lands in build/reports/tmap_conformance.csv as recorded data; a
 * disagreement is printed with the uncertain rule that would explain it. Also the FG13 driver
 * cases on their own. Skips without a CC 9.0 GPU. */
#include <criterion/criterion.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "host/csv.h"
#include "host/device.h"
#include "host/tmap_encode.h"
#include "model/tmap_check.h"
#include "test_util.h"
#include "tmap_grid.h"

#define REPORT_DIR "build/reports"
#define REPORT_CSV REPORT_DIR "/tmap_conformance.csv"

typedef CUresult (*get_error_name_fn)(CUresult error, const char **pStr);

_Static_assert(_Alignof(CUtensorMap) >= 64, "cuTensorMapEncodeTiled needs a 64-byte aligned map");

typedef struct {
    tmap_encode_tiled_fn encode; /* host/tmap_encode.h: the driver's, through the runtime */
    get_error_name_fn err_name;
    char *base; /* cudaMalloc'd, 256-byte aligned: grid addresses are offsets from it */
    int cc_major;
} driver;

static void driver_open(driver *d)
{
    memset(d, 0, sizeof *d);
    CUDA_ASSERT(cudaFree(0)); /* a current context for the driver call */
    char why[256] = "";
    d->encode = tmap_driver_encode_fn(why, sizeof why);
    cr_assert(d->encode != NULL, "%s", why);
    enum cudaDriverEntryPointQueryResult q;
    void *fn = NULL;
    if (cudaGetDriverEntryPointByVersion("cuGetErrorName", &fn, 12000, cudaEnableDefault, &q) == cudaSuccess &&
        q == cudaDriverEntryPointSuccess)
        d->err_name = (get_error_name_fn)fn;
    CUDA_ASSERT(cudaDeviceGetAttribute(&d->cc_major, cudaDevAttrComputeCapabilityMajor, 0));
    CUDA_ASSERT(cudaMalloc((void **)&d->base, 1 << 20));
    cr_assert_eq((uintptr_t)d->base % 256, 0);
}

/* The driver reads tensorRank entries of each array before (or without) checking the rank, so a
 * set with rank 6 or 7 gets arrays long enough to be read safely. */
static CUresult driver_encode(const driver *d, const tmap_params *p)
{
    cuuint64_t dim[8], stride[8];
    cuuint32_t box[8], es[8];
    for (int i = 0; i < 8; i++) {
        dim[i] = i < 5 ? p->global_dim[i] : 1;
        stride[i] = i < 4 ? p->global_strides[i] : p->global_strides[3];
        box[i] = i < 5 ? p->box_dim[i] : 1;
        es[i] = i < 5 ? p->element_strides[i] : 1;
    }
    CUtensorMap map;
    memset(&map, 0, sizeof map);
    return d->encode(&map, (CUtensorMapDataType)p->data_type, (cuuint32_t)p->rank, d->base + p->global_address, dim,
                     stride, box, es, (CUtensorMapInterleave)p->interleave, (CUtensorMapSwizzle)p->swizzle,
                     (CUtensorMapL2promotion)p->l2_promotion, (CUtensorMapFloatOOBfill)p->oob_fill);
}

static const char *result_name(const driver *d, CUresult r)
{
    const char *s = NULL;
    if (d->err_name && d->err_name(r, &s) == CUDA_SUCCESS && s) return s;
    return "?";
}

static void join_u64(char *buf, size_t len, const uint64_t *v, unsigned n)
{
    size_t used = 0;
    buf[0] = '\0';
    for (unsigned i = 0; i < n && used < len; i++)
        used += (size_t)snprintf(buf + used, len - used, "%s%" PRIu64, i ? " " : "", v[i]);
}

static void join_u32(char *buf, size_t len, const uint32_t *v, unsigned n)
{
    size_t used = 0;
    buf[0] = '\0';
    for (unsigned i = 0; i < n && used < len; i++)
        used += (size_t)snprintf(buf + used, len - used, "%s%u", i ? " " : "", v[i]);
}

static FILE *report_open(void)
{
    if (mkdir("build", 0777) != 0 && errno != EEXIST) return NULL;
    if (mkdir(REPORT_DIR, 0777) != 0 && errno != EEXIST) return NULL;
    remove(REPORT_CSV); /* one run per file: csv_open appends */
    static const char *const cols[] = {
        "label",       "data_type",    "rank",        "address_offset", "global_dim",     "global_strides",
        "box_dim",     "element_strides", "interleave", "swizzle",      "l2_promotion",   "oob_fill",
        "driver_result", "driver_result_name", "driver_accepts", "checker_rule", "checker_accepts",
        "strict_rule", "agree",       "gpu",          "cc_major",    "driver_version"};
    return csv_open(REPORT_CSV, cols, (int)(sizeof cols / sizeof cols[0]));
}

Test(tmap_conformance, checker_matches_driver_on_grid)
{
    SKIP_WITHOUT_GPU(9);
    driver d;
    driver_open(&d);
    gpu_info g;
    gpu_query(&g);

    int n = tmap_grid_cases(NULL, 0);
    tmap_grid_case *c = malloc(sizeof *c * (size_t)n);
    cr_assert(c);
    cr_assert_eq(tmap_grid_cases(c, n), n);
    FILE *csv = report_open();
    cr_expect(csv != NULL, "cannot write %s", REPORT_CSV);

    int accepted = 0, rejected = 0, disagree = 0;
    for (int i = 0; i < n; i++) {
        const tmap_params *p = &c[i].p;
        CUresult res = driver_encode(&d, p);
        int drv_ok = res == CUDA_SUCCESS;
        char msg[256], strict_msg[256], params[512];
        int rule = tmap_check(p, d.cc_major, msg, sizeof msg);
        int strict = tmap_check_rules(p, d.cc_major, TMAP_RULES_ALL, strict_msg, sizeof strict_msg);
        int agree = drv_ok == (rule == TMAP_OK);
        if (drv_ok) accepted++;
        else rejected++;
        if (!agree) {
            disagree++;
            tmap_format_params(p, params, sizeof params);
            /* Driver refuses what the checker passes: an uncertain rule that is off by default may
             * be the one (strict_rule). Driver accepts what the checker refuses: rule is wrong. */
            printf("tmap DISAGREE %s: driver %d (%s), checker %s%s%s; with every rule: %s%s%s\n  %s\n", c[i].label,
                   (int)res, result_name(&d, res), tmap_rule_name(rule), rule ? " - " : "", msg,
                   tmap_rule_name(strict), strict ? " - " : "", strict_msg, params);
        }
        if (csv) {
            unsigned r = p->rank <= 5 ? p->rank : 5;
            char f[22][128];
            snprintf(f[0], 128, "%s", c[i].label);
            snprintf(f[1], 128, "%s", tmap_data_type_name(p->data_type));
            snprintf(f[2], 128, "%u", p->rank);
            snprintf(f[3], 128, "%" PRIu64, p->global_address);
            join_u64(f[4], 128, p->global_dim, r);
            join_u64(f[5], 128, p->global_strides, r ? r - 1 : 0);
            join_u32(f[6], 128, p->box_dim, r);
            join_u32(f[7], 128, p->element_strides, r);
            snprintf(f[8], 128, "%s", tmap_interleave_name(p->interleave));
            snprintf(f[9], 128, "%s", tmap_swizzle_name(p->swizzle));
            snprintf(f[10], 128, "%d", p->l2_promotion);
            snprintf(f[11], 128, "%d", p->oob_fill);
            snprintf(f[12], 128, "%d", (int)res);
            snprintf(f[13], 128, "%s", result_name(&d, res));
            snprintf(f[14], 128, "%d", drv_ok);
            snprintf(f[15], 128, "%s", tmap_rule_name(rule));
            snprintf(f[16], 128, "%d", rule == TMAP_OK);
            snprintf(f[17], 128, "%s", tmap_rule_name(strict));
            snprintf(f[18], 128, "%d", agree);
            f[19][0] = 0;
            snprintf(f[20], 128, "%d", d.cc_major);
            snprintf(f[21], 128, "%d", g.driver_version);
            const char *row[22];
            for (int k = 0; k < 22; k++) row[k] = f[k];
            row[19] = g.name;
            csv_row(csv, row, 22);
        }
    }
    if (csv) fclose(csv);
    printf("tmap conformance: %d sets, %d accepted by driver, %d rejected, %d disagreements\n", n, accepted,
           rejected, disagree);
    fflush(stdout);
    cr_expect_eq(disagree, 0, "%d of %d sets: checker and driver disagree (rows in %s)", disagree, n, REPORT_CSV);
    cr_expect(accepted > 0 && rejected > 0, "the grid must exercise both verdicts");
    free(c);
    cudaFree(d.base);
}

Test(tmap_conformance, fg13_driver_cases)
{
    SKIP_WITHOUT_GPU(9);
    driver d;
    driver_open(&d);
    tmap_params p;
    memset(&p, 0, sizeof p);
    p.data_type = CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
    p.rank = 2;
    p.global_dim[0] = 64, p.global_dim[1] = 128;
    p.global_strides[0] = 128;
    p.box_dim[0] = 64, p.box_dim[1] = 64;
    p.element_strides[0] = p.element_strides[1] = 1;
    p.swizzle = CU_TENSOR_MAP_SWIZZLE_128B;
    cr_expect_eq(driver_encode(&d, &p), CUDA_SUCCESS, "the correct 2-D bf16 map");
    tmap_params s100 = p;
    s100.global_strides[0] = 100;
    cr_expect_eq(driver_encode(&d, &s100), CUDA_ERROR_INVALID_VALUE, "100-byte stride");
    tmap_params wide = p;
    wide.global_dim[0] = 128;
    wide.global_strides[0] = 256;
    wide.box_dim[0] = 128;
    cr_expect_eq(driver_encode(&d, &wide), CUDA_ERROR_INVALID_VALUE, "256-byte inner box with SWIZZLE_128B");
    cudaFree(d.base);
}
