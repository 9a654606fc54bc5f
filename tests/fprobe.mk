# fprobe's C++ test: exceptions thrown through hooked frames.
CXX ?= c++
FPROBE_CXXFLAGS := -std=gnu++17 -O2 -g -Wall -Iinclude $(FHOOK_SITE_CFLAGS) $(SAN)
TEST_TARGETS += $(B)/tests/fprobe/test_cxx_exceptions

$(B)/tests/fprobe/test_cxx_exceptions: tests/fprobe/test_cxx_exceptions.cc tests/fprobe/progs.h \
		tests/check.h $(B)/libfhook.so
	@mkdir -p $(dir $@)
	$(CXX) $(FPROBE_CXXFLAGS) -o $@ $< $(TEST_LDFLAGS)

# FPROBE_FL_EXIT_ON_UNWIND with C++ exceptions.
TEST_TARGETS += $(B)/tests/fprobe/test_exit_on_unwind_cxx

$(B)/tests/fprobe/test_exit_on_unwind_cxx: tests/fprobe/test_exit_on_unwind_cxx.cc \
		tests/fprobe/unwind_log.h tests/check.h $(B)/libfhook.so
	@mkdir -p $(dir $@)
	$(CXX) $(FPROBE_CXXFLAGS) -o $@ $< $(TEST_LDFLAGS)

# test_dlopen_glob's libraries: one traced (libfunc_*), one that takes the
# address the first was at.
TEST_TARGETS += $(B)/tests/fprobe/libdlprobe.so $(B)/tests/fprobe/libdlfiller.so
$(B)/tests/fprobe/test_dlopen_glob: $(B)/tests/fprobe/libdlprobe.so $(B)/tests/fprobe/libdlfiller.so

$(B)/tests/fprobe/libdlprobe.so: tests/fprobe/dlprobe.c
	@mkdir -p $(dir $@)
	$(CC) -O2 -g -fPIC -shared $(FHOOK_SITE_CFLAGS) $(SAN) -o $@ $<

$(B)/tests/fprobe/libdlfiller.so: tests/fprobe/dlfiller.c
	@mkdir -p $(dir $@)
	$(CC) -O2 -g -fPIC -shared $(SAN) -o $@ $<

# The same programs with handlers the assembler front end proves: every
# call and return the trampolines take goes through the frameless ones.
LEAN_PROGS := test_progs test_coroutines
TEST_TARGETS += $(LEAN_PROGS:%=$(B)/tests/fprobe/%_lean) $(B)/tests/fprobe/test_cxx_exceptions_lean

# The frameless paths' own test: its handlers proven the same way.
$(B)/tests/fprobe/test_graph_lean: tests/fprobe/test_graph_lean.c tests/fprobe/race.h tests/check.h \
		$(B)/libfhook.so $(B)/gcc-as/as
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -B$(CURDIR)/$(B)/gcc-as/ -o $@ $< $(TEST_LDFLAGS)

# Unwinding from a profiler's signal through the generated frameless paths (libgcc's unwinder).
TEST_TARGETS += $(B)/tests/fprobe/test_unwind_lean
$(B)/tests/fprobe/test_unwind_lean: tests/fprobe/test_unwind_lean.c tests/check.h tests/argregs.h \
		$(B)/libfhook.so $(B)/gcc-as/as
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -B$(CURDIR)/$(B)/gcc-as/ -o $@ $< $(TEST_LDFLAGS) -rdynamic -ldl

# A trampoline's kind against a later registration's: handlers proven the same way.
$(B)/tests/fprobe/test_graph_kind: tests/fprobe/test_graph_kind.c tests/check.h \
		$(B)/libfhook.so $(B)/gcc-as/as
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -B$(CURDIR)/$(B)/gcc-as/ -o $@ $< $(TEST_LDFLAGS)

$(LEAN_PROGS:%=$(B)/tests/fprobe/%_lean): $(B)/tests/fprobe/%_lean: tests/fprobe/%.c \
		tests/fprobe/progs.h tests/check.h $(B)/libfhook.so $(B)/gcc-as/as
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -DH_LEAN -B$(CURDIR)/$(B)/gcc-as/ -o $@ $< $(TEST_LDFLAGS)

$(B)/tests/fprobe/test_cxx_exceptions_lean: tests/fprobe/test_cxx_exceptions.cc \
		tests/fprobe/progs.h tests/check.h $(B)/libfhook.so $(B)/gcc-as/as
	@mkdir -p $(dir $@)
	$(CXX) $(FPROBE_CXXFLAGS) -DH_LEAN -B$(CURDIR)/$(B)/gcc-as/ -o $@ $< $(TEST_LDFLAGS)

$(B)/tests/fprobe/test_graph: tests/fprobe/race.h

# ... and built plainly, with no pool: through the trampolines that build a frame.
TEST_TARGETS += $(LEAN_PROGS:%=$(B)/tests/fprobe/%_framed) $(B)/tests/fprobe/test_cxx_exceptions_framed

$(LEAN_PROGS:%=$(B)/tests/fprobe/%_framed): $(B)/tests/fprobe/%_framed: tests/fprobe/%.c \
		tests/fprobe/progs.h tests/check.h $(B)/libfhook.so
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -DH_FRAMED -o $@ $< $(TEST_LDFLAGS)

$(B)/tests/fprobe/test_cxx_exceptions_framed: tests/fprobe/test_cxx_exceptions.cc \
		tests/fprobe/progs.h tests/check.h $(B)/libfhook.so
	@mkdir -p $(dir $@)
	$(CXX) $(FPROBE_CXXFLAGS) -DH_FRAMED -o $@ $< $(TEST_LDFLAGS)

# unregister_fprobe() under eight calling threads, also with handlers the
# assembler front end proves (the frameless paths and their generated copies).
TEST_TARGETS += $(B)/tests/fprobe/test_unregister_stress_lean
$(B)/tests/fprobe/test_unregister_stress_lean: tests/fprobe/test_unregister_stress.c tests/check.h \
		$(B)/libfhook.so $(B)/gcc-as/as
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -DH_LEAN -B$(CURDIR)/$(B)/gcc-as/ -o $@ $< $(TEST_LDFLAGS)

# test_rec_order.sh's program: threads, yields and a profiling signal.
TEST_TARGETS += $(B)/tests/fprobe/rec_order_prog
ifeq ($(ARCH),aarch64)
# ... and built with pointer authentication and BTI landing pads: the
# graph records' entry swaps a return address that paciasp then signs
TEST_TARGETS += $(B)/tests/fprobe/rec_order_prog_pac
$(B)/tests/fprobe/rec_order_prog: tests/fprobe/rec_order_prog.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O2 -g -Wall $(FHOOK_SITE_CFLAGS) $(SAN) -o $@ $< -lpthread

$(B)/tests/fprobe/rec_order_prog_pac: tests/fprobe/rec_order_prog.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O2 -g -Wall $(FHOOK_SITE_CFLAGS) -mbranch-protection=standard $(SAN) \
		-o $@ $< -lpthread
else
$(B)/tests/fprobe/rec_order_prog: tests/fprobe/rec_order_prog.c $(B)/gcc-as/as
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O2 -g -Wall -fpatchable-function-entry=5 -B$(CURDIR)/$(B)/gcc-as/ \
		$(SAN) -o $@ $< -lpthread
endif

# aarch64: programs built with pointer authentication and BTI landing pads
# (-mbranch-protection=standard): the sites after "bti c", and hooked
# returns whose addresses the functions sign (paciasp) with the stubs'.
ifeq ($(ARCH),aarch64)
FPROBE_PAC_PROGS := test_fprobe test_unwind_sampled test_progs test_exit_on_unwind \
		    test_coroutines test_graph test_unregister_stress
TEST_TARGETS += $(FPROBE_PAC_PROGS:%=$(B)/tests/fprobe/%_pac) \
		$(B)/tests/fprobe/test_cxx_exceptions_pac $(B)/tests/fprobe/test_exit_on_unwind_cxx_pac

$(FPROBE_PAC_PROGS:%=$(B)/tests/fprobe/%_pac): $(B)/tests/fprobe/%_pac: tests/fprobe/%.c \
		tests/check.h tests/fprobe/progs.h tests/fprobe/unwind_log.h tests/fprobe/race.h \
		$(B)/libfhook.so
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -mbranch-protection=standard -o $@ $< $(TEST_LDFLAGS)

$(B)/tests/fprobe/test_cxx_exceptions_pac: tests/fprobe/test_cxx_exceptions.cc \
		tests/fprobe/progs.h tests/check.h $(B)/libfhook.so
	@mkdir -p $(dir $@)
	$(CXX) $(FPROBE_CXXFLAGS) -mbranch-protection=standard -o $@ $< $(TEST_LDFLAGS)

FPROBE_PAC_FRAMED := test_progs test_coroutines
TEST_TARGETS += $(FPROBE_PAC_FRAMED:%=$(B)/tests/fprobe/%_framed_pac) \
		$(B)/tests/fprobe/test_cxx_exceptions_framed_pac
$(FPROBE_PAC_FRAMED:%=$(B)/tests/fprobe/%_framed_pac): $(B)/tests/fprobe/%_framed_pac: \
		tests/fprobe/%.c tests/check.h tests/fprobe/progs.h $(B)/libfhook.so
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -DH_FRAMED -mbranch-protection=standard -o $@ $< $(TEST_LDFLAGS)

$(B)/tests/fprobe/test_cxx_exceptions_framed_pac: tests/fprobe/test_cxx_exceptions.cc \
		tests/fprobe/progs.h tests/check.h $(B)/libfhook.so
	@mkdir -p $(dir $@)
	$(CXX) $(FPROBE_CXXFLAGS) -DH_FRAMED -mbranch-protection=standard -o $@ $< $(TEST_LDFLAGS)

# the dlopen program loads the libraries beside it: in pac/, built so too
TEST_TARGETS += $(B)/tests/fprobe/pac/test_dlopen_glob
$(B)/tests/fprobe/pac/test_dlopen_glob: tests/fprobe/test_dlopen_glob.c tests/check.h \
		$(B)/libfhook.so $(B)/tests/fprobe/pac/libdlprobe.so $(B)/tests/fprobe/pac/libdlfiller.so
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -mbranch-protection=standard -o $@ $< $(TEST_LDFLAGS)

$(B)/tests/fprobe/pac/libdlprobe.so: tests/fprobe/dlprobe.c
	@mkdir -p $(dir $@)
	$(CC) -O2 -g -fPIC -shared $(FHOOK_SITE_CFLAGS) -mbranch-protection=standard -o $@ $<

$(B)/tests/fprobe/pac/libdlfiller.so: tests/fprobe/dlfiller.c
	@mkdir -p $(dir $@)
	$(CC) -O2 -g -fPIC -shared -mbranch-protection=standard -o $@ $<

$(B)/tests/fprobe/test_exit_on_unwind_cxx_pac: tests/fprobe/test_exit_on_unwind_cxx.cc \
		tests/fprobe/unwind_log.h tests/check.h $(B)/libfhook.so
	@mkdir -p $(dir $@)
	$(CXX) $(FPROBE_CXXFLAGS) -mbranch-protection=standard -o $@ $< $(TEST_LDFLAGS)
endif
