/* Stage F program: build/bin/stage_F. Everything but the stage itself is the shared runner. */
#include "host/runner.h"

extern const stage_def stage_F;

int main(int argc, char **argv) { return stage_main(&stage_F, argc, argv); }
