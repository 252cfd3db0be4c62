#include "model/tmem_model.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const names[TMEM_ERR_COUNT] = {
    "TMEM_OK", "TMEM_ERR_ALLOC_SIZE", "TMEM_ERR_ALLOC_EXHAUSTED", "TMEM_ERR_RELINQUISHED",
    "TMEM_ERR_DEALLOC", "TMEM_ERR_LEAK", "TMEM_ERR_QUADRANT", "TMEM_ERR_UNALLOCATED",
    "TMEM_ERR_SHAPE", "TMEM_ERR_ELEM_WIDTH"};

const char *tmem_err_name(tmem_err e) { return (e >= 0 && e < TMEM_ERR_COUNT) ? names[e] : "?"; }

static tmem_err fail(tmem_model *t, tmem_err e, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static tmem_err fail(tmem_model *t, tmem_err e, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = snprintf(t->msg, sizeof t->msg, "%s: ", tmem_err_name(e));
    vsnprintf(t->msg + n, sizeof t->msg - (size_t)n, fmt, ap);
    va_end(ap);
    t->last_err = e;
    return e;
}

tmem_model *tmem_model_new(void)
{
    tmem_model *t = calloc(1, sizeof *t);
    if (!t) abort();
    for (int l = 0; l < TMEM_LANES; l++)
        for (int c = 0; c < TMEM_COLS; c++) t->cell[l][c] = TMEM_POISON;
    return t;
}

void tmem_model_free(tmem_model *t) { free(t); }

tmem_err tmem_alloc(tmem_model *t, int ncols, uint32_t *addr)
{
    if (t->relinquished)
        return fail(t, TMEM_ERR_RELINQUISHED, "tcgen05.alloc after tcgen05.relinquish_alloc_permit");
    if (ncols < 32 || ncols > TMEM_COLS || (ncols & (ncols - 1)))
        return fail(t, TMEM_ERR_ALLOC_SIZE, "nCols=%d: must be a power of two in [32, 512]", ncols);
    int units = ncols / 32;
    /* First fit on a multiple of the size, like a buddy allocator; where the real allocator puts
     * it is unspecified, which is why kernels must use the returned address. */
    for (int u = 0; u + units <= TMEM_COLS / 32; u += units) {
        int free_run = 1;
        for (int v = u; v < u + units; v++) free_run &= t->alloc_cols[v] == 0;
        if (!free_run) continue;
        for (int v = u; v < u + units; v++) { t->alloc_cols[v] = (uint16_t)ncols; t->alloc_start[v] = (uint32_t)(u * 32); }
        *addr = tmem_addr(0, 0, u * 32);
        return TMEM_OK;
    }
    return fail(t, TMEM_ERR_ALLOC_EXHAUSTED, "nCols=%d: not enough free columns; the hardware would "
                "block in tcgen05.alloc until another CTA frees some", ncols);
}

tmem_err tmem_dealloc(tmem_model *t, uint32_t addr, int ncols)
{
    int col = tmem_addr_col(addr);
    if (tmem_addr_lane(addr) != 0 || col % 32 || col >= TMEM_COLS || ncols < 32 || col + ncols > TMEM_COLS)
        return fail(t, TMEM_ERR_DEALLOC, "dealloc(addr=0x%08X, nCols=%d): not an allocation", addr, ncols);
    int u0 = col / 32;
    if (t->alloc_cols[u0] != ncols || t->alloc_start[u0] != (uint32_t)col)
        return fail(t, TMEM_ERR_DEALLOC, "dealloc(col %d, nCols=%d) does not match the allocation "
                    "(%d columns at %u)", col, ncols, t->alloc_cols[u0], t->alloc_start[u0]);
    for (int v = u0; v < u0 + ncols / 32; v++) t->alloc_cols[v] = 0;
    return TMEM_OK;
}

void tmem_relinquish(tmem_model *t) { t->relinquished = 1; }

tmem_err tmem_check_released(tmem_model *t)
{
    for (int u = 0; u < TMEM_COLS / 32; u++)
        if (t->alloc_cols[u])
            return fail(t, TMEM_ERR_LEAK, "column %d still allocated at exit: all TMEM must be freed",
                        u * 32);
    return TMEM_OK;
}

tmem_err tmem_next_cta(tmem_model *t)
{
    tmem_err e = tmem_check_released(t);
    if (e) return e;
    t->relinquished = 0;
    return TMEM_OK;
}

int tmem_col_allocated(const tmem_model *t, int col)
{
    return col >= 0 && col < TMEM_COLS && t->alloc_cols[col / 32] != 0;
}

/* Shared checks of ld and st; on success fills the cell coordinates of every (thread, reg). */
static tmem_err access_check(tmem_model *t, const char *op, int warp, tmem_shape shape, int num,
                             int half_off, uint32_t taddr, int elem_bits, int unpack16)
{
    if (elem_bits != 32)
        return fail(t, TMEM_ERR_ELEM_WIDTH, "tcgen05.%s of %d-bit elements: the instruction moves "
                    "32-bit words only; pack two 16-bit values per word", op, elem_bits);
    if (shape < 0 || shape >= TMEM_SHAPES || num < 1 || num > tmem_max_num(shape) || (num & (num - 1)))
        return fail(t, TMEM_ERR_SHAPE, "tcgen05.%s: .num=%d is not a legal repetition for this shape", op, num);
    int lanes = tmem_shape_lanes(shape);
    int l0 = tmem_addr_lane(taddr), c0 = tmem_addr_col(taddr);
    int q0 = tmem_warp_lane_base(warp);
    if (l0 < q0 || l0 + lanes > q0 + 32)
        return fail(t, TMEM_ERR_QUADRANT, "warp %d (warp %% 4 = %d) may access lanes %d-%d only; "
                    "tcgen05.%s at lane %d touches lanes %d-%d", warp, warp % 4, q0, q0 + 31, op, l0,
                    l0, l0 + lanes - 1);
    int regs = tmem_regs_per_thread(shape, num);
    int widen = unpack16 ? 2 : 1;
    for (int th = 0; th < 32; th++)
        for (int r = 0; r < regs; r++) {
            int dl, dc;
            tmem_thread_map(shape, half_off, th, r, &dl, &dc);
            for (int h = 0; h < widen; h++) {
                int col = c0 + dc * widen + h;
                if (!tmem_col_allocated(t, col))
                    return fail(t, TMEM_ERR_UNALLOCATED, "tcgen05.%s by warp %d reaches column %d, "
                                "which is not allocated", op, warp, col);
            }
        }
    return TMEM_OK;
}

tmem_err tmem_ld(tmem_model *t, int warp, tmem_shape shape, int num, int half_off, uint32_t taddr,
                 int elem_bits, uint32_t *regs)
{
    tmem_err e = access_check(t, "ld", warp, shape, num, half_off, taddr, elem_bits, 0);
    if (e) return e;
    int n = tmem_regs_per_thread(shape, num);
    for (int th = 0; th < 32; th++)
        for (int r = 0; r < n; r++) {
            int dl, dc;
            tmem_thread_map(shape, half_off, th, r, &dl, &dc);
            regs[th * n + r] = t->cell[tmem_addr_lane(taddr) + dl][tmem_addr_col(taddr) + dc];
        }
    return TMEM_OK;
}

tmem_err tmem_st(tmem_model *t, int warp, tmem_shape shape, int num, int half_off, uint32_t taddr,
                 int elem_bits, int unpack16, const uint32_t *regs)
{
    tmem_err e = access_check(t, "st", warp, shape, num, half_off, taddr, elem_bits, unpack16);
    if (e) return e;
    int n = tmem_regs_per_thread(shape, num);
    for (int th = 0; th < 32; th++)
        for (int r = 0; r < n; r++) {
            int dl, dc;
            tmem_thread_map(shape, half_off, th, r, &dl, &dc);
            int lane = tmem_addr_lane(taddr) + dl, c0 = tmem_addr_col(taddr);
            uint32_t v = regs[th * n + r];
            if (unpack16) {
                t->cell[lane][c0 + 2 * dc] = v & 0xFFFFu;
                t->cell[lane][c0 + 2 * dc + 1] = v >> 16;
            } else {
                t->cell[lane][c0 + dc] = v;
            }
        }
    return TMEM_OK;
}
