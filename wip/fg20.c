#include <stdio.h>
#include "decode.h"
int main(void){
  for (int NR = 8; NR <= 64; NR *= 2) for (int D = 64; D <= 256; D *= 2) {
    smem_layout L = dec_smem_layout_make(NR, D);
    smem_tile tv = dec_v_mn_tile(D);
    unsigned maxb = 0;
    int ndm = (NR == 64) ? 1 : D / 64; /* main: one B operand of N = D rows, mn0 = 0 */
    for (int dm = 0; dm < ndm; dm++) for (int k = 0; k < 128; k += 32) {
      unsigned start = L.tile[DEC_SMEM_VT] + smem_tile_offset_raw(&tv, NR == 64 ? 0 : 64 * dm, k);
      unsigned rows = NR == 64 ? D : 64;
      unsigned last = start + (rows / 8 - 1) * tv.sbo + 7 * 128 + 127;
      if (last > maxb) maxb = last;
    }
    printf("%s NR %2d D %3d: Vt slot %6u..%6u, FG20 reads up to %6u; used %6u, allocated(min) %6u -> %s\n", NR == 64 ? "main" : "br  ", NR, D,
      L.tile[DEC_SMEM_VT], L.tile[DEC_SMEM_P], maxb, L.used, L.bytes - 1008, maxb >= L.used ? "PAST THE LAYOUT" : maxb >= L.tile[DEC_SMEM_P] ? "into P/scales" : "inside Vt");
  }
}
