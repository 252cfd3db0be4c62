/* Stage B program: build/bin/stage_B. Everything but the stage itself is the shared runner. */
#include "host/runner.h"

extern const stage_def stage_B;

int main(int argc, char **argv) { return stage_main(&stage_B, argc, argv); }
