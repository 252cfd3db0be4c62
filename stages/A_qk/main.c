/* Stage A program: build/bin/stage_A. Everything but the stage itself is the shared runner. */
#include "host/runner.h"

extern const stage_def stage_A;

int main(int argc, char **argv) { return stage_main(&stage_A, argc, argv); }
