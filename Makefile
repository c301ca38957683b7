# Thin wrapper over CMake.  Targets:
#   make build          install missing Debian packages, configure and build in build/ (Release)
#   make check          build, then run the test suite with CTest
#   make demo           build, then train the Fashion-MNIST MLP demo
#   make install        build, then install into $(PREFIX) (default /usr/local)
#   make update-outputs regenerate expected test outputs (TESTS=<ctest regex> to restrict)
#   make clean          remove build/
# Variables: BUILD_DIR, BUILD_TYPE, PREFIX, JOBS, CTEST_JOBS, CTEST_ARGS, CMAKE_ARGS, TESTS

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

.PHONY: all deps configure build check demo install update-outputs clean

all: build

deps:
	bash config/install-deps.sh

configure: deps
	$(CMAKE) -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) $(CMAKE_ARGS)

build: configure
	$(CMAKE) --build $(BUILD_DIR) -j $(JOBS)

check: build
	$(CTEST) --test-dir $(BUILD_DIR) --output-on-failure -j $(CTEST_JOBS) $(CTEST_ARGS)

demo: build
	$(BUILD_DIR)/examples/nnrun -options_file examples/fashion_mlp.opts

install: build
	$(CMAKE) --install $(BUILD_DIR) --prefix $(PREFIX)

update-outputs: build
	PETNN_TEST_UPDATE=1 $(CTEST) --test-dir $(BUILD_DIR) --output-on-failure -R '$(TESTS)' $(CTEST_ARGS)

clean:
	rm -rf $(BUILD_DIR)
