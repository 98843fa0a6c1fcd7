# A thin wrapper over CMake.  Every target installs the Debian packages
# first when any is missing.
BUILD     ?= build
BUILD_ASAN ?= build-asan
JOBS      ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_FLAGS ?=
PREFIX    ?= /usr/local
DEB_PACKAGES = cmake make gcc pkg-config libsqlite3-dev libcsv-dev libcmocka-dev \
               libpcre2-dev libjansson-dev libssl-dev python3 python3-jsonschema python3-yaml \
               clang libclang-rt-14-dev libxlsxwriter-dev libzip-dev libexpat1-dev zlib1g-dev \
               python3-openpyxl parallel python3-setuptools python3-wheel python3-venv

.PHONY: deps build corpus test bench bench-build install clean

deps:
	@missing=""; for p in $(DEB_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "make deps: installing$$missing"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null || exit 1; \
	  else \
	    echo "make deps: missing packages; run as root:"; \
	    echo "  apt-get update && apt-get install -y$$missing"; exit 1; \
	  fi; \
	fi

build: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

corpus: build
	./$(BUILD)/vat build --config seeds.toml --root .

test: build
	@cmake -S . -B $(BUILD_ASAN) -DCMAKE_BUILD_TYPE=Debug -DVAT_SANITIZE=ON $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BUILD_ASAN) -j $(JOBS)
	cd $(BUILD_ASAN) && ctest --output-on-failure -j $(JOBS)
	@# What one SQL answer may cost in CPU seconds is asserted on the
	@# release build (the sanitizer build asserts work counts only).
	cd $(BUILD) && ctest --output-on-failure -R '^test_sql_bounds$$'

# One core, through the library, beside a plain-Python peer of the same
# checks (PYCHECK, bench/pycheck.py: json, re, sqlite3 as a user writes
# them); also opens a 10,000-task corpus (bench/seeds-10k.toml) and, when
# python/vat exists, times the Python package's score call and the SQL
# tool steps of the default corpus's expert transcripts through vat.Env
# beside a plain Python + sqlite3 loop making the same calls (PYENV,
# bench/pyenv.py).  Both sides are timed in CPU seconds.  Then the peak
# RSS and checks/s of scoring the 10,000 tasks' golds twice through one
# handle with a 16 MiB and the default 256 MiB cache, and the same of
# replaying their expert transcripts twice as episodes.
PYCHECK ?= bench/pycheck.py
PYENV ?= bench/pyenv.py
bench: build
	@d=$$(mktemp -d) && ./$(BUILD)/vat build --root $$d >/dev/null && \
	  ./$(BUILD)/vat build --config bench/seeds-10k.toml --root $$d/big >/dev/null && \
	  TMPDIR=$$d taskset -c 0 ./$(BUILD)/vat-bench --root $$d --pycheck $(PYCHECK) --big-root $$d/big \
	    --memory-root $$d/big \
	    $$(test -d python/vat && echo --pyvat python --libvat $(BUILD)/libvat.so) && \
	  { test ! -d python/vat || PYTHONPATH=python VAT_LIBRARY=$(BUILD)/libvat.so \
	    taskset -c 0 /usr/bin/python3 $(PYENV) $$d; }; \
	  rc=$$?; rm -rf $$d; exit $$rc

# vat's build beside a plain-Python pipeline of the same work (PYPEER,
# bench/pypeer.py), by CPU seconds, one job, against the ratios vat holds
# itself to; then tasks per CPU second for every template.
PYPEER ?= bench/pypeer.py
BENCH_N ?= 500
bench-build: build
	bench/vs_python.sh --vat $(BUILD)/vat --pypeer $(PYPEER) $(BENCH_N)

# The vat command, libvat (shared + static), include/libvat.h, vat.pc and
# the Python package; DESTDIR=/staging is honoured.
install: build
	cmake --install $(BUILD) --prefix $(PREFIX)

clean:
	rm -rf $(BUILD) $(BUILD_ASAN) build-fuzz
