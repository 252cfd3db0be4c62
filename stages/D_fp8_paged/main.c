/* Stage D program: build/bin/stage_D. Everything but the stage itself is the shared runner. */
#include "host/runner.h"

extern const stage_def stage_D;

int main(int argc, char **argv) { return stage_main(&stage_D, argc, argv); }
