# The two commands of the README, and the steps they are made of.
#   make run    set up, build, and run the main job on the bundled model
#   make test   set up, build, and run every test suite

BUILD_DIR ?= build
JOBS ?= $(shell nproc)
LLVM_DIR ?= /usr/lib/llvm-22
PYTHON ?= /usr/bin/python3
# Warnings are errors in CI; developers may turn that off.
WERROR ?= ON

.PHONY: run test deps configure build docs check-lit check-python clean \
	fuzz test-sanitize

run: build
	./scripts/run-example.sh $(BUILD_DIR)

test: build
	$(MAKE) --no-print-directory check-lit check-python

deps:
	./scripts/install-deps.sh

$(BUILD_DIR)/build.ninja: CMakeLists.txt | deps
	cmake -G Ninja -S . -B $(BUILD_DIR) \
	  -DCMAKE_BUILD_TYPE=Release \
	  -DCMAKE_CXX_COMPILER=g++ -DCMAKE_C_COMPILER=gcc \
	  -DMLIR_DIR=$(LLVM_DIR)/lib/cmake/mlir \
	  -DLLVM_EXTERNAL_LIT=$(LLVM_DIR)/bin/lit \
	  -DDPC_WERROR=$(WERROR)

configure: $(BUILD_DIR)/build.ninja

build: deps configure
	ninja -C $(BUILD_DIR) -j$(JOBS)

# Regenerates the committed dialect and pass references.
docs: configure
	ninja -C $(BUILD_DIR) mlir-doc
	cp $(BUILD_DIR)/docs/Dialect/DpcDialect.md docs/dialect/DpcDialect.md
	cp $(BUILD_DIR)/docs/DpcPasses.md docs/dialect/DpcPasses.md
	cp $(BUILD_DIR)/docs/DpcTestPasses.md docs/dialect/DpcTestPasses.md

check-lit: build
	ninja -C $(BUILD_DIR) check-dpc

# The 20 slowest tests are listed: the suite must stay under 30 minutes on
# two cores (28 in CI on 2026-12-06).
check-python: build
	DPC_BUILD_DIR=$(abspath $(BUILD_DIR)) PYTHONPATH=$(CURDIR)/python \
	  $(PYTHON) -m pytest -q --durations=20 test/python

# libFuzzer on every reader of user files, FUZZ_SECONDS in all
# (docs/fuzzing.md); fails if any input crashes, hangs or runs out of memory.
FUZZ_SECONDS ?= 1800
fuzz:
	./scripts/fuzz.sh $(FUZZ_SECONDS)

# The whole test suite on a build with AddressSanitizer and
# UndefinedBehaviorSanitizer (clang); any report fails the test it is in.
SANITIZE_BUILD_DIR ?= build-sanitize
# fuzz/SanitizerOptions.cpp says why user poisoning is off.
SANITIZE_ENV = ASAN_OPTIONS=detect_leaks=0:allow_user_poisoning=0
test-sanitize:
	./scripts/install-deps.sh sanitizers
	test -f $(SANITIZE_BUILD_DIR)/build.ninja || cmake -G Ninja -S . \
	  -B $(SANITIZE_BUILD_DIR) -DCMAKE_BUILD_TYPE=Release \
	  -DCMAKE_CXX_COMPILER=clang++-22 -DCMAKE_C_COMPILER=clang-22 \
	  -DMLIR_DIR=$(LLVM_DIR)/lib/cmake/mlir \
	  -DLLVM_EXTERNAL_LIT=$(LLVM_DIR)/bin/lit -DDPC_SANITIZE=ON
	ninja -C $(SANITIZE_BUILD_DIR) -j$(JOBS)
	$(SANITIZE_ENV) ninja -C $(SANITIZE_BUILD_DIR) check-dpc
	$(SANITIZE_ENV) DPC_BUILD_DIR=$(abspath $(SANITIZE_BUILD_DIR)) \
	  PYTHONPATH=$(CURDIR)/python $(PYTHON) -m pytest -q test/python

clean:
	rm -rf $(BUILD_DIR)
