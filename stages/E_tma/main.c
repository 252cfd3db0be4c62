/* Stage E program: build/bin/stage_E. Everything but the stage itself is the shared runner. */
#include "host/runner.h"

extern const stage_def stage_E;

int main(int argc, char **argv) { return stage_main(&stage_E, argc, argv); }
