# FMHA staged codebase: the one entry point.
#
#   make            build everything (common library, every stage, tools, tests)
#   make run        every stage at its default shape on the best backend here + milestone table
#   make run STAGE=A ARGS="--sq 256 --backend emu"
#   make test       all Criterion suites (GPU suites skip without a GPU); non-zero on any failure
#   make deps       install the Debian packages the project needs, only when missing
#   make sass       SASS of each stage with the instructions that must be there (needs cuobjdump)
#   make sanitize   compute-sanitizer memcheck, racecheck, synccheck over the GPU stage programs
#   make gpu-test   what the GPU machine runs: make test with a bundled Criterion, then sass
#   make bench      (GPU) stages + cuBLAS/cuDNN baselines -> plots/data/<gpu>-<date>.csv; BENCH_SHAPES=quick
#   make plots      figures in plots/ and the README perf table from the plots/data CSVs
#   make clean
#
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
TEST_SRCS  := $(sort $(wildcard tests/unit/test_*.c tests/stages/test_*.c tests/footguns/test_*.c tests/gpu/test_*.c))
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
.PHONY: all build-all stages tools tests run test deps deps-test clean sass sanitize \
        criterion-bundle gpu-test help bench plots

all:
	@$(MAKE) --no-print-directory deps-test
	@$(MAKE) --no-print-directory -j$(JOBS) build-all

build-all: stages tools tests

stages: $(STAGE_BINS)
tools: $(TOOL_BINS) $(BENCH_BINS)
tests: $(TEST_BINS)

help:
	@sed -n '2,15p' Makefile | sed 's/^# \{0,1\}//'

# make run: every stage at its default shape, then a milestone table; STAGE=X runs one stage.
run:
	@$(MAKE) --no-print-directory -j$(JOBS) $(LIB_COMMON) stages tools
	@scripts/run_stages.sh $(if $(STAGE),--stage $(STAGE)) -- $(ARGS)

# make test: deps (Criterion), build, then every test binary; GPU suites run one test at a time.
test:
	@$(MAKE) --no-print-directory deps-test
	@$(MAKE) --no-print-directory -j$(JOBS) tests stages tools
	@scripts/run_tests.sh $(TEST_BINS)

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

sass:
	@$(MAKE) --no-print-directory -j$(JOBS) stages
	@scripts/sass_check.sh $(STAGE_BINS)

sanitize:
	@$(MAKE) --no-print-directory -j$(JOBS) stages
	@scripts/sanitize.sh

# make bench: exits 77 (make reports "Error 77") where there is no GPU; BENCH_SHAPES=quick for a subset.
bench:
	@CUDA_HOME="$(CUDA_HOME)" BENCH_PRECHECK=1 scripts/bench.sh
	@$(MAKE) --no-print-directory -j$(JOBS) $(LIB_COMMON) stages tools
	@CUDA_HOME="$(CUDA_HOME)" scripts/bench.sh

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

$(BUILD)/obj/%_sm90.cu.o: %_sm90.cu
	@mkdir -p $(@D)
	$(NVCC) $(CPPFLAGS) $(NVCCFLAGS) $(GENCODE_SM90) -MF $(@:.o=.d) -c $< -o $@

$(BUILD)/obj/%_sm100.cu.o: %_sm100.cu
	@mkdir -p $(@D)
	$(NVCC) $(CPPFLAGS) $(NVCCFLAGS) $(GENCODE_SM100) -MF $(@:.o=.d) -c $< -o $@

$(BUILD)/obj/%.cu.o: %.cu
	@mkdir -p $(@D)
	$(NVCC) $(CPPFLAGS) $(NVCCFLAGS) $(GENCODE_SM90) $(GENCODE_SM100) -MF $(@:.o=.d) -c $< -o $@

# Header dependency tracking (gcc -MMD / nvcc -MMD).
-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)
