# xprofs: build, test, benchmark and demo.
#
#   make            build everything into $(BUILD)/
#   make demo       install missing Debian packages, build, mount a generated demo
#   make test       install, build, run every test, then again under ASan+UBSan
#   make bench      benchmark table (contrib/bench/bench.sh)
#   make fuzz       libFuzzer targets of the reader and of every tool (clang)
#   make attack     mutation campaign and HTTP attack, a few minutes (not in test)
#   make soak       64 readers for 10 minutes, RSS sampled and bounded (not in test)
#   make install PREFIX=/usr/local
#
# BUILD can be set to build several trees side by side (make BUILD=build-x).

BUILD    ?= build
PREFIX   ?= /usr/local
CC       ?= cc
OPT      ?= -O2
SANITIZE ?=
PYTEST   ?= pytest-3
JOBS     ?= $(shell nproc 2>/dev/null || echo 2)
# The end-to-end tests run on $(JOBS) pytest workers where pytest-xdist is
# installed (make deps installs it), else in one process.
PYTEST_WORKERS = $(shell /usr/bin/python3 -c 'import xdist' 2>/dev/null && echo '-n $(JOBS)')

DEB_PKGS = build-essential pkg-config libfuse3-dev fuse3 libprotobuf-c-dev \
           protobuf-c-compiler libcjson-dev zlib1g-dev libcmocka-dev \
           python3-pytest python3-protobuf protobuf-compiler jq clang \
           libmicrohttpd-dev bc time chromium libzstd-dev zstd python3-pytest-xdist \
           man-db groff-base libcurl4-openssl-dev libssl-dev npm libxlsxwriter-dev \
           python3-openpyxl slurm-wlm munge firefox-esr python3-pandas python3-tqdm \
           python3-tabulate python3-yaml

PKGS     = libprotobuf-c libcjson zlib libzstd libcurl libcrypto xlsxwriter
CPPFLAGS = -D_GNU_SOURCE -Isrc -I$(BUILD)/proto $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
WNO      = $(if $(findstring clang,$(CC)),,-Wno-format-truncation)
CFLAGS   = -std=gnu11 $(OPT) -g -Wall -Wextra -Werror $(WNO) -pthread $(SANITIZE)
LDFLAGS  = -pthread $(SANITIZE)
LIBS     = $(shell pkg-config --libs $(PKGS) 2>/dev/null) -lm
FUSE_CFLAGS = $(shell pkg-config --cflags fuse3 2>/dev/null)
FUSE_LIBS   = $(shell pkg-config --libs fuse3 2>/dev/null)

PROTOS      = $(wildcard proto/*.proto)
PROTO_C     = $(patsubst proto/%.proto,$(BUILD)/proto/%.pb-c.c,$(PROTOS))
PROTO_H     = $(PROTO_C:.c=.h)
CORE_DIRS   = base out remote reader session store hlo xplane op_stats memory trace tracelens tools agent vfs
CORE_SRC    = $(foreach d,$(CORE_DIRS),$(wildcard src/$(d)/*.c))
CORE_OBJ    = $(patsubst %.c,$(BUILD)/%.o,$(CORE_SRC)) $(PROTO_C:.c=.o)
FS_SRC      = $(wildcard src/fs/*.c)
CLI_SRC     = $(wildcard src/cli/*.c)
SYNTH_SRC   = $(wildcard contrib/synth/*.c)
UI_SRC      = $(wildcard ui-proxy/*.c)
UNIT_SRC    = $(wildcard tests/unit/test_*.c)
UNIT_BIN    = $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(UNIT_SRC))

LIB   = $(BUILD)/libxprofs.a
BINS  = $(BUILD)/xprofs-mount $(BUILD)/xprofs $(BUILD)/xprofs-synth $(BUILD)/xprofs-barewalk \
        $(BUILD)/xprofs-timeit $(BUILD)/xprofs-freshmem $(BUILD)/xprofs-model
ifneq ($(UI_SRC),)
BINS += $(BUILD)/xprofs-ui
endif

.PHONY: attack soak all deps demo test test-unit test-e2e test-asan test-clang check-layers bench bench-instr fuzz install uninstall clean format
.SECONDARY:

all: $(BINS) $(UNIT_BIN)

$(BUILD)/proto/%.pb-c.c $(BUILD)/proto/%.pb-c.h: proto/%.proto
	@mkdir -p $(dir $@)
	protoc-c --proto_path=proto --c_out=$(BUILD)/proto $<

$(BUILD)/proto/%.pb-c.o: $(BUILD)/proto/%.pb-c.c
	$(CC) $(CPPFLAGS) $(filter-out -Werror,$(CFLAGS)) -Wno-unused-parameter -c -o $@ $<

$(BUILD)/src/fs/%.o: src/fs/%.c $(PROTO_H)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(FUSE_CFLAGS) $(CFLAGS) -MMD -MP -c -o $@ $<

$(BUILD)/%.o: %.c $(PROTO_H)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -MMD -MP -c -o $@ $<

$(LIB): $(CORE_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/xprofs-mount: $(patsubst %.c,$(BUILD)/%.o,$(FS_SRC)) $(LIB)
	$(CC) $(LDFLAGS) -o $@ $^ $(FUSE_LIBS) $(LIBS)

$(BUILD)/xprofs: $(patsubst %.c,$(BUILD)/%.o,$(CLI_SRC)) $(LIB)
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS)

$(BUILD)/xprofs-synth: $(patsubst %.c,$(BUILD)/%.o,$(SYNTH_SRC))
	$(CC) $(LDFLAGS) -o $@ $^ -lz -lm

$(BUILD)/xprofs-barewalk: $(BUILD)/contrib/bench/barewalk.o
	$(CC) $(LDFLAGS) -o $@ $^

$(BUILD)/xprofs-timeit: $(BUILD)/contrib/bench/timeit.o
	$(CC) $(LDFLAGS) -o $@ $^

$(BUILD)/xprofs-freshmem: $(BUILD)/contrib/bench/freshmem.o
	$(CC) $(LDFLAGS) -o $@ $^

$(BUILD)/xprofs-model: $(BUILD)/contrib/bench/model.o $(LIB)
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS)

$(BUILD)/xprofs-ui: $(patsubst %.c,$(BUILD)/%.o,$(UI_SRC))
	$(CC) $(LDFLAGS) -o $@ $^ -lmicrohttpd -lz

$(BUILD)/tests/%: tests/unit/%.c $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -Wno-unused-parameter -o $@ $< $(LIB) $(LIBS) -lcmocka

# --- ui-proxy (issue 7): bundled page and object rules ----------------------
# The page in ui-proxy/static/ is embedded into xprofs-ui: embed.sh turns the
# files into a generated C file under $(BUILD). ui-proxy objects need no
# protobuf headers, so they get a rule of their own (a shorter stem wins).
UI_STATIC = $(sort $(wildcard ui-proxy/static/*))

$(BUILD)/ui-proxy/assets_data.c: ui-proxy/embed.sh $(UI_STATIC)
	@mkdir -p $(dir $@)
	sh ui-proxy/embed.sh $(UI_STATIC) > $@.tmp && mv $@.tmp $@

$(BUILD)/ui-proxy/assets_data.o: $(BUILD)/ui-proxy/assets_data.c ui-proxy/assets.h
	$(CC) $(CPPFLAGS) -Iui-proxy $(CFLAGS) -c -o $@ $<

$(BUILD)/ui-proxy/%.o: ui-proxy/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -MMD -MP -c -o $@ $<

$(BUILD)/xprofs-ui: $(BUILD)/ui-proxy/assets_data.o

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)

# --- Debian packages -------------------------------------------------------
deps:
	@missing=""; for p in $(DEB_PKGS); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'install ok installed' && continue; \
	  [ $$p = npm ] && command -v npm >/dev/null && continue; \
	  missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "installing:$$missing"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null || exit 1; \
	  else \
	    echo "missing Debian packages; run as root:"; \
	    echo "  apt-get install -y$$missing"; exit 1; \
	  fi; \
	fi
	@# s3rver, the S3-compatible server of test_remote_s3 (test only, from npm;
	@# an npm already on PATH, e.g. nodesource's nodejs, stands for Debian's).
	@test -x build/npm/node_modules/.bin/s3rver || \
	  npm install --prefix build/npm --no-audit --no-fund s3rver@3.7.1 >/dev/null 2>&1 || \
	  echo "s3rver not installed (npm registry unreachable?): test_remote_s3 will skip"

# --- tests -----------------------------------------------------------------
test: deps
	$(MAKE) check-layers
	$(MAKE) -j$(JOBS) all
	$(MAKE) test-unit
	$(MAKE) test-e2e
	$(MAKE) test-asan
	$(MAKE) test-clang

# The small fixed profiles of our generator, seeds of test_fuzz_tools.
TOOL_SEEDS = $(BUILD)/tests/tool-seeds
SEED_SCENARIOS = steps4 tpu tpu_sc tpu_raw inference tpu_dcn

$(TOOL_SEEDS)/.made: $(BUILD)/xprofs-synth
	@rm -rf $(TOOL_SEEDS) && mkdir -p $(TOOL_SEEDS)
	for s in $(SEED_SCENARIOS); do \
	  $(BUILD)/xprofs-synth --out $(TOOL_SEEDS)/logs --run $$s --scenario $$s >/dev/null && \
	  mv $(TOOL_SEEDS)/logs/plugins/profile/$$s/synth-host-0.xplane.pb $(TOOL_SEEDS)/$$s.xplane.pb || exit 1; \
	done
	rm -rf $(TOOL_SEEDS)/logs
	touch $@

# A file includes only its own folder and folders on lower layers
# (contrib/layers.sh holds the table; docs/design.md draws it).
check-layers:
	sh contrib/layers.sh --check

# Each unit test is a target of its own, so they run $(JOBS) at a time; -k
# runs them all even when one fails, -O keeps each one's output together.
test-unit: $(UNIT_BIN) $(TOOL_SEEDS)/.made
	@$(MAKE) -k -O -j$(JOBS) --no-print-directory $(UNIT_BIN:=.run)

$(BUILD)/tests/%.run: $(BUILD)/tests/% $(TOOL_SEEDS)/.made
	@echo "== $<"; XPROFS_TOOL_SEEDS=$(TOOL_SEEDS) $<

test-e2e: all
	XPROFS_BUILD=$(abspath $(BUILD)) XPROFS_UI_SCREENSHOTS=$(abspath $(BUILD))/ui-screenshots $(PYTEST) -q $(PYTEST_WORKERS) tests/e2e

test-asan:
	$(MAKE) -j$(JOBS) BUILD=build-asan OPT=-O1 SANITIZE="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined" all
	$(MAKE) BUILD=build-asan test-unit
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  XPROFS_BUILD=$(abspath build-asan) XPROFS_SANITIZED=1 XPROFS_UI_LOAD_SECONDS=5 \
	  $(PYTEST) -q $(PYTEST_WORKERS) tests/e2e

# clang's UBSan checks what gcc's lacks (pointer-overflow: arithmetic on
# NULL): the unit tests, fuzz regressions and tool seeds included, built
# with clang.
test-clang:
	$(MAKE) -j$(JOBS) BUILD=build-clang CC=clang OPT=-O1 SANITIZE="-fsanitize=undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer" build-clang/libxprofs.a build-clang/xprofs-synth $(patsubst $(BUILD)/%,build-clang/%,$(UNIT_BIN))
	UBSAN_OPTIONS=print_stacktrace=1 $(MAKE) BUILD=build-clang CC=clang test-unit

# --- demo ------------------------------------------------------------------
demo: deps all
	sh contrib/demo.sh $(BUILD)

# --- benchmark -------------------------------------------------------------
bench: all
	sh contrib/bench/bench.sh $(BUILD)

# Instructions (valgrind) instead of seconds: steady where times drift.
bench-instr: all
	sh contrib/bench/instructions.sh $(BUILD)

# --- fuzzing ---------------------------------------------------------------
fuzz:
	$(MAKE) BUILD=build-fuzz CC=clang OPT=-O1 SANITIZE="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined" build-fuzz/libxprofs.a
	for t in fuzz_reader fuzz_tools fuzz_ctrace fuzz_query fuzz_hlo; do \
	  clang $(CPPFLAGS:$(BUILD)/proto=build-fuzz/proto) -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	    -o build-fuzz/$$t tests/fuzz/$$t.c build-fuzz/libxprofs.a $(LIBS) || exit 1; \
	done
	clang -g -O1 -Wall -Wextra -o build-fuzz/write_ctrace_seeds tests/fuzz/write_ctrace_seeds.c
	mkdir -p build-fuzz/ctrace-seeds && build-fuzz/write_ctrace_seeds build-fuzz/ctrace-seeds
	@echo "run: mkdir -p /tmp/fuzz-work && build-fuzz/fuzz_reader -max_total_time=600 -max_len=4000000 /tmp/fuzz-work ../shared/corpus/*/plugins/profile/*/"
	@echo "     (fuzz_tools makes every tool of the input: same seeds, smaller -max_len;"
	@echo "      fuzz_ctrace every tool of a Chrome-trace run: seeds in build-fuzz/ctrace-seeds/;"
	@echo "      a first byte 0 or 1 picks h.trace.json or h.pt.trace.json, tests/fuzz/fuzz_run.h;"
	@echo "      fuzz_query file names with queries under a run of build/tests/tool-seeds/steps4.xplane.pb:"
	@echo "      seeds one a line in tests/fuzz/query-seeds.txt, after make test-unit;"
	@echo "      fuzz_hlo one HLO module: seeds ../shared/corpus/jax_conv_rocm/plugins/profile/*/*.hlo_proto.pb)"

# --- attack and soak (issue 37) -----------------------------------------------
# Loopback only, bounded, not part of `make test`. attack: every libFuzzer
# target for ATTACK_FUZZ_SECONDS on its seeds (failing inputs are kept in
# fuzz-failures/), then contrib/attack/http_attack.py (hostile queries for
# ATTACK_HTTP_SECONDS, traversal paths, 500 concurrent and 200 slow
# connections). soak: contrib/attack/soak.py. Each prints its figures.
ATTACK_FUZZ_SECONDS ?= 45
ATTACK_HTTP_SECONDS ?= 30
SOAK_SECONDS ?= 600
SOAK_READERS ?= 64

attack: all $(TOOL_SEEDS)/.made
	$(MAKE) fuzz
	sh contrib/attack/fuzz_campaign.sh build-fuzz $(TOOL_SEEDS) $(ATTACK_FUZZ_SECONDS); f=$$?; \
	/usr/bin/python3 contrib/attack/http_attack.py $(BUILD) $(ATTACK_HTTP_SECONDS); h=$$?; \
	test $$f -eq 0 && test $$h -eq 0

soak: all
	/usr/bin/python3 contrib/attack/soak.py $(BUILD) $(SOAK_SECONDS) $(SOAK_READERS)

# --- install ---------------------------------------------------------------
# Installs the user programs (not the bench tools nor xprofs-synth, which stay
# in $(BUILD)), their man pages and the systemd template units, whose
# /usr/local/bin paths are rewritten to $(bindir). The units are installed
# because they do nothing until an instance is enabled (xprofs@NAME.service,
# configured by /etc/xprofs/NAME.conf: contrib/systemd/example.conf), and
# $(PREFIX)/lib/systemd/system is on systemd's unit path for PREFIX /usr/local
# and /usr. install builds nothing: run make first (so `sudo make install`
# writes no root-owned objects into $(BUILD), and BUILD may be a directory
# holding only the programs). uninstall removes those files and no directory.
INSTALL_PROGS = xprofs xprofs-mount $(if $(UI_SRC),xprofs-ui)
INSTALL_MANS  = $(addsuffix .1,$(INSTALL_PROGS))
INSTALL_UNITS = xprofs@.service $(if $(UI_SRC),xprofs-ui@.service)
bindir  ?= $(PREFIX)/bin
man1dir ?= $(PREFIX)/share/man/man1
unitdir ?= $(PREFIX)/lib/systemd/system

install:
	@for p in $(INSTALL_PROGS); do \
	  test -x $(BUILD)/$$p || { echo "$(BUILD)/$$p missing: run make first" >&2; exit 1; }; \
	done
	install -d $(DESTDIR)$(bindir) $(DESTDIR)$(man1dir) $(DESTDIR)$(unitdir)
	install -m 755 $(addprefix $(BUILD)/,$(INSTALL_PROGS)) $(DESTDIR)$(bindir)/
	install -m 644 $(addprefix man/,$(INSTALL_MANS)) $(DESTDIR)$(man1dir)/
	for u in $(INSTALL_UNITS); do \
	  sed 's|/usr/local/bin/|$(bindir)/|g' contrib/systemd/$$u > $(DESTDIR)$(unitdir)/$$u && \
	  chmod 644 $(DESTDIR)$(unitdir)/$$u || exit 1; \
	done

uninstall:
	rm -f $(addprefix $(DESTDIR)$(bindir)/,$(INSTALL_PROGS))
	rm -f $(addprefix $(DESTDIR)$(man1dir)/,$(INSTALL_MANS))
	rm -f $(addprefix $(DESTDIR)$(unitdir)/,$(INSTALL_UNITS))

format:
	clang-format -i $$(git ls-files '*.c' '*.h')

clean:
	rm -rf build build-asan build-clang build-fuzz demo-logs
