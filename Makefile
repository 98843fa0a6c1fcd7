# A thin wrapper over CMake.  Every target installs the Debian packages
# first when any is missing.
BUILD     ?= build
BUILD_ASAN ?= build-asan
JOBS      ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_FLAGS ?=
DEB_PACKAGES = cmake make gcc pkg-config libsqlite3-dev libcsv-dev libcmocka-dev \
               libpcre2-dev libjansson-dev libssl-dev python3 libxlsxwriter-dev libzip-dev libexpat1-dev python3-openpyxl

.PHONY: deps build corpus test bench clean

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

bench: build
	@d=$$(mktemp -d) && ./$(BUILD)/vat build --root $$d >/dev/null && \
	  ./$(BUILD)/vat-bench --root $$d; rc=$$?; rm -rf $$d; exit $$rc

clean:
	rm -rf $(BUILD) $(BUILD_ASAN)
