## FMHA staged codebase: the one entry point. `make help` prints every line that starts with "##".
##
## Targets
##   make              build: common library, stage libraries, every stage, tools, and the tests when
##                     Criterion is installed (else one line says so); installs nothing
##   make run          every stage at its default shape on the best backend here + milestone table
##   make run STAGE=A ARGS="--sq 256 --backend emu"
##   make test         installs what the tests need when missing (scripts/deps.sh all: Criterion,
##                     python3-matplotlib, cuobjdump; with CRITERION_HOME only checks the bundle),
##                     builds, runs every Criterion suite (GPU suites skip without a GPU), then make
##                     sass's check (the full suite only; says so and passes without cuobjdump);
##                     non-zero on failure
##   make deps         install the Debian packages the project needs, only when missing, and
##                     fetch cuobjdump into .tools/ where the CUDA toolkit has none
##   make deps-test    Criterion only, only when missing (or check the CRITERION_HOME bundle)
##   make stages | tools | tests | libs   one part of the build (tests need Criterion)
##   make footgun FG=NN  build the tests, run footgun test NN (tests/footguns/test_fgNN_*) --verbose
##   make footguns     every footgun test: FG, slug, pass/fail/skip, its FGnn/broken/fixed lines
##   make sass         SASS of each stage with the instructions that must be there, and the
##                     kernels' stack frames (spills) within their budgets (needs
##                     cuobjdump: PATH, $(CUDA_HOME)/bin, or .tools/ from make deps; exit 77 without)
##   make sanitize     compute-sanitizer memcheck, racecheck, synccheck over the GPU stage programs
##   make gpu-test     what the GPU machine runs: make test with a bundled Criterion (its SASS
##                     check included, a part of the suite too) (exit 77 without a GPU)
##   make criterion-bundle  copy Criterion into .criterion-rt/ for the GPU machine
##   make bench        (GPU) stages + cuBLAS/cuDNN baselines -> plots/data/<gpu>-<date>.csv
##   make targets      the issue speed targets judged on a bench CSV (CSV=path; default: the H200's
##                     newest full run, the one make plots draws), each row with its rule and met or not
##   make plots        figures in plots/ and the README perf table from the plots/data CSVs
##                     (installs python3-matplotlib when missing)
##   make build/obj/<source>.o   one object, e.g. build/obj/stages/C_online_softmax/fmha_sm90.cu.o
##   make help         this text
##   make clean        remove build/
##
## Variables (make VAR=value, or the environment)
##   STAGE=X           make run: only stage X (a letter: A, B, C, ...)
##   ARGS="..."        make run: arguments passed to every stage program
##   TEST_FILTER=glob  make test / footgun(s): passed as --filter to each Criterion binary,
##                     (suite/test), e.g. TEST_FILTER='footgun/*' or 'stage_c_emu/*'
##   JOBS=N            parallel build jobs and CPU test jobs (default: nproc)
##   CRITERION_HOME=dir  a Criterion bundle (include/, lib/) instead of the system one; with it
##                     make test installs nothing
##   CUDA_HOME=dir     CUDA toolkit (default: where nvcc on PATH lives, else /usr/local/cuda)
##   FG=NN             make footgun: the footgun number (7, 07 or fg07)
##   SASS_DIR=dir      make sass: re-check listings saved earlier (stage_<X>.<arch>.sass and .res), no cuobjdump
##   TEST_SASS=0|1     make test: end with make sass's check (default 1 on the full suite, 0 when
##                     TEST_FILTER or TEST_GROUPS is set; make gpu-test: 1)
##   GPU_TEST_SANITIZE=seconds  make gpu-test: also run make sanitize under this time limit
##   GPU_TABLE_JOBS=N  make test / gpu-test: gpu/test_stage_tables runs N tests at a time (default 1;
##                     they time nothing, their fp64 references are CPU-bound: 6 on the H200)
##   BENCH_SHAPES=full|quick    make bench: shape set (quick: D = 128, fewer S)
##   BENCH_ITERS=20 BENCH_WARMUP=3  make bench: timed samples (>= 20) and warm-up launches
##   BENCH_BUDGET_S=530         make bench: past this many seconds the remaining rows are skipped
##   BENCH_TIMEOUT_S=150        make bench: one program running longer is killed (failed row)
##   BENCH_MAX_S_GB=40          make bench: skip rows whose materialized S or P exceeds this
##   BENCH_PYTHON=python3       make bench: the python with PyTorch for the SDPA baselines
##   BENCH_CSV=path             make bench: write the CSV there instead of plots/data/
##   BENCH_DRY_RUN=1            make bench: list what would run; needs no GPU, writes nothing
##
## Stage kernels (sources under stages/) fail to build on ptxas C7515 (wgmma serialized):
## scripts/nvcc_guard.sh deletes the object and names the file.

# Source-to-target rules:
#   *.c          -> gcc -std=c11, -Wall -Wextra -Werror
#   *_sm90.cu    -> sm_90a only (wgmma does not exist on sm_100a)
#   *_sm100.cu   -> sm_100a only (tcgen05 does not exist on sm_90a)
#   other *.cu   -> both targets
# Every object lands under build/obj/<source path>.o with a .d file next to it.

SHELL        := /bin/bash
.DEFAULT_GOAL := all
.DELETE_ON_ERROR:

NVCC_PATH    := $(shell command -v nvcc 2>/dev/null)
CUDA_HOME    ?= $(if $(NVCC_PATH),$(patsubst %/bin/nvcc,%,$(NVCC_PATH)),/usr/local/cuda)
NVCC         := $(CUDA_HOME)/bin/nvcc
CC           := gcc
BUILD        := build
JOBS         ?= $(shell nproc 2>/dev/null || echo 2)

# Where Criterion is not installed system-wide (the GPU machine), point CRITERION_HOME at a bundle
# made by scripts/criterion_bundle.sh: it holds include/ and lib/. The rpath is written as DT_RPATH
# (--disable-new-dtags) because DT_RUNPATH would not cover libcriterion's own dependencies.
CRITERION_HOME ?=
comma := ,
CRIT_CPPFLAGS := $(if $(CRITERION_HOME),-I$(CRITERION_HOME)/include)
CRIT_LDFLAGS  := $(if $(CRITERION_HOME),-L$(CRITERION_HOME)/lib -Wl$(comma)--disable-new-dtags$(comma)-rpath$(comma)$(abspath $(CRITERION_HOME))/lib)

CPPFLAGS     := -I. -Icommon -I$(CUDA_HOME)/include
CFLAGS       := -std=c11 -O2 -g -Wall -Wextra -Werror -MMD -MP -D_DEFAULT_SOURCE
GENCODE_SM90  := -gencode arch=compute_90a,code=sm_90a
GENCODE_SM100 := -gencode arch=compute_100a,code=sm_100a
NVCCFLAGS    := -std=c++17 -O3 -lineinfo -Xcompiler -Wall,-Wextra -Xptxas -warn-spills -MMD -MP
LDLIBS       := -L$(CUDA_HOME)/lib64 -lcudart_static -lstdc++ -lm -lpthread -ldl -lrt

# ---------------------------------------------------------------------------------------------
# Sources
COMMON_C   := $(sort $(wildcard common/host/*.c common/model/*.c))
COMMON_CU  := $(sort $(wildcard common/host/*.cu))
STAGE_DIRS := $(sort $(wildcard stages/[A-Z]_*))
STAGE_C    := $(filter-out %/main.c,$(sort $(foreach d,$(STAGE_DIRS),$(wildcard $(d)/*.c))))
STAGE_CU   := $(sort $(foreach d,$(STAGE_DIRS),$(wildcard $(d)/*.cu)))
STAGE_LETTERS := $(foreach d,$(STAGE_DIRS),$(firstword $(subst _, ,$(notdir $(d)))))
STAGE_BINS := $(patsubst %,$(BUILD)/bin/stage_%,$(STAGE_LETTERS))
TOOL_SRCS  := $(sort $(wildcard tools/*.c))
TOOL_BINS  := $(patsubst tools/%.c,$(BUILD)/bin/%,$(TOOL_SRCS))
BENCH_SRCS := $(sort $(wildcard bench/*.c))
BENCH_BINS := $(patsubst bench/%.c,$(BUILD)/bin/bench_%,$(BENCH_SRCS))
TESTKERN_CU := $(sort $(wildcard tests/gpu/kernels/*.cu))
TESTSUP_C  := $(sort $(wildcard tests/support/*.c))
# TEST_GROUPS: the folders of tests/ that make test runs (default all four; the GPU machine splits
# them over two commands when one would run past its time limit, e.g. TEST_GROUPS="gpu footguns").
TEST_GROUPS ?= unit stages footguns gpu
# TEST_SASS: make test ends with make sass's check (scripts/test_sass.sh) on the full suite only,
# not when TEST_FILTER or TEST_GROUPS picks a part of it.
TEST_SASS ?= $(if $(TEST_FILTER),0,$(if $(filter file,$(origin TEST_GROUPS)),1,0))
TEST_SRCS  := $(sort $(foreach g,$(TEST_GROUPS),$(wildcard tests/$(g)/test_*.c)))
TEST_BINS  := $(patsubst tests/%.c,$(BUILD)/tests/%,$(TEST_SRCS))

obj = $(patsubst %,$(BUILD)/obj/%.o,$(1))

# Objects reached only through pattern-rule chains would count as intermediate and be deleted
# after every build; keep them (and only them) as secondary files.
.SECONDARY: $(call obj,$(TEST_SRCS) $(TOOL_SRCS) $(BENCH_SRCS))

LIB_COMMON   := $(BUILD)/lib/libfmha.a
LIB_STAGES   := $(BUILD)/lib/libstages.a
LIB_TESTKERN := $(BUILD)/lib/libtestkernels.a

# ---------------------------------------------------------------------------------------------
# Top-level targets
.PHONY: all build-all libs stages tools tests run test deps deps-test clean sass sanitize \
        criterion-bundle gpu-test help bench plots footgun footguns targets

# Sub-makes run JOBS jobs in parallel, unless make was given -j itself (then its jobserver is
# shared rather than reset with a warning).
PAR = $(if $(filter -j%,$(MAKEFLAGS)),,-j$(JOBS))

# Is criterion/criterion.h reachable (system include path, or CRITERION_HOME)? A shell test, run
# only by the recipes that use it.
HAVE_CRITERION = echo '\#include <criterion/criterion.h>' | $(CC) $(CRIT_CPPFLAGS) -E -x c - >/dev/null 2>&1

# make: build only. Without Criterion, everything but the tests, and one line saying so.
all:
	@if $(HAVE_CRITERION); then \
	  $(MAKE) --no-print-directory $(PAR) build-all; \
	else \
	  $(MAKE) --no-print-directory $(PAR) libs stages tools && \
	  echo "make: Criterion not installed; tests not built (make deps or make test installs it)"; \
	fi

build-all: libs stages tools tests

libs: $(LIB_COMMON) $(LIB_STAGES) $(LIB_TESTKERN)
stages: $(STAGE_BINS)
tools: $(TOOL_BINS) $(BENCH_BINS)
tests: $(TEST_BINS)

help:
	@sed -n 's/^## \{0,1\}//p' $(firstword $(MAKEFILE_LIST))

# make run: every stage at its default shape, then a milestone table; STAGE=X runs one stage.
run:
	@$(MAKE) --no-print-directory $(PAR) $(LIB_COMMON) stages tools
	@scripts/run_stages.sh $(if $(STAGE),--stage $(STAGE)) -- $(ARGS)

# make test: deps (Criterion + matplotlib for the plot self-test; with CRITERION_HOME, the GPU
# machine without apt, only the bundle is checked), build, then every test binary; GPU suites run
# one test at a time.
test:
	@CRITERION_HOME="$(CRITERION_HOME)" scripts/deps.sh $(if $(CRITERION_HOME),bundle,all)
	@$(MAKE) --no-print-directory $(PAR) tests stages tools
	@scripts/run_tests.sh $(TEST_BINS); rc=$$?; \
	  if [ "$(TEST_SASS)" = 1 ]; then CUDA_HOME="$(CUDA_HOME)" scripts/test_sass.sh $(STAGE_BINS) || rc=1; fi; exit $$rc

deps:
	@scripts/deps.sh all

deps-test:
	@CRITERION_HOME="$(CRITERION_HOME)" scripts/deps.sh criterion

criterion-bundle:
	@scripts/criterion_bundle.sh .criterion-rt

# On a machine without Criterion (the GPU machine): `make criterion-bundle` where it is installed,
# carry .criterion-rt/ over, then `make gpu-test` there.
gpu-test:
	@scripts/gpu_machine.sh

# make sass: exit 77 at once where there is no cuobjdump (PATH, then $(CUDA_HOME)/bin).
sass:
	@CUDA_HOME="$(CUDA_HOME)" scripts/sass_check.sh --check-tool
	@$(MAKE) --no-print-directory $(PAR) stages
	@CUDA_HOME="$(CUDA_HOME)" scripts/sass_check.sh $(STAGE_BINS)

# make footgun FG=NN: exit 2 (listing the FG numbers) when FG is missing or names no test.
# Neither installs anything: without Criterion they say so and stop.
NEED_CRITERION = $(HAVE_CRITERION) || { echo "make $@: Criterion not installed (make deps or make test installs it)" >&2; exit 2; }
footgun:
	@scripts/footgun.sh check "$(FG)"
	@$(NEED_CRITERION)
	@$(MAKE) --no-print-directory $(PAR) tests
	@scripts/footgun.sh one "$(FG)"

footguns:
	@$(NEED_CRITERION)
	@$(MAKE) --no-print-directory $(PAR) tests
	@scripts/footgun.sh all

sanitize:
	@$(MAKE) --no-print-directory $(PAR) stages
	@scripts/sanitize.sh

# make bench: exits 77 (make reports "Error 77") where there is no GPU; BENCH_SHAPES=quick for a subset.
bench:
	@CUDA_HOME="$(CUDA_HOME)" BENCH_PRECHECK=1 scripts/bench.sh
	@$(MAKE) --no-print-directory $(PAR) $(LIB_COMMON) stages tools
	@CUDA_HOME="$(CUDA_HOME)" scripts/bench.sh

# make targets: reads a CSV only; python3 standard library, no GPU.
targets:
	@python3 scripts/targets.py $(CSV)

# make plots: with no benchmark CSV yet it says there is nothing to plot and succeeds.
plots:
	@scripts/deps.sh matplotlib
	@scripts/plots.sh

clean:
	rm -rf $(BUILD)

# ---------------------------------------------------------------------------------------------
# Libraries
$(LIB_COMMON): $(call obj,$(COMMON_C) $(COMMON_CU))
	@mkdir -p $(@D)
	@rm -f $@
	ar rcs $@ $^

$(LIB_STAGES): $(call obj,$(STAGE_C) $(STAGE_CU))
	@mkdir -p $(@D)
	@rm -f $@
	ar rcs $@ $^ $(if $^,,$(BUILD)/obj/empty.c.o)

$(LIB_TESTKERN): $(call obj,$(TESTKERN_CU) $(TESTSUP_C))
	@mkdir -p $(@D)
	@rm -f $@
	ar rcs $@ $^ $(if $^,,$(BUILD)/obj/empty.c.o)

# An empty object so an archive with no members is still a valid archive.
$(BUILD)/obj/empty.c.o:
	@mkdir -p $(@D)
	echo 'typedef int fmha_empty_translation_unit;' | $(CC) $(CFLAGS) -x c -c - -o $@

$(LIB_STAGES) $(LIB_TESTKERN): | $(BUILD)/obj/empty.c.o

# ---------------------------------------------------------------------------------------------
# Binaries
define STAGE_BIN_RULE
$(BUILD)/bin/stage_$(firstword $(subst _, ,$(notdir $(1)))): $(call obj,$(1)/main.c) $(LIB_STAGES) $(LIB_COMMON)
	@mkdir -p $$(@D)
	$(CC) $$(filter %.o,$$^) -o $$@ -L$(BUILD)/lib -lstages -lfmha $(LDLIBS)
endef
$(foreach d,$(STAGE_DIRS),$(eval $(call STAGE_BIN_RULE,$(d))))

$(BUILD)/bin/%: $(BUILD)/obj/tools/%.c.o $(LIB_STAGES) $(LIB_COMMON)
	@mkdir -p $(@D)
	$(CC) $< -o $@ -L$(BUILD)/lib -lstages -lfmha $(LDLIBS)

# Benchmark programs also link the CUDA libraries they compare against.
$(BUILD)/bin/bench_%: $(BUILD)/obj/bench/%.c.o $(LIB_COMMON)
	@mkdir -p $(@D)
	$(CC) $< -o $@ -L$(BUILD)/lib -lfmha -L$(CUDA_HOME)/lib64 -lcublas -lcublasLt $(LDLIBS)

$(BUILD)/tests/%: $(BUILD)/obj/tests/%.c.o $(LIB_TESTKERN) $(LIB_STAGES) $(LIB_COMMON)
	@mkdir -p $(@D)
	$(CC) $< -o $@ $(CRIT_LDFLAGS) -L$(BUILD)/lib -ltestkernels -lstages -lfmha -lcriterion $(LDLIBS)

# ---------------------------------------------------------------------------------------------
# Objects
$(BUILD)/obj/tests/%.c.o: tests/%.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -Itests -Itests/support $(CRIT_CPPFLAGS) $(CFLAGS) -c $< -o $@

$(BUILD)/obj/%.c.o: %.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@

# Stage kernels (sources under stages/) compile through scripts/nvcc_guard.sh: nvcc's output is
# shown as usual, and a ptxas C7515 (wgmma serialized) deletes the object and fails the build.
# The same nvcc command line either way; tests/gpu/kernels and common/ compile unguarded. The
# guard script is a prerequisite of the stage objects, so a change to it re-checks them.
NVCC_GUARD = $(if $(filter stages/%,$<),scripts/nvcc_guard.sh $< $@ --)
$(call obj,$(STAGE_CU)): scripts/nvcc_guard.sh

$(BUILD)/obj/%_sm90.cu.o: %_sm90.cu
	@mkdir -p $(@D)
	$(NVCC_GUARD) $(NVCC) $(CPPFLAGS) $(NVCCFLAGS) $(GENCODE_SM90) -MF $(@:.o=.d) -c $< -o $@

$(BUILD)/obj/%_sm100.cu.o: %_sm100.cu
	@mkdir -p $(@D)
	$(NVCC_GUARD) $(NVCC) $(CPPFLAGS) $(NVCCFLAGS) $(GENCODE_SM100) -MF $(@:.o=.d) -c $< -o $@

$(BUILD)/obj/%.cu.o: %.cu
	@mkdir -p $(@D)
	$(NVCC_GUARD) $(NVCC) $(CPPFLAGS) $(NVCCFLAGS) $(GENCODE_SM90) $(GENCODE_SM100) -MF $(@:.o=.d) -c $< -o $@

# Header dependency tracking (gcc -MMD / nvcc -MMD).
-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)
