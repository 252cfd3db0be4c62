#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "stages/D_fp8_paged/decode.h"
#include "model/frag_map.h"

static int row_of(int t, int jr) { return 8 * (jr / 2) + 2 * (t % 4) + jr % 2; }
static int jr_of(int i) { return 2 * (i >> 2) + (i & 1); }

int main(void)
{
    int bad = 0;
    for (int NR = 8; NR <= 32; NR *= 2) {
        int cover[32][128];
        memset(cover, 0, sizeof cover);
        for (int t = 0; t < 128; t++)
            for (int h = 0; h < 2; h++)
                for (int i = 0; i < NR / 2; i++) {
                    int r, c;
                    wgmma_acc_map(t, i, &r, &c);
                    if (c != row_of(t, jr_of(i))) { printf("NR %d t %d i %d: c %d row_of %d\n", NR, t, i, c, row_of(t, jr_of(i))); bad++; }
                    if (jr_of(i) >= NR / 4) { printf("jr out of range\n"); bad++; }
                    if (c >= NR) { printf("col out of range\n"); bad++; }
                    if ((c % 8) / 2 != t % 4) { printf("lane%%4 mismatch\n"); bad++; }
                    cover[c][64 * h + r]++;
                }
        for (int c = 0; c < NR; c++)
            for (int k = 0; k < 128; k++)
                if (cover[c][k] != 1) { printf("NR %d row %d key %d covered %d\n", NR, c, k, cover[c][k]); bad++; }
        /* the reduction group: lanes with equal lane%4 in all warps: do they hold all keys of row c? */
        for (int c = 0; c < NR; c++) {
            int keys[128] = {0};
            int q = (c % 8) / 2;
            for (int w = 0; w < 4; w++)
                for (int l = q; l < 32; l += 4) {
                    int t = 32 * w + l;
                    for (int h = 0; h < 2; h++)
                        for (int i = 0; i < NR / 2; i++) {
                            int r, cc;
                            wgmma_acc_map(t, i, &r, &cc);
                            if (cc == c) keys[64 * h + r]++;
                        }
                }
            for (int k = 0; k < 128; k++) if (keys[k] != 1) { printf("group miss NR %d c %d k %d\n", NR, c, k); bad++; }
        }
        /* the O^T accumulator: d = 64dm + r, row c */
        smem_layout L = dec_smem_layout_make(NR, 128);
        printf("NR %d: regs/thread S %d O(D128) %d; DEC_SCALE_FLOATS %d\n", NR, NR, 2 * NR / 2, DEC_SCALE_FLOATS(NR));
        for (int D = 64; D <= 256; D *= 2) {
            L = dec_smem_layout_make(NR, D);
            printf("  D %d: tiles Q %u K %u Vs %u Vt %u P %u SC %u bars %u used %u bytes %u; scales end %u (next %u)\n", D, L.tile[0], L.tile[1],
                   L.tile[2], L.tile[3], L.tile[4], L.tile[5], L.bars, L.used, L.bytes, L.tile[5] + 4u * DEC_SCALE_FLOATS(NR), L.bars);
            smem_tile tq = dec_q_tile(NR, D), tp = dec_p_tile(NR);
            printf("     Q tile bytes %u katom %u sbo %u; P bytes %u; Q region %u..%u P region %u..%u\n", tq.bytes, tq.katom, tq.sbo, tp.bytes,
                   L.tile[0], L.tile[0] + tq.bytes, L.tile[4], L.tile[4] + tp.bytes);
        }
    }
    printf("bad %d\n", bad);
    return bad != 0;
}
