/* Command-line parsing and the generic validation rules of the stage contract (README, "The stage program contract").
 * Flags take "--flag value" or "--flag=value". Every rejection names the flag and the rule. */
#ifndef FMHA_CLI_H
#define FMHA_CLI_H

#include <stddef.h>

#include "host/options.h"

/* Parse argv into *o (which holds the stage's defaults on entry). accepts: OPT_* bits of the
 * optional flags this stage takes. Returns 0, or 2 with a message in err. */
int cli_parse(int argc, char **argv, unsigned accepts, fmha_opts *o, char *err, size_t len);

/* Rules that hold for every stage (sizes positive, Hq a multiple of Hkv, ...). 0 or 2. */
int cli_validate_common(const fmha_opts *o, char *err, size_t len);

/* The host model runs about 10^8 multiply-adds per second: a stage refuses --backend emu problems
 * above its limit (0, or 2 with the message). macs: the stage's multiply-adds for these options. */
int cli_check_emu_budget(const fmha_opts *o, double macs, double limit, char *err, size_t len);

/* The grid a GPU launch would use: x up to 2^31 - 1 blocks, y and z up to 65535 (CUDA's limits on
 * every GPU this project targets). what_x/y/z say which flags each dimension comes from, so the
 * message names them: 0, or 2 with the message. Checked for every backend (emu models the grid). */
int cli_check_grid(double x, double y, double z, const char *what_x, const char *what_y, const char *what_z, char *err,
                   size_t len);

void cli_usage(const char *prog, const char *title, unsigned accepts, const fmha_opts *defaults);

/* "b=1 hq=16 hkv=16 sq=128 skv=128 d=64 causal=0": the shape part of the result line. */
void cli_shape_string(const fmha_opts *o, unsigned accepts, char *buf, size_t len);

#endif
