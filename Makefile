# Thin wrapper over CMake.  Targets:
#   make build          install missing Debian packages, configure and build in build/ (Release)
#   make check          build, then run the test suite with CTest
#   make demo           build, then train the Fashion-MNIST MLP demo
#   make install        build, then install into $(PREFIX) (default /usr/local)
#   make update-outputs regenerate expected test outputs (TESTS=<ctest regex> to restrict)
#   make sanitize       build everything with -fsanitize=address,undefined in build-sanitize/ and run
#                       the suite there (suppressions and options: config/sanitize/; SAN_TESTS=<regex>,
#                       SAN_MAX_RANKS=2: only the tests on 1 and 2 ranks, as CI does; SAN_EXCLUDE=<regex>
#                       in the environment: leave out the matching test cases)
#   make check-cores    build, then run the whole suite with OpenBLAS's own kernels and under each of CORES (default
#                       SkylakeX Sandybridge Haswell: OPENBLAS_CORETYPE), as machines of those CPU types would
#                       (config/check-cores.sh; about 4x make check's test time, not in CI)
#   make valgrind       memcheck on the serial tests of build/ (config/valgrind/run.sh; VG_TESTS=<regex>)
#   make fuzz           build the libFuzzer targets with clang in build-fuzz/ and run each for
#                       FUZZ_SECONDS (default 10) from its seed corpus (tests/fuzz/README.md)
#   make fuzz-build     only build them
#   make bundle         build, then write $(BUNDLE_DIR)/petnn-<version>-linux-x86_64.tar.xz: PetNN with
#                       the runtime closure of its Debian libraries, Open MPI's launcher and plugins,
#                       for nodes without these packages (config/bundle/make-bundle.sh)
#   make bundle-test    make bundle, then unpack it into a scratch directory and check it with a
#                       scrubbed environment: ldd, demos on 1 and 2 ranks, tests, the system's
#                       libraries hidden (config/bundle/test-bundle.sh; about 6 minutes, not in CI)
#   make clean          remove build/, build-sanitize/, build-fuzz/, $(BUNDLE_DIR)/
# Variables: CORES, PETSC_DIR, PETSC_ARCH, SLEPC_DIR, BUNDLE_DIR, BUILD_DIR, BUILD_TYPE, PREFIX, JOBS, CTEST_JOBS, CTEST_ARGS, CMAKE_ARGS, TESTS,
#            SAN_DIR, SAN_TESTS, SAN_MAX_RANKS, SAN_CTEST_ARGS, VG_TESTS, FUZZ_DIR, FUZZ_SECONDS, FUZZ_TARGETS

# A PETSc of one's own (config/petsc-from-source.sh prints these): make check PETSC_DIR=... PETSC_ARCH=...
# [SLEPC_DIR=...] builds in build-$(PETSC_ARCH)/ against it, found through its pkg-config files; without
# SLEPC_DIR, SLEPc is off (Debian's is built on Debian's PETSc and cannot be mixed with another)
ifneq ($(and $(PETSC_DIR),$(PETSC_ARCH)),)
BUILD_DIR  ?= build-$(PETSC_ARCH)
SAN_DIR    ?= build-sanitize-$(PETSC_ARCH)
FUZZ_DIR   ?= build-fuzz-$(PETSC_ARCH)
export PETSC_DIR PETSC_ARCH
export PKG_CONFIG_PATH := $(PETSC_DIR)/$(PETSC_ARCH)/lib/pkgconfig$(if $(SLEPC_DIR),:$(SLEPC_DIR)/$(PETSC_ARCH)/lib/pkgconfig)$(if $(PKG_CONFIG_PATH),:$(PKG_CONFIG_PATH))
PETSC_CMAKE_ARGS := -DPETNN_WITH_SLEPC=$(if $(SLEPC_DIR),ON,OFF) -U__pkg_config_checked_SLEPC
endif
BUILD_DIR  ?= build
BUILD_TYPE ?= Release
PREFIX     ?= /usr/local
JOBS       ?= $(shell nproc 2>/dev/null || echo 2)
CTEST_JOBS ?= 2
CTEST_ARGS ?=
CMAKE_ARGS ?=
TESTS      ?= .
CMAKE      ?= cmake
CTEST      ?= ctest

SAN_DIR        ?= build-sanitize
SAN_FLAGS      ?= -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
SAN_TESTS      ?= .
SAN_MAX_RANKS  ?=
SAN_CTEST_ARGS ?=
VG_TESTS       ?= .
FUZZ_DIR       ?= build-fuzz
FUZZ_SECONDS   ?= 10
FUZZ_TARGETS   ?= idx binary hdf5 checkpoint options onnx
BUNDLE_DIR     ?= dist

.PHONY: all deps configure build check check-cores demo install update-outputs clean sanitize valgrind fuzz fuzz-build \
        bundle bundle-test

all: build

deps:
	bash config/install-deps.sh

configure: deps
	$(CMAKE) -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) $(PETSC_CMAKE_ARGS) $(CMAKE_ARGS)

build: configure
	$(CMAKE) --build $(BUILD_DIR) -j $(JOBS)

check: build
	$(CTEST) --test-dir $(BUILD_DIR) --output-on-failure -j $(CTEST_JOBS) $(CTEST_ARGS)

CORES ?= SkylakeX Sandybridge Haswell
check-cores: build
	CTEST="$(CTEST)" CTEST_JOBS=$(CTEST_JOBS) CTEST_ARGS="$(CTEST_ARGS)" bash config/check-cores.sh $(BUILD_DIR) $(CORES)

demo: build
	$(BUILD_DIR)/examples/nnrun -options_file examples/fashion_mlp.opts

install: build
	$(CMAKE) --install $(BUILD_DIR) --prefix $(PREFIX)

update-outputs: build
	PETNN_TEST_UPDATE=1 $(CTEST) --test-dir $(BUILD_DIR) --output-on-failure -R '$(TESTS)' $(CTEST_ARGS)

# the library, examples and tests with AddressSanitizer + UndefinedBehaviorSanitizer; the runner
# reads config/sanitize/env.sh when PETNN_SANITIZE=1. The CUDA device is built against PetNN's host
# emulation of CUDA (SAN_CUDA_EMULATION=ON, src/sys/cuda/emulation/), so its code runs under the
# sanitizers without a GPU; SAN_CUDA=ON SAN_CUDA_EMULATION=OFF builds real CUDA instead. The sanitizers slow
# the tests about 20 times, so a test case may take SAN_TIMEOUT seconds there (300 elsewhere). petnn4py is left out
# (an instrumented module cannot load into an uninstrumented python3)
SAN_CUDA           ?= OFF
SAN_CUDA_EMULATION ?= ON
SAN_TIMEOUT        ?= 900
sanitize: deps
	$(CMAKE) -S . -B $(SAN_DIR) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_FLAGS="$(SAN_FLAGS)" -DCMAKE_CXX_FLAGS="$(SAN_FLAGS)" \
	  -DCMAKE_EXE_LINKER_FLAGS="$(SAN_FLAGS)" -DCMAKE_SHARED_LINKER_FLAGS="$(SAN_FLAGS)" -DPETNN_WITH_CUDA=$(SAN_CUDA) \
	  -DPETNN_CUDA_EMULATION=$(SAN_CUDA_EMULATION) -DPETNN_TEST_TIMEOUT=$(SAN_TIMEOUT) -DPETNN_WITH_PYTHON=OFF $(PETSC_CMAKE_ARGS) $(CMAKE_ARGS)
	$(CMAKE) --build $(SAN_DIR) -j $(JOBS)
	CTEST="$(CTEST)" CTEST_JOBS=$(CTEST_JOBS) bash config/sanitize/run-tests.sh $(SAN_DIR) '$(SAN_MAX_RANKS)' '$(SAN_TESTS)' $(SAN_CTEST_ARGS)

valgrind: build
	bash config/valgrind/run.sh $(BUILD_DIR) '$(VG_TESTS)'

fuzz-build: deps
	CC=clang $(CMAKE) -S tests/fuzz -B $(FUZZ_DIR) $(CMAKE_ARGS)
	$(CMAKE) --build $(FUZZ_DIR) -j $(JOBS)

fuzz: fuzz-build
	bash tests/fuzz/run.sh $(FUZZ_DIR) $(FUZZ_SECONDS) $(FUZZ_TARGETS)

# a relocatable tarball for nodes without the Debian packages (tutorials/00-build-and-test.md, config/bundle/)
bundle: build
	bash config/bundle/make-bundle.sh $(BUILD_DIR) $(BUNDLE_DIR)

bundle-test: bundle
	bash config/bundle/test-bundle.sh $(BUNDLE_DIR)

clean:
	rm -rf $(BUILD_DIR) $(SAN_DIR) $(FUZZ_DIR) $(BUNDLE_DIR)
