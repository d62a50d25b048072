# posenc: one non-recursive Makefile. Objects in $(B)/, sanitizer objects in $(S)/.
#   make            build ./posenc, $(B)/libposenc.a and $(B)/libposenc.so
#   make demo       install missing packages, build, run gen + info on the bundled example
#   make test       install missing packages, build, run every unit test (in one run, then each
#                   alone) and every CLI script (CLI_JOBS at a time)
#   make check      the same tests under ASan+UBSan, plus a replay of the fuzz corpora
#   make fuzz       run each libFuzzer harness for FUZZ_SECONDS (clang)
#   make bench      posenc against the PyTorch/NumPy code users would write, the kernels
#                   against memcpy and llama.cpp's ggml_rope_ext
#   make install    PREFIX=/usr/local DESTDIR= (make uninstall with the same two removes it)
.SUFFIXES:

PREFIX    ?= /usr/local
DESTDIR   ?=
BINDIR    ?= $(PREFIX)/bin
LIBDIR    ?= $(PREFIX)/lib
INCDIR    ?= $(PREFIX)/include
MANDIR    ?= $(PREFIX)/share/man
PCDIR     ?= $(LIBDIR)/pkgconfig
VERSION   := $(shell sed -n 's/^\#define POSENC_VERSION "\(.*\)"/\1/p' include/posenc/posenc.h)
# libposenc.so.0.1.0 with soname libposenc.so.0 (the major of VERSION), plus the two links
SO_MAJOR  := $(firstword $(subst ., ,$(VERSION)))
SONAME    := libposenc.so.$(SO_MAJOR)
SO_REAL   := libposenc.so.$(VERSION)

CC        ?= cc
# B and S name the build directories; a second checkout or a parallel worker can use its own
# (make B=build-x S=build-x-san); the binary is ./posenc only for the default B=build.
B         ?= build
S         ?= build-san
BIN       := $(if $(filter build,$(B)),posenc,$(B)/posenc)
PKGS      := libcjson zlib hdf5
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null)
CMOCKA_LIBS := $(shell pkg-config --libs cmocka 2>/dev/null)
# tests/unit/testutil.c wraps cmocka's group runner: PE_TEST_LIST / PE_TEST_ONLY (tests/unit/alone.sh)
TEST_WRAP := -Wl,--wrap=_cmocka_run_group_tests
WARN      := -Wall -Wextra -Wpedantic -Wshadow -Wstrict-prototypes -Wmissing-prototypes
OPT       ?= -O2
CFLAGS    ?= $(OPT) -g
# POSENC_STATIC_LINKING_ONLY: the library, the program, the tests and the bench see the
# layout of the large structs (include/posenc/export.h); a program built elsewhere does not
# unless it asks.
ALL_CFLAGS := -std=c11 -D_GNU_SOURCE -DPOSENC_STATIC_LINKING_ONLY $(WARN) $(CFLAGS) $(EXTRA_CFLAGS) -Iinclude -I. $(PKG_CFLAGS) -MMD -MP
LDLIBS    := $(PKG_LIBS) -lpthread -lm

# lib/ and formats/ are folders by concern (lib/core, lib/model, ..., formats/files, ...): every
# .c file one level down is part of the library
LIB_SRC   := $(sort $(wildcard lib/*/*.c formats/*/*.c))
CMD_SRC   := $(sort $(wildcard cmd/*.c))
UNIT_SRC  := $(sort $(wildcard tests/unit/test_*.c))
FUZZ_SRC  := $(sort $(wildcard tests/fuzz/fuzz_*.c))

define objs
$(patsubst %.c,$(1)/%.o,$(2))
endef

LIB_OBJ   := $(call objs,$(B),$(LIB_SRC))
CMD_OBJ   := $(call objs,$(B),$(CMD_SRC))
# The shared library's objects: the same sources with -fPIC, in their own directory, so that
# libposenc.a and ./posenc are built exactly as before.
PIC_OBJ   := $(call objs,$(B)/pic,$(LIB_SRC))
UNIT_BIN  := $(patsubst tests/unit/%.c,$(B)/tests/%,$(UNIT_SRC))
SAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
SAN_LIB_OBJ := $(call objs,$(S),$(LIB_SRC))
SAN_CMD_OBJ := $(call objs,$(S),$(CMD_SRC))
SAN_UNIT_BIN := $(patsubst tests/unit/%.c,$(S)/tests/%,$(UNIT_SRC))
SAN_FUZZ_BIN := $(patsubst tests/fuzz/%.c,$(S)/fuzz/%,$(FUZZ_SRC))
FUZZ_BIN  := $(patsubst tests/fuzz/%.c,$(B)/fuzz/%,$(FUZZ_SRC))
FUZZ_SECONDS ?= 60

all: $(BIN) $(B)/libposenc.a $(B)/$(SO_REAL)

$(BIN): $(CMD_OBJ) $(B)/libposenc.a
	$(CC) $(ALL_CFLAGS) -o $@ $(CMD_OBJ) $(B)/libposenc.a $(LDLIBS)

# lib/encodings/rope_ggml.c reproduces ggml's portable CPU build, which has no FMA: never fuse
# a * b + c there (GCC's ISO C default, made explicit for every compiler and mode)
$(B)/lib/encodings/rope_ggml.o $(B)/pic/lib/encodings/rope_ggml.o $(S)/lib/encodings/rope_ggml.o: ALL_CFLAGS += -ffp-contract=off
# lib/core/kern.c, lib/core/kern_x86.c, lib/core/kern_neon.c: the dispatched kernels (AVX2,
# AVX-512 by target attributes, picked at run time by lib/core/cpu.c; NEON on aarch64) give the
# portable path's bits only with every product and sum rounded on its own
$(B)/lib/core/kern.o $(B)/pic/lib/core/kern.o $(S)/lib/core/kern.o $(B)/lib/core/kern_x86.o $(B)/pic/lib/core/kern_x86.o $(S)/lib/core/kern_x86.o: ALL_CFLAGS += -ffp-contract=off
$(B)/lib/core/kern_neon.o $(B)/pic/lib/core/kern_neon.o $(S)/lib/core/kern_neon.o: ALL_CFLAGS += -ffp-contract=off
# lib/verify/verify_kern.c, lib/verify/verify_x86.c: the element loop of posenc verify, portable
# and AVX2 (lib/verify/verify_kern.h), give the same bits under the same rule
$(B)/lib/verify/verify_kern.o $(B)/pic/lib/verify/verify_kern.o $(S)/lib/verify/verify_kern.o $(B)/lib/verify/verify_x86.o $(B)/pic/lib/verify/verify_x86.o $(S)/lib/verify/verify_x86.o: ALL_CFLAGS += -ffp-contract=off

$(B)/libposenc.a: $(LIB_OBJ)
	@mkdir -p $(@D)
	rm -f $@ && ar rcs $@ $(LIB_OBJ)

$(B)/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -c -o $@ $<

# ---- the verdict corpus' mutation check ----
# posenc with the verdict's bound scaled by 0.5 and by 2 (lib/verify/verify.c PE_BOUND_SCALE),
# built from the same objects but lib/verify/verify.c: tests/cli/t_verdict_corpus.sh must catch both.
MUT_OBJ := $(filter-out $(B)/lib/verify/verify.o,$(LIB_OBJ)) $(CMD_OBJ)
$(B)/mut-%/verify.o: lib/verify/verify.c
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -DPE_BOUND_SCALE=$* -c -o $@ $<
$(B)/mut-%/posenc: $(B)/mut-%/verify.o $(MUT_OBJ)
	$(CC) $(ALL_CFLAGS) -o $@ $^ $(LDLIBS)
mutants: $(B)/mut-0.5/posenc $(B)/mut-2/posenc

# ---- shared library ----
# -fvisibility=hidden: libposenc.so exports exactly the functions the public headers mark
# POSENC_API (include/posenc/export.h); the internal pe_* functions that cmd/ and the tests
# take from libposenc.a stay local. No version script: visibility decides alone, and the
# soname is the ABI's version. -fno-semantic-interposition lets calls inside a file be
# inlined as in the static build. -z defs: every dependency is on the link line, so plain
# `pkg-config --libs posenc` suffices.
$(B)/pic/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -fPIC -fvisibility=hidden -fno-semantic-interposition -c -o $@ $<

$(B)/$(SO_REAL): $(PIC_OBJ)
	$(CC) $(ALL_CFLAGS) -shared -Wl,-soname,$(SONAME) -Wl,-z,defs -o $@ $(PIC_OBJ) $(LDLIBS)
	ln -sf $(SO_REAL) $(B)/$(SONAME) && ln -sf $(SONAME) $(B)/libposenc.so

# every unit test links tests/unit/testutil.c (scratch directory, files, Python snippets)
$(B)/tests/testutil.o: tests/unit/testutil.c tests/unit/testutil.h
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -Itests/unit -c -o $@ $<

$(B)/tests/%: tests/unit/%.c $(B)/tests/testutil.o $(B)/libposenc.a tests/unit/testutil.h
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -Itests/unit -o $@ $< $(B)/tests/testutil.o $(B)/libposenc.a $(TEST_WRAP) $(CMOCKA_LIBS) $(LDLIBS)

# ---- sanitizers ----
$(S)/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(SAN_FLAGS) -c -o $@ $<

$(S)/libposenc.a: $(SAN_LIB_OBJ)
	rm -f $@ && ar rcs $@ $(SAN_LIB_OBJ)

$(S)/posenc: $(SAN_CMD_OBJ) $(S)/libposenc.a
	$(CC) $(ALL_CFLAGS) $(SAN_FLAGS) -o $@ $(SAN_CMD_OBJ) $(S)/libposenc.a $(LDLIBS)

$(S)/tests/testutil.o: tests/unit/testutil.c tests/unit/testutil.h
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(SAN_FLAGS) -Itests/unit -c -o $@ $<

$(S)/tests/%: tests/unit/%.c $(S)/tests/testutil.o $(S)/libposenc.a tests/unit/testutil.h
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(SAN_FLAGS) -Itests/unit -o $@ $< $(S)/tests/testutil.o $(S)/libposenc.a $(TEST_WRAP) $(CMOCKA_LIBS) $(LDLIBS)

# the option parser's harness links the commands' tables (every cmd/ file but main's)
FUZZ_CMD_SRC := $(filter-out cmd/posenc.c,$(CMD_SRC))
$(S)/fuzz/fuzz_opts: tests/fuzz/fuzz_opts.c tests/fuzz/replay_main.c $(FUZZ_CMD_SRC) $(S)/libposenc.a
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(SAN_FLAGS) -o $@ $< tests/fuzz/replay_main.c $(FUZZ_CMD_SRC) $(S)/libposenc.a $(LDLIBS)

$(S)/fuzz/%: tests/fuzz/%.c tests/fuzz/replay_main.c tests/fuzz/fuzzutil.h tests/fuzz/fuzzbig.h $(S)/libposenc.a
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(SAN_FLAGS) -o $@ $< tests/fuzz/replay_main.c $(S)/libposenc.a $(LDLIBS)

# ---- libFuzzer (clang) ----
# A harness passes its own libFuzzer options (say, a larger -max_len for a format whose inputs
# need the room) in a line "/* fuzz-options: ... */" of its source; make fuzz reads it.
FUZZ_CC   ?= clang
FUZZ_FLAGS := -std=c11 -D_GNU_SOURCE -DPOSENC_STATIC_LINKING_ONLY -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -Iinclude -I. $(PKG_CFLAGS)
$(B)/fuzz/fuzz_opts: tests/fuzz/fuzz_opts.c $(FUZZ_CMD_SRC) $(LIB_SRC)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_FLAGS) -o $@ $< $(FUZZ_CMD_SRC) $(LIB_SRC) $(LDLIBS)

$(B)/fuzz/%: tests/fuzz/%.c tests/fuzz/fuzzutil.h tests/fuzz/fuzzbig.h $(LIB_SRC)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_FLAGS) -o $@ $< $(LIB_SRC) $(LDLIBS)

# ---- convenience targets ----
deps:
	@sh .ci/deps.sh build

test-deps:
	@sh .ci/deps.sh build test

unit: $(UNIT_BIN)
	@fail=0; for t in $(UNIT_BIN); do $$t || fail=1; done; exit $$fail

cli: $(BIN)
	@sh tests/cli/run.sh ./$(BIN)

test: test-deps
	@$(MAKE) --no-print-directory all $(UNIT_BIN) mutants
	@fail=0; for t in $(UNIT_BIN); do $$t || fail=1; done; \
	sh tests/unit/alone.sh $(UNIT_BIN) || fail=1; \
	sh tests/cli/run.sh ./$(BIN) || fail=1; exit $$fail

check: test-deps
	@$(MAKE) --no-print-directory $(S)/posenc $(SAN_UNIT_BIN) $(SAN_FUZZ_BIN)
	@fail=0; export ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 POSENC_FUZZ_BIG=1; \
	for t in $(SAN_UNIT_BIN); do $$t || fail=1; done; \
	for f in $(SAN_FUZZ_BIN); do n=$$(basename $$f); \
	  $$f tests/fuzz/corpus/$${n#fuzz_} || fail=1; done; \
	sh tests/cli/run.sh ./$(S)/posenc || fail=1; exit $$fail

fuzz: $(FUZZ_BIN)
	@sh .ci/deps.sh fuzz
	@for f in $(FUZZ_BIN); do n=$$(basename $$f); mkdir -p $(B)/fuzz/corpus-$${n#fuzz_}; \
	  opts=$$(sed -n 's,^/\* fuzz-options: \(.*\) \*/$$,\1,p' tests/fuzz/$$n.c); \
	  echo "== $$n ($(FUZZ_SECONDS) s$${opts:+, $$opts})"; \
	  $$f -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 $$opts $(B)/fuzz/corpus-$${n#fuzz_} tests/fuzz/corpus/$${n#fuzz_} 2>&1 | \
	  grep -E 'stat::number_of_executed_units|ERROR|runtime error|crash-' ; done

# bench/b_kernels.c: the kernels in memory; with ggml's headers (tests/interop/fetch.sh src)
# it also times ggml_rope_ext, loading the prebuilt libraries with dlopen at run time
GGML_INC  := $(B)/gguf-cache/llama.cpp/ggml/include
$(B)/bench/b_kernels: bench/b_kernels.c $(B)/libposenc.a $(wildcard $(GGML_INC)/ggml.h)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(if $(wildcard $(GGML_INC)/ggml.h),-DHAVE_GGML -isystem $(GGML_INC)) \
	  -o $@ $< $(B)/libposenc.a $(LDLIBS) -ldl

bench: all
	@sh .ci/deps.sh build bench
	@sh tests/interop/fetch.sh src > /dev/null || true
	@sh tests/interop/fetch.sh libs > /dev/null || true
	@$(MAKE) --no-print-directory $(B)/bench/b_kernels
	@B_KERNELS=$(CURDIR)/$(B)/bench/b_kernels sh bench/run.sh ./$(BIN)

# examples/capture_llama.c: llama.cpp's q/k before and after RoPE, for posenc verify; not part
# of posenc. LLAMA_DIR is a llama.cpp tree (include/llama.h, ggml/include/); LLAMA_LIBDIR holds
# its libllama and libggml* (a CMake build's build/bin by default). The pieces
# tests/interop/fetch.sh takes from npm: LLAMA_DIR=$$(sh tests/interop/fetch.sh src)
# LLAMA_LIBDIR=$$(sh tests/interop/fetch.sh libs) (libllama.v0.4.0.so there: found by the wildcard).
LLAMA_DIR    ?=
LLAMA_LIBDIR ?= $(LLAMA_DIR)/build/bin
LLAMA_SO      = $(firstword $(wildcard $(LLAMA_LIBDIR)/libllama.so $(LLAMA_LIBDIR)/libllama.v*.so))
GGML_SO       = $(firstword $(wildcard $(LLAMA_LIBDIR)/libggml.so $(LLAMA_LIBDIR)/libggml.v*.so))
capture-llama: $(B)/capture-llama
$(B)/capture-llama: examples/capture_llama.c FORCE
	@test -n "$(LLAMA_DIR)" -a -f "$(LLAMA_DIR)/include/llama.h" || \
	  { echo "make capture-llama: give LLAMA_DIR=<llama.cpp tree with include/llama.h>" >&2; exit 2; }
	@test -n "$(LLAMA_SO)" -a -n "$(GGML_SO)" || \
	  { echo "make capture-llama: no libllama/libggml in '$(LLAMA_LIBDIR)': give LLAMA_LIBDIR" >&2; exit 2; }
	@mkdir -p $(@D)
	$(CC) -std=c11 -D_GNU_SOURCE $(WARN) $(CFLAGS) $(EXTRA_CFLAGS) -isystem $(LLAMA_DIR)/include \
	  -isystem $(LLAMA_DIR)/ggml/include -o $@ $< $(LLAMA_SO) $(GGML_SO) \
	  $(LLAMA_LIBDIR)/libggml-base.so -Wl,-rpath,$(abspath $(LLAMA_LIBDIR))

demo: deps
	@$(MAKE) --no-print-directory all
	./$(BIN) gen --config examples/qwen3.5-27b.json -o qwen3.5-rope.npz
	./$(BIN) ls qwen3.5-rope.npz
	./$(BIN) info --config examples/qwen3.5-27b.json

# posenc.pc: plain --libs links libposenc.so (which records its own dependencies);
# --static --libs adds what libposenc.a needs. libdir and includedir are written relative to
# ${prefix} when they lie under PREFIX, so pkg-config --define-prefix can relocate the tree.
# Rewritten on every install: PREFIX is not a file make could compare dates with.
PC_LIBDIR := $(patsubst $(PREFIX)/%,$${prefix}/%,$(LIBDIR))
PC_INCDIR := $(patsubst $(PREFIX)/%,$${prefix}/%,$(INCDIR))
$(B)/posenc.pc: FORCE
	@mkdir -p $(@D)
	printf 'prefix=%s\nlibdir=%s\nincludedir=%s\n\nName: posenc\nDescription: Transformer positional encodings\nVersion: %s\nRequires.private: %s\nLibs: -L$${libdir} -lposenc\nLibs.private: -lpthread -lm\nCflags: -I$${includedir}\n' \
	  '$(PREFIX)' '$(PC_LIBDIR)' '$(PC_INCDIR)' '$(VERSION)' '$(PKGS)' > $@

install: all $(B)/posenc.pc
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCDIR)/posenc \
	  $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man3 $(DESTDIR)$(MANDIR)/man5 $(DESTDIR)$(PCDIR)
	install -m 755 $(BIN) $(DESTDIR)$(BINDIR)/posenc
	install -m 644 $(B)/libposenc.a $(DESTDIR)$(LIBDIR)/libposenc.a
	install -m 755 $(B)/$(SO_REAL) $(DESTDIR)$(LIBDIR)/$(SO_REAL)
	ln -sf $(SO_REAL) $(DESTDIR)$(LIBDIR)/$(SONAME)
	ln -sf $(SONAME) $(DESTDIR)$(LIBDIR)/libposenc.so
	install -m 644 include/posenc/*.h $(DESTDIR)$(INCDIR)/posenc/
	install -m 644 man/*.1 $(DESTDIR)$(MANDIR)/man1/
	install -m 644 man/*.3 $(DESTDIR)$(MANDIR)/man3/
	install -m 644 man/*.5 $(DESTDIR)$(MANDIR)/man5/
	install -m 644 $(B)/posenc.pc $(DESTDIR)$(PCDIR)/posenc.pc

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/posenc $(DESTDIR)$(LIBDIR)/libposenc.a $(DESTDIR)$(PCDIR)/posenc.pc
	rm -f $(DESTDIR)$(LIBDIR)/libposenc.so $(DESTDIR)$(LIBDIR)/$(SONAME) $(DESTDIR)$(LIBDIR)/$(SO_REAL)
	rm -rf $(DESTDIR)$(INCDIR)/posenc
	for m in man/*.1; do rm -f $(DESTDIR)$(MANDIR)/man1/$$(basename $$m); done
	for m in man/*.3; do rm -f $(DESTDIR)$(MANDIR)/man3/$$(basename $$m); done
	for m in man/*.5; do rm -f $(DESTDIR)$(MANDIR)/man5/$$(basename $$m); done

clean:
	rm -rf build build-san posenc posenc.pc

.PHONY: all deps test-deps unit cli test check fuzz bench demo install uninstall clean capture-llama FORCE
FORCE:
.SECONDARY:

-include $(shell find $(B) $(S) -name '*.d' 2>/dev/null)
