# Thin wrapper over meson for the README's commands.
BUILD     ?= build
ASAN      ?= build-asan
RELEASE   ?= build-release
CLANG     ?= build-clang
FUZZ      ?= build-fuzz
PYTHON    ?= /usr/bin/python3
FUZZ_SECONDS ?= 60
SONDE     := $(BUILD)/src/cli/sonde

.PHONY: all deps build-deps build demo check unit integration vm browser screenshot asan release clang fuzz bench agents lint format tidy clean

all: build

# Every package: build, tests, benchmarks (scripts/install-deps --all).
deps:
	./scripts/install-deps --all

# What building needs, no more (make demo).
build-deps:
	./scripts/install-deps --build

# WERROR=true (make check) turns warnings into errors; a plain build keeps
# meson's default (off), so a newer compiler's new warning never stops a user.
WERROR    ?=

$(BUILD)/build.ninja:
	meson setup $(BUILD) $(if $(WERROR),-Dwerror=$(WERROR))

build: $(BUILD)/build.ninja
	$(if $(WERROR),meson configure $(BUILD) -Dwerror=$(WERROR))
	ninja -C $(BUILD)

# Records the bundled program with call graphs, reports, annotates its
# hottest lines and writes an HTML report (scripts/demo).
# Builds only sonde and the demo program (not the tests and fixtures).
demo: build-deps $(BUILD)/build.ninja
	ninja -C $(BUILD) src/cli/sonde examples/demo
	./scripts/demo $(BUILD)

# CI: warnings are errors in every configuration; lint (clang-format and
# clang-tidy) first, as it fails fastest; the unit tests also run in a
# release (-O3) build and a clang build, where other warnings and other
# optimizations show.  docs/ARCHITECTURE.md, "Checks", lists them all.
check: deps
	$(MAKE) WERROR=true build
	$(MAKE) lint unit integration browser asan release clang fuzz agents

unit: build
	meson test -C $(BUILD) --print-errorlogs

integration: build
	SONDE_BUILD=$(abspath $(BUILD)) $(PYTHON) -m pytest -q -rs tests/integration

# Only the tests that boot Debian's kernel in QEMU (tests/vm; also in integration).
vm: build
	SONDE_BUILD=$(abspath $(BUILD)) $(PYTHON) -m pytest -q -rs tests/integration/test_vm.py

# sonde report --html in headless Chromium (tests/browser/cdp.py drives it).
browser: build
	SONDE_BUILD=$(abspath $(BUILD)) $(PYTHON) -m pytest -q -rs tests/browser

# Refreshes docs/report.png from the browser tests.
screenshot: build
	SONDE_DOCS_SCREENSHOT=1 SONDE_BUILD=$(abspath $(BUILD)) $(PYTHON) -m pytest -q tests/browser -k callers

$(ASAN)/build.ninja:
	meson setup $(ASAN) -Db_sanitize=address,undefined -Db_lundef=false -Dagent_static=false

asan: $(ASAN)/build.ninja
	ninja -C $(ASAN)
	UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 meson test -C $(ASAN) --print-errorlogs

$(RELEASE)/build.ninja:
	meson setup $(RELEASE) --buildtype=release -Dwerror=true

release: $(RELEASE)/build.ninja
	ninja -C $(RELEASE)
	meson test -C $(RELEASE) --print-errorlogs

$(CLANG)/build.ninja:
	CC=clang meson setup $(CLANG) -Dwerror=true

clang: $(CLANG)/build.ninja
	ninja -C $(CLANG)
	meson test -C $(CLANG) --print-errorlogs

$(FUZZ)/build.ninja:
	CC=clang meson setup $(FUZZ) -Dfuzz=true -Dtests=false

fuzz: $(FUZZ)/build.ninja
	ninja -C $(FUZZ)
	./tests/fuzz/run $(FUZZ) $(FUZZ_SECONDS)

# Static sonde-agent for x86_64 (glibc, musl), aarch64 and armhf, with sizes.
agents:
	./scripts/build-agent-cross build-agents

# Lint: every C file of src/ include/ tests/unit tests/fuzz as .clang-format
# writes it (scripts/check-format; scripts/check-format --fix rewrites
# them), and clang-tidy with .clang-tidy over the build's
# compile_commands.json, no finding allowed (scripts/check-tidy).
lint: format tidy

format:
	./scripts/check-format

tidy: build
	./scripts/check-tidy $(BUILD)

bench: build
	./bench/run-all $(BUILD)

clean:
	rm -rf $(BUILD) $(ASAN) $(RELEASE) $(CLANG) $(FUZZ) build-agents
