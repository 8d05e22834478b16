# scaleplan: one Makefile for the whole tree.
#
#   make            build bin/scaleplan
#   make test       install missing Debian packages, build, run every CPU test
#   make asan       the tests under AddressSanitizer + UndefinedBehaviorSanitizer
#   make bench      speed benchmarks of the simulator and planner
#   make gpu-test   tests that need an NVIDIA GPU
#   make demo       install, build and run the main job on built-in defaults
#   make deps       apt-get install what is missing
#   make install PREFIX=/usr/local     make clean
#
# Overrides: CC, CUDA_HOME, NCCL_HOME, GPU_ARCH ("80 90"), CUDA=0 to build
# without the GPU code even where nvcc exists, MPI=0 to build without MPI,
# MPICC, BUILD (object directory).

# ---------------------------------------------------------------- settings
PREFIX    ?= /usr/local
CC        ?= cc
BUILD     ?= build
BIN       := bin/scaleplan

CSTD      := -std=c11
WARN      := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Werror
# Messages and names live in fixed-size records and are cut on purpose when
# too long; gcc's guesses about snprintf truncation are noise here.
WARN      += $(shell echo 'int x;' | $(CC) -Werror -Wno-format-truncation -x c -c - -o /dev/null 2>/dev/null && echo -Wno-format-truncation)
OPT       ?= -O2 -g
DEPFLAGS  := -MMD -MP
CPPFLAGS  += -I. -D_POSIX_C_SOURCE=200809L
CFLAGS    ?=
ALL_CFLAGS = $(CSTD) $(OPT) $(WARN) $(DEPFLAGS) $(OMPFLAGS) $(SANFLAGS) $(CFLAGS) \
             $(if $(OMPFLAGS),,-Wno-unknown-pragmas)
LDLIBS    := -lcjson -lgsl -lgslcblas -lm -lpthread
LDFLAGS   ?=

# OpenMP where the compiler has it (gcc always; clang with libomp).
OMPFLAGS  ?= $(shell echo 'int main(void){return 0;}' | $(CC) -x c -fopenmp -include omp.h - \
               -o /dev/null >/dev/null 2>&1 && echo -fopenmp)

# MPI (the trainer's and calibrator's multi-process paths): used when mpicc
# is found, unless MPI=0; its headers are treated as system headers.
MPICC     ?= mpicc
ifneq ($(MPI),0)
MPI_CFLAGS := $(patsubst -I%,-isystem %,$(shell $(MPICC) --showme:compile 2>/dev/null || \
                $(MPICC) -compile-info 2>/dev/null | tr ' ' '\n' | grep '^-I'))
MPI_LIBS   := $(shell $(MPICC) --showme:link 2>/dev/null || \
                $(MPICC) -link-info 2>/dev/null | tr ' ' '\n' | grep -E '^-(L|l|Wl)')
endif
ifneq ($(strip $(MPI_LIBS)),)
HAVE_MPI  := 1
CPPFLAGS  += -DSCALEPLAN_HAVE_MPI $(MPI_CFLAGS)
LDLIBS    += $(MPI_LIBS)
else
HAVE_MPI  := 0
endif

# CUDA: compiled when nvcc is found, unless CUDA=0.
CUDA_HOME ?= /usr/local/cuda
NCCL_HOME ?= $(CUDA_HOME)
GPU_ARCH  ?= 80 90
NVCC      := $(wildcard $(CUDA_HOME)/bin/nvcc)
ifeq ($(CUDA),0)
NVCC      :=
endif
ifneq ($(NVCC),)
HAVE_CUDA := 1
NVCCFLAGS := -std=c++17 -O2 -g -I. -I$(CUDA_HOME)/include -I$(NCCL_HOME)/include \
             $(if $(filter 1,$(HAVE_MPI)),-DSCALEPLAN_HAVE_MPI $(MPI_CFLAGS)) \
             $(foreach a,$(GPU_ARCH),-gencode arch=compute_$(a),code=sm_$(a)) \
             -Xcompiler -Wall,-Wextra,-Werror -Werror all-warnings
CUDA_LIBS := -L$(CUDA_HOME)/lib64 -L$(NCCL_HOME)/lib -L$(NCCL_HOME)/lib64 \
             -Wl,-rpath,$(CUDA_HOME)/lib64 -Wl,-rpath,$(NCCL_HOME)/lib \
             -lcublasLt -lcublas -lnccl -lcudart -lstdc++
else
HAVE_CUDA := 0
endif

# Debian packages the build, tests, reports and MPI paths need.
DEB_PKGS  := gcc make libgsl-dev libcjson-dev libcunit1-dev gnuplot-nox libopenmpi-dev openmpi-bin \
             libpng-dev
# The report test renders the HTML page in headless Chromium; large and
# optional: when it cannot be installed the test says so and skips.
BROWSER_PKGS := chromium
SUDO      := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

# ---------------------------------------------------------------- sources
LIB_DIRS  := common models topologies profile calibrate sim trainer reports
CU_SRCS   := $(wildcard calibrate/*.cu trainer/*.cu)
# A module with GPU code has x.cu and x_nocuda.c; exactly one is built.
NOCUDA_SRCS := $(wildcard $(addsuffix /*_nocuda.c,$(LIB_DIRS)))
LIB_SRCS  := $(filter-out $(NOCUDA_SRCS),$(wildcard $(addsuffix /*.c,$(LIB_DIRS))))
# (a _nocuda.c without its .cu twin is built either way)
NOCUDA_ONLY := $(filter-out $(CU_SRCS:%.cu=%_nocuda.c),$(NOCUDA_SRCS))
ifeq ($(HAVE_CUDA),1)
LIB_OBJS  := $(LIB_SRCS:%.c=$(BUILD)/%.o) $(CU_SRCS:%.cu=$(BUILD)/%.cu.o) \
             $(NOCUDA_ONLY:%.c=$(BUILD)/%.o)
LINK_LIBS := $(LDLIBS) $(CUDA_LIBS)
else
LIB_OBJS  := $(LIB_SRCS:%.c=$(BUILD)/%.o) $(NOCUDA_SRCS:%.c=$(BUILD)/%.o)
LINK_LIBS := $(LDLIBS)
endif
CLI_SRCS  := $(wildcard cli/*.c)
CLI_OBJS  := $(CLI_SRCS:%.c=$(BUILD)/%.o)
TEST_SRCS := $(wildcard tests/*.c)
TEST_OBJS := $(TEST_SRCS:%.c=$(BUILD)/%.o)
BENCH_SRCS := $(wildcard bench/*.c)
BENCH_OBJS := $(BENCH_SRCS:%.c=$(BUILD)/%.o)
GPU_TEST_SRCS := $(wildcard tests/gpu/*.c)

# Data compiled into the binary (see common/catalog.h).
CATALOG_FILES := $(sort $(wildcard models/catalog/*.json topologies/catalog/*.json \
                   topologies/catalog/clusters/*.json profile/catalog/*.json \
                   sim/catalog/*.json))
CATALOG_OBJ := $(BUILD)/gen/catalog_data.o
EMBED       := $(BUILD)/tools/embed

TEST_RUNNER := $(BUILD)/tests/run_tests
BENCH_BIN   := $(BUILD)/bench/run_bench

Q := @
ifeq ($(V),1)
Q :=
endif

# ---------------------------------------------------------------- targets
.PHONY: all test check check-layers golden-update asan bench gpu-test demo deps deps-browser install clean validate

all: $(BIN)

$(BIN): $(LIB_OBJS) $(CLI_OBJS) $(CATALOG_OBJ)
	@mkdir -p $(dir $@)
	@echo "  LD      $@"
	$(Q)$(CC) $(OPT) $(OMPFLAGS) $(SANFLAGS) $(LDFLAGS) -o $@ $^ $(LINK_LIBS)

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	$(Q)$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -c $< -o $@

$(BUILD)/%.cu.o: %.cu
	@mkdir -p $(dir $@)
	@echo "  NVCC    $<"
	$(Q)$(NVCC) $(NVCCFLAGS) -MMD -MP -c $< -o $@

$(EMBED): tools/embed.c
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(CSTD) -O1 $(WARN) -o $@ $<

# The catalog is regenerated whenever a data file is added, removed or edited.
$(BUILD)/gen/catalog_data.c: $(EMBED) $(CATALOG_FILES) $(BUILD)/gen/catalog.list
	@echo "  EMBED   $(words $(CATALOG_FILES)) catalog files"
	$(Q)$(EMBED) $@ $(CATALOG_FILES)

$(BUILD)/gen/catalog.list: FORCE
	@mkdir -p $(dir $@)
	@echo "$(CATALOG_FILES)" | cmp -s - $@ || echo "$(CATALOG_FILES)" > $@

$(CATALOG_OBJ): $(BUILD)/gen/catalog_data.c
	$(Q)$(CC) $(CPPFLAGS) $(CSTD) -O0 -c $< -o $@

$(TEST_RUNNER): $(TEST_OBJS) $(LIB_OBJS) $(CATALOG_OBJ)
	@mkdir -p $(dir $@)
	@echo "  LD      $@"
	$(Q)$(CC) $(OPT) $(OMPFLAGS) $(SANFLAGS) $(LDFLAGS) -o $@ $^ -lcunit -lpng $(LINK_LIBS)

$(BENCH_BIN): $(BENCH_OBJS) $(LIB_OBJS) $(CATALOG_OBJ)
	@mkdir -p $(dir $@)
	@echo "  LD      $@"
	$(Q)$(CC) $(OPT) $(OMPFLAGS) $(LDFLAGS) -o $@ $^ $(LINK_LIBS)

# The simulator against every published run (tests/fixtures/validation).
validate: $(BIN)
	$(Q)$(BIN) validate --published tests/fixtures/validation/throughput.csv --by-group $(VALIDATE_ARGS)

# `make test` is what README and .ci/run call: install what is missing, then
# build and run the CPU tests (unit suites and end-to-end CLI tests).
test: deps deps-browser
	$(Q)$(MAKE) --no-print-directory check

check: $(BIN) $(TEST_RUNNER) check-layers
	$(Q)SCALEPLAN_BIN=$(abspath $(BIN)) SCALEPLAN_PROGRESS=0 $(TEST_RUNNER)
	$(Q)sh tests/golden/run.sh $(abspath $(BIN))

# The folders' include graph is a one-way DAG (docs/ARCHITECTURE.md).
check-layers:
	$(Q)sh tools/check-layers.sh

# Rewrite the recorded outputs after a deliberate change of the model.
golden-update: $(BIN)
	$(Q)sh tests/golden/run.sh $(abspath $(BIN)) --update

# The same tests with AddressSanitizer and UndefinedBehaviorSanitizer, in a
# separate build directory, without the CUDA runtime (which cannot run here
# and does not coexist with ASan's shadow memory).
asan: deps deps-browser
	$(Q)$(MAKE) --no-print-directory check BUILD=build-asan CUDA=0 BIN=build-asan/bin/scaleplan \
	    OPT="-O1 -g" SANFLAGS="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all"

bench: $(BENCH_BIN) $(BIN)
	$(Q)SCALEPLAN_BIN=$(abspath $(BIN)) $(BENCH_BIN)

gpu-test: $(BIN)
	$(Q)if [ "$(HAVE_CUDA)" != 1 ]; then echo "gpu-test: nvcc not found under $(CUDA_HOME); set CUDA_HOME" >&2; exit 1; fi
	$(Q)SCALEPLAN_BIN=$(abspath $(BIN)) sh tests/gpu/run.sh

demo: deps
	$(Q)$(MAKE) --no-print-directory $(BIN)
	$(Q)echo "== scaleplan plan --model llama3-70b --tokens 2T --gpu h100-sxm --min-gpus 8 --max-gpus 4096 --report demo-report"
	$(Q)$(BIN) plan --model llama3-70b --tokens 2T --gpu h100-sxm --min-gpus 8 --max-gpus 4096 --report demo-report

deps:
	$(Q)if ! command -v dpkg >/dev/null 2>&1; then \
	    echo "deps: not a Debian system; install: $(DEB_PKGS)"; exit 0; fi; \
	missing=""; for p in $(DEB_PKGS); do \
	    dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	    echo "deps: installing$$missing"; \
	    $(SUDO) apt-get update -q && \
	    DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -q --no-install-recommends $$missing; \
	fi

# After deps: two apt-get runs at once would fight over the package lock.
deps-browser: deps
	$(Q)if command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1; then exit 0; fi; \
	if ! command -v apt-get >/dev/null 2>&1; then \
	    echo "deps-browser: no apt-get; install Chromium to run the report's browser test"; exit 0; fi; \
	echo "deps-browser: installing $(BROWSER_PKGS) for the report's headless-browser test"; \
	( $(SUDO) apt-get update -q && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -q \
	    --no-install-recommends $(BROWSER_PKGS) ) >/dev/null 2>&1 || \
	    echo "deps-browser: could not install $(BROWSER_PKGS); the browser test will be skipped"

install: $(BIN)
	install -d $(DESTDIR)$(PREFIX)/bin
	install -m 755 $(BIN) $(DESTDIR)$(PREFIX)/bin/scaleplan

clean:
	rm -rf build build-asan bin demo-report

FORCE:

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
