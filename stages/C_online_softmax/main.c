/* Stage C program: build/bin/stage_C. Everything but the stage itself is the shared runner. */
#include "host/runner.h"

extern const stage_def stage_C;

int main(int argc, char **argv) { return stage_main(&stage_C, argc, argv); }
