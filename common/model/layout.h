/* A small evaluator of CuTe-style shape:stride layouts with nested modes, e.g.
 *   ((128,16),1,(4,2)):((65536,1),0,(16,64))
 * A layout maps an index to an offset: the index is split over the leaf modes left to right,
 * leftmost fastest (colexicographic, CuTe's order also inside nested modes), and each leaf
 * coordinate is multiplied by its stride. Nesting only groups modes; it never reorders them.
 * Footgun FG09: the layout above looks non-sequential but is m*65536 + k for k = k0 + 16*k1 +
 * 64*k2, i.e. exactly the TMEM address (lane m << 16) + column k. Host only. */
#ifndef FMHA_MODEL_LAYOUT_H
#define FMHA_MODEL_LAYOUT_H

#include <stddef.h>

#define LAYOUT_MAX_LEAVES 32
#define LAYOUT_MAX_TOP 16

typedef struct {
    int nleaves;
    long shape[LAYOUT_MAX_LEAVES];
    long stride[LAYOUT_MAX_LEAVES];
    int ntop;                        /* top-level modes */
    int top_first[LAYOUT_MAX_TOP];   /* first leaf of each top-level mode */
    int top_count[LAYOUT_MAX_TOP];   /* leaves of each top-level mode */
} layout_t;

/* Parse "shape:stride" (tuples in parentheses, integers >= 0, shapes >= 1). 0 or 2 with a message
 * naming the position and the rule. */
int layout_parse(const char *text, layout_t *l, char *err, size_t len);

long layout_size(const layout_t *l);   /* product of the shapes */
long layout_cosize(const layout_t *l); /* 1 + largest offset */

/* Offset of a 1-D index (0 <= idx < size). */
long layout_eval(const layout_t *l, long idx);

/* Offset of a coordinate given per top-level mode (each split colexicographically inside its mode). */
long layout_eval_top(const layout_t *l, const long *coord);

/* FG09's WRONG reading, kept for the footgun and stage B's variant that show it: top-level mode
 * `top`'s 1-D coordinate split with its LAST sub-mode fastest (a C array's order), not CuTe's
 * colexicographic one. layout_eval_top(l, coord) with coord[top] = idx is the right reading. */
long layout_eval_mode_last_fastest(const layout_t *l, int top, long idx);

/* "(128,16,1,4,2):(65536,1,0,16,64)": the flattened form. */
void layout_flat_string(const layout_t *l, char *buf, size_t len);

#endif
