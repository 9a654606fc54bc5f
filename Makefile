# fhook — function hooks for user-space processes, after the kernel's ftrace.
#
#   make            library (build/libfhook.so, build/libfhook.a) and build/fhook
#   make test       every test; ends with "N passed, N failed"
#   make demo       the redirect by caller on the bundled memcg example
#   make install PREFIX=/usr/local

CC      ?= cc
STRIP   ?= strip
PREFIX  ?= /usr/local
B       := build
SAN     ?=

# The architecture: lib/arch/$(ARCH)/ implements lib/arch/arch.h.  Another
# than this machine's cross-builds into build-$(ARCH)/ with the Debian cross
# compiler ($(ARCH)-linux-gnu-gcc), and `make ARCH=aarch64 test` runs the
# tests that apply under qemu-user (scripts/test-aarch64.sh).
HOST_ARCH := $(shell uname -m)
ARCH    ?= $(HOST_ARCH)
ifneq ($(ARCH),$(HOST_ARCH))
B       := build-$(ARCH)
ifeq ($(origin CC),default)
CC      := $(ARCH)-linux-gnu-gcc
endif
ifeq ($(origin CXX),default)
CXX     := $(ARCH)-linux-gnu-g++
endif
STRIP   := $(ARCH)-linux-gnu-strip
endif

CFLAGS_COMMON := -std=gnu11 -O2 -g -Wall -Wextra -Wno-unused-parameter \
		 -Iinclude -Ilib -Ilib/arch/$(ARCH) -fno-strict-aliasing $(SAN)
LIB_CFLAGS := $(CFLAGS_COMMON) -fPIC -fno-semantic-interposition -ftls-model=initial-exec \
	      -D_REENTRANT
# libelf: only for lib/events (the library reads its own ELF files itself)
LIB_LDLIBS := -lelf -lpthread -ldl

LIB_SRCS := \
	lib/util/tasks.c \
	lib/util/rcu.c \
	lib/util/sort.c \
	lib/util/libc.c \
	lib/kallsyms/elf.c \
	lib/kallsyms/objects.c \
	lib/kallsyms/kallsyms.c \
	lib/core/hash.c \
	lib/core/dispatch.c \
	lib/core/ops.c \
	lib/core/site_tally.c \
	lib/core/filter.c \
	lib/core/dlopen.c \
	lib/core/init.c \
	lib/core/sites.c \
	lib/core/modify.c \
	lib/core/libc_sym.c \
	lib/core/sigtrap_mask.c
LIB_ASM  :=
CLI_SRCS := cli/fhook.c cli/prepare.c cli/funcs.c cli/funcs_why.c cli/run.c cli/helper_thread.c
# The command builds in what it shares with the library (the ELF reader,
# the site classifier) and never loads libfhook itself.
# (an arch.mk adds what its decoders need, and kprobe_file.c)
CMD_SRCS := lib/kallsyms/elf.c lib/util/sort.c lib/util/libc.c lib/arch/$(ARCH)/insn.c \
	    lib/arch/$(ARCH)/kprobe_insn.c
# The libraries the command links in statically (layers add theirs, in link
# order): `fhook trace -p` starts on CPUs busy with the threads it is to
# trace, where mapping and relocating eight shared libraries was most of
# its own start-up (2.9 ms of CPU against 7.3).
CLI_STATIC := -lelf -lz
CLI_LDLIBS :=

.DEFAULT_GOAL := all

# Each layer may add its sources in its own fragment (LIB_SRCS += ...,
# LIB_ASM += ..., CLI_SRCS += ..., EXTRA_TARGETS += ...).
include lib/arch/$(ARCH)/arch.mk
include $(sort $(wildcard lib/*/*.mk cli/*.mk examples/*.mk tests/*.mk))

LIB_OBJS = $(LIB_SRCS:%.c=$(B)/%.o) $(LIB_ASM:%.S=$(B)/%.o)
# Library code the command links statically: what traced processes never need.
CMD_OBJS = $(CMD_SRCS:%.c=$(B)/cmd/%.o)
CLI_OBJS = $(CLI_SRCS:%.c=$(B)/%.o) $(CMD_OBJS)

HEADERS := $(wildcard include/fhook/*.h include/fhook/*/*.h include/fhook/*/*/*.h) $(wildcard lib/*/*.h lib/*/*/*.h)

all: $(B)/libfhook.so $(B)/libfhook.a $(B)/fhook $(ARCH_TARGETS) $(B)/fhook.pc $(EXTRA_TARGETS)

# The assembler front end `fhook cflags` gives GCC (cli/gcc_as.c).
# It decodes with the library's own code, so that what it proves is what
# the library would at registration.
GCC_AS_SRCS := cli/gcc_as.c cli/as_vecproof.c lib/util/libc.c lib/arch/$(ARCH)/cs.c lib/arch/$(ARCH)/vecfree.c
$(B)/gcc-as/as: $(GCC_AS_SRCS) $(HEADERS) cli/as_vecproof.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_COMMON) -Ilib -Iinclude -o $@ $(GCC_AS_SRCS) -lelf -ldl -lpthread

# Before the first compile: the build's packages are there, or say which are not.
$(B)/.deps-checked:
	@bash scripts/deps.sh --check
	@mkdir -p $(B) && touch $@

$(B)/lib/%.o: lib/%.c $(HEADERS) | $(B)/.deps-checked
	@mkdir -p $(dir $@)
	$(CC) $(LIB_CFLAGS) -c -o $@ $<

$(B)/lib/%.o: lib/%.S $(HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(LIB_CFLAGS) -c -o $@ $<

# Exports: lib/libfhook.map (the public headers' functions, and the C
# library functions libfhook interposes); everything else stays local.
# No DT_FINI: crti's _fini is an empty function at the far end of the
# text, a page every exiting process would fault in only to call it (the
# destructors are in .fini_array, next to the start-up code); -fini names
# a symbol that does not exist, and ld then writes no DT_FINI.
# The default -z separate-code stays: -z noseparate-code would save the
# loader two mmap() calls and a fault in every process, but would make the
# ELF headers and .rodata executable in every process fhook is loaded into.
$(B)/libfhook.so: $(LIB_OBJS) lib/libfhook.map lib/libfhook.ld
	$(CC) -shared $(SAN) -Wl,-soname,libfhook.so -Wl,-z,defs -Wl,-z,nodelete -Wl,-Bsymbolic-functions \
		-Wl,-fini=fhook_no_fini -Wl,-T,lib/libfhook.ld \
		-Wl,--version-script=lib/libfhook.map -o $@ $(LIB_OBJS) $(LIB_LDLIBS)

$(B)/libfhook.a: $(LIB_OBJS)
	rm -f $@ && ar rcs $@ $^

$(B)/cmd/lib/%.o: lib/%.c $(HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_COMMON) -c -o $@ $<

$(B)/cli/%.o: cli/%.c $(HEADERS) $(wildcard cli/*.h cli/*/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_COMMON) -c -o $@ $<

$(B)/fhook: $(CLI_OBJS) $(B)/libfhook.so
	$(CC) $(SAN) -o $@ $(CLI_OBJS) -Wl,-Bstatic $(CLI_STATIC) -Wl,-Bdynamic $(CLI_LDLIBS)

$(B)/fhook.pc: fhook.pc.in
	@mkdir -p $(B)
	sed -e 's|@PREFIX@|$(PREFIX)|g' $< > $@

install: all
	install -d $(DESTDIR)$(PREFIX)/lib $(DESTDIR)$(PREFIX)/include/fhook \
		$(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(PREFIX)/libexec/fhook
	install -m 0755 $(B)/libfhook.so $(DESTDIR)$(PREFIX)/lib/libfhook.so
	install -m 0644 $(B)/libfhook.a $(DESTDIR)$(PREFIX)/lib/
	install -m 0644 include/fhook/*.h $(DESTDIR)$(PREFIX)/include/fhook/
	install -d $(DESTDIR)$(PREFIX)/include/fhook/arch/$(ARCH)
	install -m 0644 include/fhook/arch/$(ARCH)/*.h $(DESTDIR)$(PREFIX)/include/fhook/arch/$(ARCH)/
	install -m 0755 $(B)/fhook $(DESTDIR)$(PREFIX)/bin/fhook
	$(if $(filter $(B)/gcc-as/as,$(ARCH_TARGETS)),install -m 0755 $(B)/gcc-as/as $(DESTDIR)$(PREFIX)/libexec/fhook/as)
	sed -e 's|@PREFIX@|$(PREFIX)|g' fhook.pc.in > $(DESTDIR)$(PREFIX)/lib/pkgconfig/fhook.pc

deps:
	@bash scripts/deps.sh

# deps first, then the build: with -j2 they must not run side by side
ifeq ($(ARCH),$(HOST_ARCH))
test:
	@bash scripts/deps.sh
	@$(MAKE) --no-print-directory all $(TEST_TARGETS)
	@bash tests/run.sh
else
test: test-$(ARCH)
endif

demo:
	@bash scripts/deps.sh
	@$(MAKE) --no-print-directory all
	@bash examples/demo.sh

# The kernel edition under QEMU (as root; installs QEMU and Debian's kernels).
kernel-test:
	$(MAKE) -C kernel test

# The library and the test programs built with sanitizers, and run; with the
# lock rules checked (FHOOK_DEBUG_LOCKS: lib/util/lockdep.h).
test-asan:
	@bash scripts/deps.sh
	$(MAKE) B=build/asan SAN="-fsanitize=address,undefined -fno-sanitize=alignment -fno-omit-frame-pointer -DFHOOK_DEBUG_LOCKS" \
		build/asan/libfhook.so $(subst $(B)/,build/asan/,$(TEST_TARGETS))
	FHOOK_BUILD=build/asan FHOOK_ONLY_PROGRAMS=1 \
		ASAN_OPTIONS=detect_leaks=1 LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
		bash tests/run.sh
	@# the fhook command itself (ptrace, attach) under the sanitizers, beside the plain
	@# libfhook.so that it loads into the processes it attaches to
	$(MAKE) all $(TEST_TARGETS)
	$(MAKE) B=build/asan SAN="-fsanitize=address,undefined -fno-sanitize=alignment -fno-omit-frame-pointer -DFHOOK_DEBUG_LOCKS" \
		build/asan/fhook
	mkdir -p build/asan-cli && cp build/asan/fhook build/asan-cli/fhook && \
		ln -sf ../libfhook.so build/asan-cli/libfhook.so
	FHOOK_CLI=$(CURDIR)/build/asan-cli/fhook FHOOK_ATTACH_SOAK_CYCLES=40 \
		ASAN_OPTIONS=detect_leaks=1 LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
		bash tests/run.sh attach/test_

test-tsan:
	@bash scripts/deps.sh
	$(MAKE) B=build/tsan SAN="-fsanitize=thread -DFHOOK_DEBUG_LOCKS" \
		build/tsan/libfhook.so $(subst $(B)/,build/tsan/,$(TEST_TARGETS))
	FHOOK_BUILD=build/tsan FHOOK_ONLY_PROGRAMS=1 \
		TSAN_OPTIONS="halt_on_error=1 suppressions=$(CURDIR)/tests/tsan.supp" \
		bash tests/run.sh

# for scripts: make -s print-LIB_OBJS
print-%:
	@echo $($*)

clean:
	rm -rf $(B)

.PHONY: all install deps test test-asan test-tsan demo kernel-test clean

# The aarch64 edition: cross-built into build-aarch64/ and tested under
# qemu-user (gcc-aarch64-linux-gnu, qemu-user-static, libelf-dev:arm64).
test-aarch64:
	@bash scripts/test-aarch64.sh

# ... and what needs a kernel running arm64 code (attach: ptrace), in a QEMU
# system VM booting Debian's arm64 kernel (qemu-system-arm, cpio; as root).
test-aarch64-vm:
	@bash scripts/vm-aarch64.sh
