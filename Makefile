# scaleplan: one Makefile for the whole tree.
#
#   make            build bin/scaleplan and its plug-ins (bin/scaleplan-cuda.so
#                   where nvcc is found, bin/scaleplan-mpi.so where mpicc is)
#   make test       install missing Debian packages, build, run every CPU test,
#                   check-mechanisms, the accuracy bars (make validate-bars), the
#                   Python module's tests (make python) and the GPU bundle's
#                   build check, and fuzz-smoke when clang with libFuzzer is there
#   make check      the CPU tests only (unit suites, CLI, golden, build settings,
#                   the CLI robustness suite)
#   make check-mechanisms   each framework option row's test (frameworks/
#                   options.def) passes, and fails with that option switched off
#   make asan       the tests under AddressSanitizer + UndefinedBehaviorSanitizer
#   make valgrind   the unit suites and the golden commands under valgrind (memcheck)
#   make fuzz       a libFuzzer target per input format (clang, ASan + UBSan)
#   make fuzz-smoke each target for FUZZ_SMOKE_S seconds on its seed corpus
#   make fuzz-run FUZZ=NAME [FUZZ_TIME=600]   one target for a long run
#   make bench      speed of the simulator and planner, whole-process start-up
#   make validate   the simulator against published runs (validate-more,
#                   validate-dgxc, validate-mpt, validate-mds, validate-meta,
#                   validate-megascale, validate-nemotron, validate-bigscience,
#                   validate-mcoremoe: the out-of-sample sets), then
#                   validate-bars: every set within its accuracy bar (not in check)
#   make gpu-test   tests that need an NVIDIA GPU
#   make gpu-bundle one folder, gpu-bundle/, to copy to a GPU machine and run
#                   (sh gpu-bundle/run.sh OUT_DIR); built in build-gpu/
#   make demo       install, build and run the main job on built-in defaults
#   make demo-cluster   ten models at once on 512 H100s (scaleplan cluster)
#   make screenshots    the demo's report in headless Chromium, into docs/img/
#   make deps       apt-get install what is missing
#   make install PREFIX=/usr/local     make clean
#
# Overrides: CC, OPT, CUDA_HOME, NCCL_HOME, GPU_ARCH ("80 90 100": machine
# code for each, plus PTX of the last so newer GPUs compile it at load),
# CUDA=0 to build without the GPU code even where nvcc exists, MPI=0 to
# build without MPI, MPICC, BUILD (object directory), BIN. The settings are
# recorded in BUILD/settings/; changing one rebuilds what it affects (a
# build never keeps objects made with other settings).
#
# Which libraries load where: bin/scaleplan links cJSON, GSL, libm and the
# OpenMP runtime only. The CUDA code (cuBLASLt, NCCL, the CUDA runtime
# linked in statically) is the plug-in scaleplan-cuda.so, the MPI calls the
# plug-in scaleplan-mpi.so; the binary opens them only for the commands
# that use them (common/plugin.h), so sim, plan and --help never load them.

# ---------------------------------------------------------------- settings
EMPTY     :=
SPACE     := $(EMPTY) $(EMPTY)
COMMA     := ,
HASH      := \#
PREFIX    ?= /usr/local
CC        ?= cc
BUILD     ?= build
BIN       ?= bin/scaleplan
BIN_DIR   := $(patsubst %/,%,$(dir $(BIN)))

CSTD      := -std=c11
WARN      := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Werror
# Messages and names live in fixed-size records and are cut on purpose when
# too long; gcc's guesses about snprintf truncation are noise here.
WARN      += $(shell echo 'int x;' | $(CC) -Werror -Wno-format-truncation -x c -c - -o /dev/null 2>/dev/null && echo -Wno-format-truncation)
OPT       ?= -O2 -g
DEPFLAGS  := -MMD -MP
CPPFLAGS  += -I. -Iinclude -I$(BUILD)/gen -D_POSIX_C_SOURCE=200809L
CFLAGS    ?=
ALL_CFLAGS = $(CSTD) $(OPT) $(WARN) $(DEPFLAGS) $(OMPFLAGS) $(SANFLAGS) $(CFLAGS) \
             $(if $(OMPFLAGS),,-Wno-unknown-pragmas)
LDFLAGS   ?=

# OpenMP where the compiler has it (gcc always; clang with libomp).
OMPFLAGS  ?= $(shell echo 'int main(void){return 0;}' | $(CC) -x c -fopenmp -include omp.h - \
               -o /dev/null >/dev/null 2>&1 && echo -fopenmp)

# STATIC=1 (the GPU bundle): GSL and the OpenMP runtime linked in, shared
# libraries looked for in ../lib next to the binary first.
STATIC    ?= 0
ifeq ($(STATIC),1)
LDLIBS    := -lcjson -Wl,-Bstatic -lgsl -lgslcblas -Wl,-Bdynamic -lm -lpthread -ldl
LINK_OMP  := $(if $(OMPFLAGS),-Wl$(COMMA)-Bstatic -lgomp -Wl$(COMMA)-Bdynamic)
LINK_PATH := -Wl,-rpath,'$$ORIGIN/../lib'
else
LDLIBS    := -lcjson -lgsl -lgslcblas -lm -lpthread -ldl
LINK_OMP  := $(OMPFLAGS)
LINK_PATH :=
endif
# Executables that open plug-ins export their symbols to them.
EXPORT    := -rdynamic

# MPI (the trainer's and calibrator's multi-process paths): the plug-in
# scaleplan-mpi.so is built when mpicc is found, unless MPI=0; its headers
# are treated as system headers.
MPICC     ?= mpicc
ifneq ($(MPI),0)
MPI_CFLAGS := $(patsubst -I%,-isystem %,$(shell $(MPICC) --showme:compile 2>/dev/null || \
                $(MPICC) -compile-info 2>/dev/null | tr ' ' '\n' | grep '^-I'))
MPI_LIBS   := $(shell $(MPICC) --showme:link 2>/dev/null || \
                $(MPICC) -link-info 2>/dev/null | tr ' ' '\n' | grep -E '^-(L|l|Wl)')
endif
HAVE_MPI  := $(if $(strip $(MPI_LIBS)),1,0)

# CUDA: the plug-in scaleplan-cuda.so is compiled when nvcc is found, unless
# CUDA=0. cuBLASLt and NCCL are linked by their file (the SONAME is what
# the plug-in records), so a toolkit or Python wheels that ship only
# libnccl.so.2 work; NCCL_HOME=.../site-packages/nvidia/nccl for wheels.
CUDA_HOME ?= /usr/local/cuda
NCCL_HOME ?= $(CUDA_HOME)
GPU_ARCH  ?= 80 90 100
GPU_PTX   ?= $(lastword $(GPU_ARCH))
NVCC      := $(wildcard $(CUDA_HOME)/bin/nvcc)
ifeq ($(CUDA),0)
NVCC      :=
endif
HAVE_CUDA := $(if $(NVCC),1,0)
CUBLASLT_SO := $(firstword $(wildcard $(addprefix $(CUDA_HOME)/,lib64/libcublasLt.so \
                 lib/libcublasLt.so lib64/libcublasLt.so.[0-9]* lib/libcublasLt.so.[0-9]*)))
CUDART_STATIC := $(firstword $(wildcard $(CUDA_HOME)/lib64/libcudart_static.a \
                   $(CUDA_HOME)/lib/libcudart_static.a))
NCCL_SO   := $(firstword $(wildcard $(addprefix $(NCCL_HOME)/,lib/libnccl.so lib64/libnccl.so \
                 lib/libnccl.so.[0-9]* lib64/libnccl.so.[0-9]*)))
NVCCFLAGS := -std=c++17 -O2 -g -I. -I$(BUILD)/gen -I$(CUDA_HOME)/include -I$(NCCL_HOME)/include \
             $(foreach a,$(GPU_ARCH),-gencode arch=compute_$(a),code=sm_$(a)) \
             -gencode arch=compute_$(GPU_PTX),code=compute_$(GPU_PTX) \
             -Xcompiler -fPIC,-fvisibility=hidden,-Wall,-Wextra,-Werror -Werror all-warnings
# The plug-in looks for cuBLASLt and NCCL in ../lib next to it, then where
# they were at build time, then wherever LD_LIBRARY_PATH says.
CUDA_RPATH := '$$ORIGIN/../lib' $(sort $(patsubst %/,%,$(dir $(CUBLASLT_SO) $(NCCL_SO))))

# What was built, for the code (build_config.h) and `scaleplan --version`.
define NL


endef
FEATURES  := $(if $(filter 1,$(HAVE_CUDA)),CUDA plug-in (sm_$(subst $(SPACE),/sm_,$(strip \
               $(GPU_ARCH))) + PTX compute_$(GPU_PTX)),no CUDA)$(COMMA) \
             $(if $(filter 1,$(HAVE_MPI)),MPI plug-in,no MPI)$(if $(filter 1,$(STATIC)),$(COMMA) static)

# Debian packages the build, tests, reports and MPI paths need.
DEB_PKGS  := gcc make libgsl-dev libcjson-dev libcunit1-dev gnuplot-nox libopenmpi-dev openmpi-bin \
             libpng-dev clang libclang-rt-dev valgrind python3 python3-pytest python3-setuptools \
             python3-wheel
# The report test renders the HTML page in headless Chromium; large and
# optional: when it cannot be installed the test says so and skips.
BROWSER_PKGS := chromium
SUDO      := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

# ---------------------------------------------------------------- recorded settings
# One file per group of settings in $(BUILD)/settings/, rewritten only when
# its text changes: whatever depends on a file rebuilds exactly when one of
# its settings changed. build_config.h carries the features into the code
# (only the files that include it recompile when they change). The CUDA and
# MPI settings are recorded only when that part is built, so switching it
# off and on again keeps its objects.
SETTINGS  := $(BUILD)/settings
streq      = $(and $(findstring x$(1)x,x$(2)x),$(findstring x$(2)x,x$(1)x))
record     = $(if $(call streq,$(file <$(1)),$(2)),,$(shell mkdir -p $(dir $(1)))$(file >$(1),$(2)))
$(call record,$(SETTINGS)/cc,CC=$(CC) OPT=$(OPT) CFLAGS=$(CFLAGS) CPPFLAGS=$(CPPFLAGS) OMPFLAGS=$(OMPFLAGS) SANFLAGS=$(SANFLAGS))
$(call record,$(SETTINGS)/link,LDFLAGS=$(LDFLAGS) LDLIBS=$(LDLIBS) LINK_OMP=$(LINK_OMP) LINK_PATH=$(LINK_PATH) EXPORT=$(EXPORT))
$(if $(filter 1,$(HAVE_CUDA)),$(call record,$(SETTINGS)/cuda,NVCC=$(NVCC) CUDA_HOME=$(CUDA_HOME) NCCL_HOME=$(NCCL_HOME) GPU_ARCH=$(GPU_ARCH) GPU_PTX=$(GPU_PTX) NVCCFLAGS=$(NVCCFLAGS) CUBLASLT=$(CUBLASLT_SO) NCCL=$(NCCL_SO) RPATH=$(CUDA_RPATH)))
$(if $(filter 1,$(HAVE_MPI)),$(call record,$(SETTINGS)/mpi,MPICC=$(MPICC) MPI_CFLAGS=$(MPI_CFLAGS) MPI_LIBS=$(MPI_LIBS)))
BUILD_CONFIG := $(BUILD)/gen/build_config.h
BUILD_CONFIG_TEXT := /* made by the Makefile from the build settings; do not edit */$(NL)$\
  $(HASH)define SCALEPLAN_HAVE_CUDA $(HAVE_CUDA)$(NL)$(HASH)define SCALEPLAN_HAVE_MPI $(HAVE_MPI)$(NL)$\
  $(HASH)define SCALEPLAN_BUILD_FEATURES "$(strip $(FEATURES))"
$(call record,$(BUILD_CONFIG),$(BUILD_CONFIG_TEXT))

# ---------------------------------------------------------------- sources
LIB_DIRS  := common models topologies profile frameworks calibrate sim run plan validate cluster inputs trainer reports
CU_SRCS   := $(wildcard calibrate/*.cu trainer/*.cu)
MPI_SRCS  := common/dist_mpi.c
LIB_SRCS  := $(filter-out $(MPI_SRCS),$(wildcard $(addsuffix /*.c,$(LIB_DIRS))))
LIB_OBJS  := $(LIB_SRCS:%.c=$(BUILD)/%.o)
CU_OBJS   := $(CU_SRCS:%.cu=$(BUILD)/%.cu.o)
# The commands (their table, flags and documents), the public entry points
# over them (include/scaleplan.h), and the command line, a client of those.
CMD_SRCS  := $(wildcard commands/*.c)
CMD_OBJS  := $(CMD_SRCS:%.c=$(BUILD)/%.o)
API_SRCS  := $(wildcard api/*.c)
API_OBJS  := $(API_SRCS:%.c=$(BUILD)/%.o)
CLI_SRCS  := $(wildcard cli/*.c)
CLI_OBJS  := $(CLI_SRCS:%.c=$(BUILD)/%.o)
# The library (include/scaleplan.h): the same sources compiled position-
# independent, only the sp_ entry points visible, the command line left out.
PIC_SRCS  := $(LIB_SRCS) $(CMD_SRCS) $(API_SRCS)
PIC_OBJS  := $(PIC_SRCS:%.c=$(BUILD)/pic/%.o) $(BUILD)/pic/gen/catalog_data.o
SO_LIB    := $(BIN_DIR)/libscaleplan.so
A_LIB     := $(BIN_DIR)/libscaleplan.a
TEST_SRCS := $(wildcard tests/*.c)
TEST_OBJS := $(TEST_SRCS:%.c=$(BUILD)/%.o)
BENCH_SRCS := $(wildcard bench/*.c)
BENCH_OBJS := $(BENCH_SRCS:%.c=$(BUILD)/%.o)

CUDA_PLUGIN := $(BIN_DIR)/scaleplan-cuda.so
MPI_PLUGIN  := $(BIN_DIR)/scaleplan-mpi.so
PLUGINS     := $(if $(filter 1,$(HAVE_CUDA)),$(CUDA_PLUGIN)) $(if $(filter 1,$(HAVE_MPI)),$(MPI_PLUGIN))
# a plug-in of an earlier build with other settings must not be picked up
STALE_PLUGINS := $(filter-out $(PLUGINS),$(CUDA_PLUGIN) $(MPI_PLUGIN))

# The GPU kernel tests (tests/gpu/kernels_test.c): every launcher against its
# cpu_ops twin; the _small build has a 2-entry GEMM cache and no bias fusion.
KERN_SRCS := $(wildcard trainer/kern_*.cu)
KTEST_BIN := $(BUILD)/tests/gpu/kernels_test
KTEST_SMALL := $(BUILD)/tests/gpu/kernels_test_small
KTEST_C_OBJS := $(BUILD)/tests/gpu/kernels_test.o $(addprefix $(BUILD)/,trainer/cpu_ops.o \
                  trainer/optim.o common/error.o)
GPU_TEST_BINS := $(if $(filter 1,$(HAVE_CUDA)),$(KTEST_BIN) $(KTEST_SMALL))

# Data compiled into the binary (see common/catalog.h).
CATALOG_FILES := $(sort $(wildcard models/catalog/*.json topologies/catalog/*.json \
                   topologies/catalog/clusters/*.json profile/catalog/*.json \
                   sim/catalog/*.json cluster/catalog/*.json))
CATALOG_OBJ := $(BUILD)/gen/catalog_data.o
EMBED       := $(BUILD)/tools/embed

TEST_RUNNER := $(BUILD)/tests/run_tests
ROBUST_BIN  := $(BUILD)/tests/robust/robust
INVARIANTS_BIN := $(BUILD)/tests/robust/invariants
INVARIANTS_N   ?= 1000
# processor seconds a case may take; sanitized builds run 2-4x slower
INVARIANTS_LIMIT_S ?= 10
BENCH_BIN   := $(BUILD)/bench/run_bench

# Fuzzing: every tests/fuzz/fuzz_NAME.c is a libFuzzer target, built with
# clang under ASan + UBSan (float-cast-overflow too) into FUZZ_BUILD, and
# seeded from FUZZ_SEEDS_NAME. A new input format is its target file and
# one seed line here (docs/ARCHITECTURE.md, "Where new things go").
FUZZ_CC      ?= clang
FUZZ_BUILD   := build-fuzz
FUZZ_NAMES   := $(patsubst tests/fuzz/fuzz_%.c,%,$(wildcard tests/fuzz/fuzz_*.c))
FUZZ_SAN     := -fsanitize=address,undefined,float-cast-overflow -fno-sanitize-recover=all \
                -fno-omit-frame-pointer
FUZZ_SMOKE_S ?= 4
FUZZ_TIME    ?= 600
FUZZ_SEEDS_model           := models/catalog/*.json tests/fixtures/configs/*.json \
                              tests/fixtures/configs/*/*.json tests/fixtures/hf/*/config.json \
                              tests/fixtures/real/configs/*/config.json
FUZZ_SEEDS_hybrid          := tests/fuzz/seeds/hybrid/* tests/fixtures/real/configs/*/config.json
FUZZ_SEEDS_cluster         := topologies/catalog/clusters/*.json
FUZZ_SEEDS_jobs            := tests/fixtures/cluster/*.csv tests/fuzz/seeds/jobs/*
FUZZ_SEEDS_profile         := profile/catalog/*.json
FUZZ_SEEDS_ds_config       := tests/fixtures/configs/ds_*.json tests/fixtures/deepspeed/*.json
FUZZ_SEEDS_nccltests       := tests/fixtures/calibrate/*.log tests/fixtures/calibrate/*perf.json \
                              tests/fixtures/real/nccltests/*.log
FUZZ_SEEDS_measurements    := tests/fixtures/calibrate/*.measurements.json
FUZZ_SEEDS_validation_csv  := tests/fixtures/validation/*.csv tests/fuzz/seeds/validation_csv/*.csv
FUZZ_SEEDS_measured        := tests/fixtures/validate/*.json
FUZZ_SEEDS_report          := tests/fuzz/seeds/report/*.json
FUZZ_SEEDS_tokens          := tests/fuzz/seeds/tokens/* tests/fixtures/validation/README.md
FUZZ_SEEDS_checkpoint      := tests/fuzz/seeds/checkpoint/*
FUZZ_SEEDS_units           := tests/fuzz/seeds/units/*
FUZZ_SEEDS_megatron_args   := tests/fixtures/megatron/*.txt tests/fixtures/logs/gen/*.txt \
                              tests/fixtures/real/launch/*.sh
FUZZ_SEEDS_api             := tests/fuzz/seeds/api/*
FUZZ_SEEDS_shell           := tests/fuzz/seeds/shell/* tests/fixtures/megatron/*.txt \
                              tests/fixtures/real/launch/*.sh
FUZZ_SEEDS_toml            := tests/fixtures/torchtitan/*.toml
FUZZ_SEEDS_bridge          := tests/fixtures/launch/*.bridge.txt tests/fixtures/real/launch/*.bridge.txt \
                              tests/fixtures/real/launch/mb_*.sh
FUZZ_SEEDS_torchtitan      := tests/fixtures/torchtitan/*.toml
FUZZ_SEEDS_accelerate      := tests/fixtures/real/accelerate/*.yaml
FUZZ_SEEDS_pyregistry      := tests/fixtures/real/torchtitan/*.py
FUZZ_SEEDS_trainlog        := tests/fixtures/logs/*.log tests/fixtures/logs/*.csv \
                              tests/fixtures/logs/*.jsonl tests/fixtures/logs/ladder/*.log \
                              tests/fixtures/real/logs/*.log
# clang that can link libFuzzer (the check runs where it is used)
HAVE_FUZZ = $(shell echo 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { (void)d; \
              (void)n; return 0; }' | $(FUZZ_CC) -x c -fsanitize=fuzzer - -o /dev/null \
              >/dev/null 2>&1 && echo 1)

Q := @
ifeq ($(V),1)
Q :=
endif

# ---------------------------------------------------------------- targets
.PHONY: all lib python test check check-layers check-mechanisms check-bundle golden-update asan bench gpu-test \
        gpu-bundle demo demo-cluster screenshots deps deps-browser install clean validate validate-bars valgrind fuzz \
        fuzz-build fuzz-smoke fuzz-smoke-if-clang fuzz-run

all: $(BIN) $(PLUGINS)

$(BIN): $(LIB_OBJS) $(CMD_OBJS) $(API_OBJS) $(CLI_OBJS) $(CATALOG_OBJ) $(SETTINGS)/link
	@mkdir -p $(dir $@)
	@echo "  LD      $@"
	$(Q)rm -f $(STALE_PLUGINS)
	$(Q)$(CC) $(OPT) $(SANFLAGS) $(LDFLAGS) $(EXPORT) -o $@ $(filter %.o,$^) $(LINK_OMP) \
	    $(LINK_PATH) $(LDLIBS)

$(BUILD)/%.o: %.c $(SETTINGS)/cc
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	$(Q)$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -c $< -o $@

# The CUDA plug-in: every .cu file, the CUDA runtime linked in, cuBLASLt and
# NCCL by SONAME; only the entry tables are visible (-fvisibility=hidden).
$(BUILD)/%.cu.o: %.cu $(SETTINGS)/cuda
	@mkdir -p $(dir $@)
	@echo "  NVCC    $<"
	$(Q)$(NVCC) $(NVCCFLAGS) -MMD -MP -c $< -o $@

$(CUDA_PLUGIN): $(CU_OBJS) $(SETTINGS)/cuda
	@mkdir -p $(dir $@)
	@if [ -z "$(CUBLASLT_SO)" ] || [ -z "$(NCCL_SO)" ]; then \
	    echo "scaleplan-cuda.so: libcublasLt.so* not found under $(CUDA_HOME) or libnccl.so* under $(NCCL_HOME); set CUDA_HOME / NCCL_HOME, or CUDA=0" >&2; exit 1; fi
	@echo "  LD      $@"
	$(Q)$(NVCC) -shared -cudart static -o $@ $(filter %.o,$^) $(CUBLASLT_SO) $(NCCL_SO) \
	    $(foreach d,$(CUDA_RPATH),-Xlinker -rpath=$(d))

# The MPI plug-in: dist_mpi.c, the one file compiled against mpi.h.
$(BUILD)/mpi/dist_mpi.o: common/dist_mpi.c $(SETTINGS)/cc $(SETTINGS)/mpi
	@mkdir -p $(dir $@)
	@echo "  CC      $< (MPI plug-in)"
	$(Q)$(CC) $(CPPFLAGS) $(MPI_CFLAGS) $(ALL_CFLAGS) -fPIC -fvisibility=hidden -c $< -o $@

$(MPI_PLUGIN): $(BUILD)/mpi/dist_mpi.o $(SETTINGS)/mpi $(SETTINGS)/link
	@mkdir -p $(dir $@)
	@echo "  LD      $@"
	$(Q)$(CC) -shared $(SANFLAGS) $(LDFLAGS) -o $@ $(filter %.o,$^) $(MPI_LIBS)

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

$(CATALOG_OBJ): $(BUILD)/gen/catalog_data.c $(SETTINGS)/cc
	$(Q)$(CC) $(CPPFLAGS) $(CSTD) -O0 -c $< -o $@

$(BUILD)/pic/%.o: %.c $(SETTINGS)/cc
	@mkdir -p $(dir $@)
	@echo "  CC      $< (library)"
	$(Q)$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -fPIC -fvisibility=hidden -c $< -o $@

$(BUILD)/pic/gen/catalog_data.o: $(BUILD)/gen/catalog_data.c $(SETTINGS)/cc
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(CPPFLAGS) $(CSTD) -O0 -fPIC -fvisibility=hidden -c $< -o $@

$(SO_LIB): $(PIC_OBJS) $(SETTINGS)/link
	@mkdir -p $(dir $@)
	@echo "  LD      $@"
	$(Q)$(CC) -shared $(OPT) $(SANFLAGS) $(LDFLAGS) -Wl,-soname,libscaleplan.so -o $@ \
	    $(filter %.o,$^) $(LINK_OMP) $(LDLIBS)

$(A_LIB): $(PIC_OBJS)
	@mkdir -p $(dir $@)
	@echo "  AR      $@"
	$(Q)rm -f $@ && ar rcs $@ $(filter %.o,$^)

lib: $(SO_LIB) $(A_LIB)

# The Python module over the library (python/scaleplan, ctypes, standard
# library only) and its tests (Debian's python3-pytest); then `import
# scaleplan` works from anywhere for this user: a scaleplan.pth in the
# user's site-packages names python/, and the library is copied into the
# package (where an installed copy keeps it). pip install --no-build-isolation . installs a copy instead.
PYTHON ?= /usr/bin/python3
python: $(SO_LIB) $(BIN)
	$(Q)SCALEPLAN_LIB=$(abspath $(SO_LIB)) SCALEPLAN_BIN=$(abspath $(BIN)) PYTHONPATH=python \
	    $(PYTHON) -m pytest -q python/tests
	$(Q)cp $(SO_LIB) python/scaleplan/libscaleplan.so
	$(Q)site=$$($(PYTHON) -m site --user-site) && mkdir -p "$$site" && \
	    echo "$(abspath python)" > "$$site/scaleplan.pth" && \
	    echo "python: import scaleplan now finds $(abspath python) ($$site/scaleplan.pth)"

$(TEST_RUNNER): $(TEST_OBJS) $(LIB_OBJS) $(CATALOG_OBJ) $(SETTINGS)/link
	@mkdir -p $(dir $@)
	@echo "  LD      $@"
	$(Q)$(CC) $(OPT) $(SANFLAGS) $(LDFLAGS) $(EXPORT) -o $@ $(filter %.o,$^) -lcunit -lpng \
	    $(LINK_OMP) $(LDLIBS)

# The CLI robustness suite (tests/robust/robust.c): a program of its own
# that runs the real binary, so it links nothing of the library.
$(ROBUST_BIN): $(BUILD)/tests/robust/robust.o
	@mkdir -p $(dir $@)
	@echo "  LD      $@"
	$(Q)$(CC) $(OPT) $(SANFLAGS) $(LDFLAGS) -o $@ $^

# The semantic invariant suite (tests/robust/invariants.c): random
# reliability/plan/budget runs of the real binary, their JSON checked.
$(INVARIANTS_BIN): $(BUILD)/tests/robust/invariants.o
	@mkdir -p $(dir $@)
	@echo "  LD      $@"
	$(Q)$(CC) $(OPT) $(SANFLAGS) $(LDFLAGS) -o $@ $^ -lcjson -lm

$(BENCH_BIN): $(BENCH_OBJS) $(LIB_OBJS) $(CMD_OBJS) $(API_OBJS) $(CATALOG_OBJ) $(SETTINGS)/link
	@mkdir -p $(dir $@)
	@echo "  LD      $@"
	$(Q)$(CC) $(OPT) $(LDFLAGS) $(EXPORT) -o $@ $(filter %.o,$^) $(LINK_OMP) $(LDLIBS)

# GPU kernel tests: C, linked to the kernels' objects, cpu_ops and the CUDA
# runtime; they compile everywhere nvcc does and run only on a GPU.
$(BUILD)/tests/gpu/%.o: tests/gpu/%.c $(SETTINGS)/cc $(SETTINGS)/cuda
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	$(Q)$(CC) $(CPPFLAGS) -isystem $(CUDA_HOME)/include $(ALL_CFLAGS) -c $< -o $@

$(BUILD)/tests/gpu/cuda_gemm_small.cu.o: trainer/cuda_gemm.cu $(SETTINGS)/cuda
	@mkdir -p $(dir $@)
	@echo "  NVCC    $< (2-entry cache, bias never fused)"
	$(Q)$(NVCC) $(NVCCFLAGS) -DGEMM_CACHE_ENTRIES=2 -DGEMM_BIAS_FUSE=0 -MMD -MP -c $< -o $@

KTEST_LINK = $(Q)$(CC) $(OPT) $(LDFLAGS) -o $@ $(filter %.o,$^) $(LINK_OMP) $(CUBLASLT_SO) \
	    $(CUDART_STATIC) -lstdc++ -lm -lpthread -lrt -ldl \
	    $(foreach d,$(CUDA_RPATH),-Wl,-rpath,$(d))

$(KTEST_BIN): $(KTEST_C_OBJS) $(KERN_SRCS:%.cu=$(BUILD)/%.cu.o) $(BUILD)/trainer/cuda_gemm.cu.o
	@echo "  LD      $@"
	$(KTEST_LINK)

$(KTEST_SMALL): $(KTEST_C_OBJS) $(KERN_SRCS:%.cu=$(BUILD)/%.cu.o) \
                $(BUILD)/tests/gpu/cuda_gemm_small.cu.o
	@echo "  LD      $@"
	$(KTEST_LINK)

# The simulator against every published run (tests/fixtures/validation),
# then every set held to its accuracy bar (median and 90th percentile
# |error|, in %; kept out of make check): exit 1 when one is over.
VALIDATE_BARS := throughput.csv:--dense:--max-median=5:--max-p90=12:--max-group-median=8 \
                 more/runs.csv:--dense:--max-median=7:--max-p90=17 \
                 dgxc/runs.csv:--max-median=11:--max-p90=15 \
                 mds/runs.csv:--max-median=20:--max-p90=50 \
                 megascale/runs.csv:--max-median=5 mcoremoe/runs.csv:--max-median=13 \
                 nemotron/runs.csv:--max-median=12 bigscience/runs.csv:--max-median=16 \
                 mpt/runs.csv:--max-median=5:--max-p90=13.5
validate: $(BIN)
	$(Q)$(BIN) validate --published tests/fixtures/validation/throughput.csv --by-group $(VALIDATE_ARGS)
	$(Q)$(MAKE) --no-print-directory validate-bars

validate-bars: $(BIN)
	$(Q)bad=0; for b in $(VALIDATE_BARS); do \
	    set -- $$(echo $$b | tr ':' ' '); f=$$1; shift; \
	    if $(BIN) validate --published tests/fixtures/validation/$$f --by-group "$$@" \
	       >/dev/null 2>$(BUILD)/validate-bars.err; then echo "  validate: $$f within $$*"; \
	    else echo "  validate: $$f OVER: $$(tail -1 $(BUILD)/validate-bars.err)"; bad=1; fi; \
	done; exit $$bad

# The out-of-sample sets, each tests/fixtures/validation/SET/runs.csv with
# its sources in SOURCES.md beside it, gathered after the constants were set:
#   more        120 runs: NeMo/Megatron-Bridge tables, Megatron-LM examples, torchtitan
#   dgxc        102 DGX Cloud benchmarking runs of Llama 3.1 on H100, bf16/fp8 pairs
#   mpt         211 MosaicML MPT runs (llm-foundry FSDP1 on A100 40/80GB and H100)
#   mds         Megatron-DeepSpeed runs of 2022 (BLOOM, MT-NLG, DeepSpeed on Azure)
#   meta        Meta's Llama 3 405B pre-training (Table 4 of the Llama 3 paper)
#   megascale   Megatron-LM's 175B runs on 256-12,288 A100s (MegaScale's baseline)
#   nemotron    80 DGX Cloud runs of Nemotron-4 15B/340B
#   bigscience  184 BigScience runs and tuning experiments (2021-2022)
VALIDATION_SETS := more dgxc mpt mds meta megascale nemotron bigscience mcoremoe
.PHONY: $(addprefix validate-,$(VALIDATION_SETS))

$(addprefix validate-,$(VALIDATION_SETS)): validate-%: $(BIN)
	$(Q)$(BIN) validate --published tests/fixtures/validation/$*/runs.csv --by-group $(VALIDATE_ARGS)

# `make test` is what README and .ci/run call: install what is missing, then
# build and run the CPU tests and check the GPU bundle builds self-contained.
test: deps deps-browser
	$(Q)$(MAKE) --no-print-directory check
	$(Q)$(MAKE) --no-print-directory check-mechanisms
	$(Q)$(MAKE) --no-print-directory validate-bars
	$(Q)$(MAKE) --no-print-directory python
	$(Q)$(MAKE) --no-print-directory check-bundle
	$(Q)$(MAKE) --no-print-directory fuzz-smoke-if-clang

check: $(BIN) $(PLUGINS) $(TEST_RUNNER) $(GPU_TEST_BINS) $(ROBUST_BIN) $(INVARIANTS_BIN) check-layers
	$(Q)SCALEPLAN_BIN=$(abspath $(BIN)) SCALEPLAN_PROGRESS=0 $(TEST_RUNNER)
	$(Q)sh tests/golden/run.sh $(abspath $(BIN))
	$(Q)sh tests/build/settings.sh "$(MAKE)" $(BUILD) $(BIN)
	$(Q)$(ROBUST_BIN) $(abspath $(BIN))
	$(Q)INVARIANTS_LIMIT_S=$(INVARIANTS_LIMIT_S) $(INVARIANTS_BIN) $(abspath $(BIN)) $(INVARIANTS_N)

# The folders' include graph is a one-way DAG (docs/ARCHITECTURE.md), and no
# function or file is over issue 34's size limits but those allowlisted.
check-layers:
	$(Q)sh tools/check-layers.sh
	$(Q)sh tools/check-size.sh
	$(Q)sh tools/check-circles.sh

# Every option row of frameworks/options.def pinned: its named unit test
# passes, and fails with SCALEPLAN_OPTION_OFF=KEY (the option switched off).
check-mechanisms: $(BIN) $(TEST_RUNNER)
	$(Q)SCALEPLAN_BIN=$(abspath $(BIN)) sh tools/check-mechanisms.sh $(TEST_RUNNER)

# Rewrite the recorded outputs after a deliberate change of the model.
golden-update: $(BIN)
	$(Q)sh tests/golden/run.sh $(abspath $(BIN)) --update

# The same tests with AddressSanitizer and UndefinedBehaviorSanitizer, in a
# separate build directory, without the CUDA runtime (which cannot run here
# and does not coexist with ASan's shadow memory).
asan: deps deps-browser
	$(Q)$(MAKE) --no-print-directory check BUILD=build-asan CUDA=0 BIN=build-asan/bin/scaleplan \
	    INVARIANTS_LIMIT_S=40 \
	    OPT="-O1 -g" SANFLAGS="-fsanitize=address,undefined,float-cast-overflow -fno-omit-frame-pointer \
	    -fno-sanitize-recover=all"

# The unit suites in one process under memcheck (the commands they start run
# natively), then each golden command under memcheck. Clean means no error
# and no definite leak; tests/valgrind.supp holds the only suppressions
# (third-party noise, each explained). OpenMP runs one thread: valgrind
# serialises threads anyway, and libgomp's pool is not ours to check.
VALGRIND := valgrind --quiet --error-exitcode=1 --leak-check=full --errors-for-leak-kinds=definite \
            --show-leak-kinds=definite --suppressions=tests/valgrind.supp
valgrind: $(BIN) $(PLUGINS) $(TEST_RUNNER)
	$(Q)command -v valgrind >/dev/null 2>&1 || { echo "valgrind: not installed (make deps)" >&2; exit 1; }
	$(Q)SCALEPLAN_BIN=$(abspath $(BIN)) SCALEPLAN_PROGRESS=0 OMP_NUM_THREADS=1 \
	    $(VALGRIND) $(TEST_RUNNER) $(VALGRIND_SUITES)
	$(Q)OMP_NUM_THREADS=1 GOLDEN_WRAP="$(VALGRIND)" sh tests/golden/run.sh $(abspath $(BIN))

bench: $(BENCH_BIN) $(BIN) $(PLUGINS) $(SO_LIB)
	$(Q)SCALEPLAN_BIN=$(abspath $(BIN)) $(BENCH_BIN)
	$(Q)SCALEPLAN_LIB=$(abspath $(SO_LIB)) PYTHONPATH=python $(PYTHON) python/bench.py

gpu-test: $(BIN) $(PLUGINS) $(GPU_TEST_BINS)
	$(Q)if [ "$(HAVE_CUDA)" != 1 ]; then echo "gpu-test: nvcc not found under $(CUDA_HOME); set CUDA_HOME" >&2; exit 1; fi
	$(Q)SCALEPLAN_BIN=$(abspath $(BIN)) KERNELS_TEST=$(abspath $(KTEST_BIN)) \
	    KERNELS_TEST_SMALL=$(abspath $(KTEST_SMALL)) sh tests/gpu/run.sh

# The GPU bundle: its own build folder, no MPI, GSL and OpenMP static, the
# CUDA runtime static in the plug-in, machine code for sm_80/sm_90/sm_100
# with compute_100 PTX; then gpu-bundle/ assembled by tests/gpu/bundle/make.sh.
BUNDLE_BUILD := build-gpu
BUNDLE_DIR   := gpu-bundle
gpu-bundle:
	$(Q)if [ "$(HAVE_CUDA)" != 1 ]; then echo "gpu-bundle: nvcc not found under $(CUDA_HOME); set CUDA_HOME" >&2; exit 1; fi
	$(Q)$(MAKE) --no-print-directory BUILD=$(BUNDLE_BUILD) BIN=$(BUNDLE_BUILD)/bin/scaleplan \
	    MPI=0 STATIC=1 GPU_ARCH="80 90 100" all $(BUNDLE_BUILD)/tests/gpu/kernels_test \
	    $(BUNDLE_BUILD)/tests/gpu/kernels_test_small
	$(Q)sh tests/gpu/bundle/make.sh $(BUNDLE_BUILD) $(BUNDLE_DIR)

# The bundle builds and is self-contained (ldd), and its entry script stops
# with one line on a machine without a GPU: part of make test.
check-bundle:
	$(Q)if [ "$(HAVE_CUDA)" != 1 ]; then echo "check-bundle: skipped, nvcc not found under $(CUDA_HOME) (the bundle needs it)"; exit 0; fi; \
	$(MAKE) --no-print-directory gpu-bundle && sh tests/build/bundle.sh $(BUNDLE_DIR)

demo: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)echo "== scaleplan $(DEMO_ARGS) --report demo-report"
	$(Q)$(BIN) $(DEMO_ARGS) --report demo-report

# Screenshots of the demo's report for the README, into docs/img/ (issue 42):
# the summary page at 1400 px in the light and the dark colour scheme, and
# the top of the page at 800 px. Needs Chromium (make deps-browser); says so
# and skips without it.
DEMO_ARGS := plan --model llama3-70b --tokens 2T --gpu h100-sxm --min-gpus 8 --max-gpus 4096
SHOT_FLAGS := --headless --no-sandbox --disable-gpu --no-first-run --disable-background-networking \
              --disable-component-update --disable-sync --hide-scrollbars --virtual-time-budget=10000
screenshots: $(BIN)
	$(Q)b=$$(command -v chromium || command -v chromium-browser || command -v google-chrome); \
	if [ -z "$$b" ]; then echo "screenshots: skipped, Chromium not found (make deps-browser)"; exit 0; fi; \
	SCALEPLAN_PROGRESS=0 $(BIN) $(DEMO_ARGS) --report demo-report >/dev/null && mkdir -p docs/img && \
	prof=$$(mktemp -d) && page=file://$(CURDIR)/demo-report/index.html && \
	"$$b" $(SHOT_FLAGS) --user-data-dir=$$prof --window-size=1400,1150 \
	    --screenshot=docs/img/report-summary.png $$page >/dev/null 2>&1 && \
	"$$b" $(SHOT_FLAGS) --user-data-dir=$$prof --window-size=1400,1150 --force-dark-mode \
	    --blink-settings=preferredColorScheme=0 --screenshot=docs/img/report-summary-dark.png \
	    $$page >/dev/null 2>&1 && \
	"$$b" $(SHOT_FLAGS) --user-data-dir=$$prof --window-size=800,1400 \
	    --screenshot=docs/img/report-800px.png $$page >/dev/null 2>&1; \
	rc=$$?; rm -rf $$prof; [ $$rc = 0 ] && echo "screenshots: docs/img/report-summary.png, report-summary-dark.png, report-800px.png"; exit $$rc

# The seed scenario of issue 39: ten training jobs (each a model and its
# tokens, priced by the step simulator) on one pool of 512 H100s, under
# priority classes, with what the pool costs.
# Then the same jobs sized by --policy planner from their simulated scaling
# curves (each job's min_gpus..max_gpus), with what 64 more GPUs or a 30%
# spot share would change.
DEMO_CLUSTER_ARGS := cluster --trace tests/fixtures/cluster/portfolio_10_models.csv --gpus 512 \
                     --gpus-per-node 8 --gpu h100-sxm --policy priority --price 2.49 --per-job \
                     --start 2027-01-04
DEMO_CLUSTER_PLAN_ARGS := cluster --trace tests/fixtures/cluster/portfolio_10_models.csv \
                     --gpus 512 --gpus-per-node 8 --gpu h100-sxm --policy planner --price 2.49 \
                     --per-job --start 2027-01-04 --what-if gpus=+64,spot=0.3
demo-cluster: $(BIN)
	$(Q)echo "== scaleplan $(DEMO_CLUSTER_ARGS)"
	$(Q)$(BIN) $(DEMO_CLUSTER_ARGS)
	$(Q)echo "== scaleplan $(DEMO_CLUSTER_PLAN_ARGS)"
	$(Q)$(BIN) $(DEMO_CLUSTER_PLAN_ARGS)

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

# ---------------------------------------------------------------- fuzzing
fuzz:
	$(Q)if [ "$(HAVE_FUZZ)" != 1 ]; then \
	    echo "fuzz: $(FUZZ_CC) cannot link libFuzzer; make deps installs clang and libclang-rt-dev" >&2; \
	    exit 1; fi
	$(Q)$(MAKE) --no-print-directory fuzz-build BUILD=$(FUZZ_BUILD) CC=$(FUZZ_CC) CUDA=0 MPI=0 \
	    OMPFLAGS= OPT="-O1 -g" SANFLAGS="-fsanitize=fuzzer-no-link $(FUZZ_SAN)"

# (with BUILD=$(FUZZ_BUILD), from `make fuzz`; its objects are kept)
.PRECIOUS: $(BUILD)/tests/fuzz/%.o
fuzz-build: $(FUZZ_NAMES:%=$(FUZZ_BUILD)/fuzz/%)

$(FUZZ_BUILD)/fuzz/%: $(BUILD)/tests/fuzz/fuzz_%.o $(BUILD)/tests/fuzz/harness.o $(LIB_OBJS) \
                      $(CATALOG_OBJ) $(SETTINGS)/link
	@mkdir -p $(dir $@)
	@echo "  LD      $@"
	$(Q)$(CC) $(OPT) -fsanitize=fuzzer $(FUZZ_SAN) $(LDFLAGS) -o $@ $(filter %.o,$^) $(LINK_OMP) \
	    $(LDLIBS)

# The library's spec reader runs the commands themselves: it links the
# command line's objects and the library's entry points too.
$(FUZZ_BUILD)/fuzz/api: $(BUILD)/tests/fuzz/fuzz_api.o $(BUILD)/tests/fuzz/harness.o $(LIB_OBJS) \
                        $(CMD_OBJS) $(API_OBJS) \
                        $(CATALOG_OBJ) $(SETTINGS)/link
	@mkdir -p $(dir $@)
	@echo "  LD      $@"
	$(Q)$(CC) $(OPT) -fsanitize=fuzzer $(FUZZ_SAN) $(LDFLAGS) -o $@ $(filter %.o,$^) $(LINK_OMP) \
	    $(LDLIBS)

fuzz-smoke: fuzz
	$(Q)$(MAKE) --no-print-directory $(FUZZ_NAMES:%=fuzz-smoke-%)

fuzz-smoke-%:
	$(Q)sh tests/fuzz/run.sh $* $(FUZZ_SMOKE_S) $(wildcard $(FUZZ_SEEDS_$*))

# part of `make test`: skipped, saying so, where clang cannot link libFuzzer
fuzz-smoke-if-clang:
	$(Q)if [ "$(HAVE_FUZZ)" = 1 ]; then $(MAKE) --no-print-directory fuzz-smoke; \
	else echo "test: fuzz-smoke skipped: $(FUZZ_CC) cannot link libFuzzer (make deps installs it)"; fi

fuzz-run: fuzz
	$(Q)if [ -z "$(FUZZ)" ]; then echo "fuzz-run: say which: FUZZ=NAME ($(FUZZ_NAMES))" >&2; exit 2; fi
	$(Q)sh tests/fuzz/run.sh $(FUZZ) $(FUZZ_TIME) $(wildcard $(FUZZ_SEEDS_$(FUZZ)))

# The plug-ins go to PREFIX/lib/scaleplan, where the binary looks for them.
install: $(BIN) $(PLUGINS)
	install -d $(DESTDIR)$(PREFIX)/bin
	install -m 755 $(BIN) $(DESTDIR)$(PREFIX)/bin/scaleplan
	install -d $(DESTDIR)$(PREFIX)/lib/scaleplan
	$(if $(strip $(PLUGINS)),install -m 755 $(PLUGINS) $(DESTDIR)$(PREFIX)/lib/scaleplan/)

clean:
	rm -rf build build-asan build-gpu $(FUZZ_BUILD) bin demo-report gpu-bundle

FORCE:

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
