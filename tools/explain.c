/* explain: decode and encode the bit layouts a tensor-core kernel depends on, with the project's
 * own model code (common/model/), for someone debugging a kernel:
 *   explain idesc        tcgen05.mma instruction descriptor        (model/idesc.h)
 *   explain smem-desc    SMEM matrix descriptor, sm100 and sm90    (model/smem_desc.h, canonical.h)
 *   explain tmem         tcgen05.ld/st thread -> (lane, column)    (model/frag_map.h, tmem_model.h)
 *   explain wgmma-frag   wgmma accumulator / A-fragment registers  (model/frag_map.h)
 *   explain tmap         cuTensorMapEncodeTiled parameter rules    (model/tmap_check.h)
 *   explain layout       CuTe shape:stride layouts                 (model/layout.h)
 *   explain decode       stage D's layout of a decode step         (attn/decode_core.h)
 *   explain ring         stage F's ring: SMEM, barriers, TMEM, parities (stages/F_pipeline/fmha.h)
 * The tool never encodes anything itself: when the model is right, so is the tool, and a kernel
 * built from the same model agrees with what it prints. Each subcommand lives in
 * tools/explain/cmd_*.h (header-only, because every .c file directly in tools/ is built as its own binary).
 * Exit status: 0 explained / valid, 2 bad input or a value its checker rejects (stderr names the
 * flag or rule), 1 internal failure. */
#include <stdio.h>
#include <string.h>

#include "explain/args.h"
#include "explain/cmd_decode.h"
#include "explain/cmd_idesc.h"
#include "explain/cmd_layout.h"
#include "explain/cmd_ring.h"
#include "explain/cmd_smem.h"
#include "explain/cmd_tmap.h"
#include "explain/cmd_tmem.h"

static const char USAGE[] =
    "usage: explain <command> [arguments]      explain <command> --help for its flags\n"
    "Encode and decode tensor-core bit layouts with this project's model code.\n"
    "  idesc       tcgen05.mma instruction descriptor: --m 128 --n 64 --ab bf16 ... or 0x08110490\n"
    "  smem-desc   SMEM matrix descriptor (sm100 / sm90): --major k --swizzle 128 --mn 128 --k 64 ...\n"
    "              or 0x4000404000010000\n"
    "  tmem        tcgen05.ld/st: which thread/register holds which TMEM (lane, column)\n"
    "  wgmma-frag  wgmma: which (row, col) each thread's accumulator / A register holds\n"
    "  tmap        cuTensorMapEncodeTiled parameters: accepted, or the rule broken\n"
    "  layout      CuTe layout \"shape:stride\": size, modes, offsets\n"
    "  decode      stage D's layout of a decode step: packed rows, keys seen, CTAs, splits, SMEM, bytes\n"
    "  ring        stage F's K/V ring: SMEM per slot, barriers and counts, TMEM map, each tile's parities\n"
    "exit: 0 explained / valid, 2 bad input or a rejected value (stderr names the flag or rule)\n";

typedef struct {
    const char *name;
    int (*run)(int argc, char **argv);
} command;

static const command COMMANDS[] = {
    {"idesc", cmd_idesc}, {"smem-desc", cmd_smem}, {"tmem", cmd_tmem},
    {"wgmma-frag", cmd_wgmma}, {"tmap", cmd_tmap}, {"layout", cmd_layout}, {"decode", cmd_decode},
    {"ring", cmd_ring},
};

int main(int argc, char **argv)
{
    if (argc < 2) {
        fputs(USAGE, stderr);
        return 2;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        fputs(USAGE, stdout);
        return 0;
    }
    for (size_t i = 0; i < sizeof COMMANDS / sizeof COMMANDS[0]; i++)
        if (!strcmp(argv[1], COMMANDS[i].name)) {
            static char prefix[64];
            snprintf(prefix, sizeof prefix, "explain %s", COMMANDS[i].name);
            g_cmd = prefix;
            int rc = COMMANDS[i].run(argc, argv);
            /* A write error (e.g. a closed pipe) must not pass for a successful explanation. */
            if (fflush(stdout) != 0 && rc == 0) return 1;
            return rc;
        }
    fprintf(stderr, "explain: unknown command '%s' (one of idesc, smem-desc, tmem, wgmma-frag, tmap, layout, decode; "
            "see explain --help)\n", argv[1]);
    return 2;
}
